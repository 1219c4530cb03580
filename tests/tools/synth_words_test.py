"""Tests for aster/tools/synth_words.py (aster-synth-words)."""

import io
import json
import os

import pytest
from PIL import Image

from aster.tools import fonts, synth_words
from aster.tools.word_list import WORDS


@pytest.fixture(scope="module")
def machine_fonts():
    try:
        return fonts.find_fonts()
    except fonts.NoFontsError:
        pytest.skip("no usable fonts on this machine")


@pytest.fixture(scope="module")
def generated(tmp_path_factory, machine_fonts):
    """Both splits rendered once with 2 workers (shared by the tests below)."""
    out = tmp_path_factory.mktemp("synth")
    code = synth_words.main(["--output_dir", str(out), "--num_train", "300", "--num_val", "200",
                             "--num_shards", "2", "--num_workers", "2", "--seed", "3"])
    assert code == 0
    return out


def _records(read_records, pattern):
    records = read_records(pattern)
    for record in records:
        record["font"] = record["filename"].rsplit("/", 1)[1]
    return records


def test_word_list_is_large_lowercase_and_unique():
    assert len(WORDS) >= 2000 and len(set(WORDS)) == len(WORDS)
    assert all(w.isalpha() and w.islower() and w.isascii() for w in WORDS)


def test_word_split_holds_out_about_a_tenth_case_insensitively():
    val = [w for w in WORDS if synth_words.word_split(w) == "val"]
    assert 0.05 * len(WORDS) < len(val) < 0.15 * len(WORDS)
    assert synth_words.word_split("Hello") == synth_words.word_split("HELLO")


def test_splits_share_no_word_font_or_triple(generated, read_records):
    train = _records(read_records, str(generated / "train-*-of-00002.tfrecord"))
    val = _records(read_records, str(generated / "val.tfrecord"))
    assert (len(train), len(val)) == (300, 200)
    train_words = {r["transcript"].lower() for r in train}
    assert not train_words & {r["transcript"].lower() for r in val}
    assert not {r["font"] for r in train} & {r["font"] for r in val}
    assert len({r["filename"] for r in train + val}) == 500
    assert all(synth_words.word_split(r["transcript"]) == "val" for r in val)
    manifest = json.loads((generated / "val_manifest.json").read_text())
    train_manifest = json.loads((generated / "train_manifest.json").read_text())
    assert not set(manifest["fonts"]) & set(train_manifest["fonts"])
    assert manifest["num_images"] == 200 and manifest["images_per_second"] > 0


def test_images_have_configured_size(generated, read_records):
    for record in read_records(str(generated / "val.tfrecord"))[:20]:
        image = Image.open(io.BytesIO(record["image"]))
        assert image.size == (100, 32) and (record["width"], record["height"]) == (100, 32)
        assert record["format"] == "png" and 1 <= len(record["transcript"]) <= 12


def test_output_does_not_depend_on_workers(generated, tmp_path):
    code = synth_words.main(["--output_dir", str(tmp_path), "--split", "val", "--num_val", "200",
                             "--num_workers", "1", "--seed", "3"])
    assert code == 0
    assert (tmp_path / "val.tfrecord").read_bytes() == (generated / "val.tfrecord").read_bytes()
    assert not os.path.exists(tmp_path / "train-00000-of-00002.tfrecord")


def test_other_seed_gives_other_images(generated, tmp_path):
    synth_words.main(["--output_dir", str(tmp_path), "--split", "val", "--num_val", "20",
                      "--num_workers", "1", "--seed", "4"])
    assert (tmp_path / "val.tfrecord").read_bytes() != (generated / "val.tfrecord").read_bytes()


def test_shared_vocabulary_mode_still_separates_seeds(machine_fonts):
    plans, note = synth_words.make_plans(machine_fonts, val_disjoint="none")
    assert plans["train"].words == plans["val"].words and "share" in note
    first = synth_words.render_one(plans["train"], 0)
    assert first != synth_words.render_one(plans["val"], 0)


def test_keep_aspect_and_named_heldout_family(machine_fonts, tmp_path, read_records):
    families = sorted(fonts.group_by_family(machine_fonts))
    if len(families) < 2:
        pytest.skip("needs two font families")
    code = synth_words.main(["--output_dir", str(tmp_path), "--split", "val", "--num_val", "10",
                             "--num_workers", "1", "--keep_aspect", "--height", "64",
                             "--width", "256", "--heldout_font_families", families[0]])
    assert code == 0
    manifest = json.loads((tmp_path / "val_manifest.json").read_text())
    assert list(manifest["fonts"]) == [families[0]]
    assert all(r["height"] == 64 and 64 <= r["width"] <= 256
               for r in read_records(str(tmp_path / "val.tfrecord")))


def test_help_exits_0(capsys):
    with pytest.raises(SystemExit) as exit_info:
        synth_words.main(["--help"])
    assert exit_info.value.code == 0 and "--heldout_font_families" in capsys.readouterr().out


def test_list_fonts_prints_families(machine_fonts, tmp_path, capsys):
    assert synth_words.main(["--output_dir", str(tmp_path), "--list_fonts"]) == 0
    out = capsys.readouterr().out
    assert machine_fonts[0].family in out and "usable fonts" in out
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("argv, message", [
    (["--heldout_font_families", "No Such Family"], "not found"),
    (["--height", "4"], "--height/--width"),
    (["--random_fraction", "2"], "random_fraction"),
    (["--fonts", "/nonexistent/font.ttf"], "no usable font"),
])
def test_bad_settings_return_2_with_message(machine_fonts, tmp_path, capsys, argv, message):
    assert synth_words.main(["--output_dir", str(tmp_path), "--num_train", "1", *argv]) == 2
    assert message in capsys.readouterr().err


def test_make_plans_unknown_mode_raises(machine_fonts):
    with pytest.raises(ValueError, match="val_disjoint"):
        synth_words.make_plans(machine_fonts, val_disjoint="some")
