"""Tests for aster/synth/generator.py (aster-synth-words)."""

import dataclasses
import io
import json
import os

import numpy as np
import pytest
from PIL import Image

from aster.synth import fonts, generator, vocabulary

SPLIT_FILES = {"train": "train-*-of-00002.tfrecord", "val": "val.tfrecord",
               "val_ood_straight": "val_ood_straight.tfrecord",
               "val_ood_curved": "val_ood_curved.tfrecord"}


@pytest.fixture(scope="module")
def generated(tmp_path_factory, machine_fonts):
    """Every split rendered once with 2 workers (shared by the tests below)."""
    out = tmp_path_factory.mktemp("synth")
    code = generator.main(["--output_dir", str(out), "--num_train", "300", "--num_val", "100",
                             "--num_val_ood", "100", "--num_shards", "2", "--num_workers", "2",
                             "--seed", "3"])
    assert code == 0
    return out


def _records(read_records, directory, split):
    records = read_records(str(directory / SPLIT_FILES[split]))
    for record in records:
        record["font"] = record["filename"].rsplit("/", 1)[1]
    return records


def test_splits_share_no_word_or_font_family(generated, read_records, machine_fonts):
    if len(fonts.group_by_family(machine_fonts)) < 2:
        pytest.skip("needs two font families")
    records = {split: _records(read_records, generated, split) for split in SPLIT_FILES}
    assert [len(records[s]) for s in SPLIT_FILES] == [300, 100, 50, 50]
    manifests = {s: json.loads((generated / f"{s}_manifest.json").read_text())
                 for s in SPLIT_FILES}
    groups = {"train": ["train"], "val": ["val"], "val_ood": ["val_ood_straight",
                                                              "val_ood_curved"]}
    # Single characters are in every split (vocabulary.in_split); longer texts in one.
    words = {g: {r["transcript"].lower() for s in ss for r in records[s]
                 if len(r["transcript"]) > 1}
             for g, ss in groups.items()}
    families = {g: {f for s in ss for f in manifests[s]["fonts"]} for g, ss in groups.items()}
    three_way = len(fonts.group_by_family(machine_fonts)) >= 3  # else val and val_ood share
    for a, b in (("train", "val"), ("train", "val_ood"), ("val", "val_ood")):
        assert not words[a] & words[b], (a, b)
        assert not families[a] & families[b] or (b == "val_ood" and not three_way), (a, b)
    for group, texts in words.items():
        assert all(vocabulary.text_split(t) == group for t in texts)
    assert len({r["filename"] for s in SPLIT_FILES for r in records[s]}) == 500


def test_manifest_states_words_lengths_fonts_and_speed(generated):
    manifest = json.loads((generated / "train_manifest.json").read_text())
    assert manifest["num_images"] == 300 and manifest["images_per_second"] > 0
    assert manifest["num_words"] > 50000 and "english-words" in manifest["words"]
    assert sum(manifest["text_length_histogram"].values()) == 300
    assert sum(manifest["word_length_histogram"].values()) == manifest["num_words"]
    assert manifest["num_fonts"] == sum(len(p) for p in manifest["fonts"].values())
    assert manifest["style"]["curve_prob"] == pytest.approx(0.35)
    assert manifest["style"]["min_legibility"] == pytest.approx(1.5)
    assert 0 <= manifest["illegible_redraws"] < 300
    combined = json.loads((generated / "manifest.json").read_text())
    assert set(combined["splits"]) == set(SPLIT_FILES)


def test_ood_halves_are_curved_and_straight(generated):
    curved = json.loads((generated / "val_ood_curved_manifest.json").read_text())
    straight = json.loads((generated / "val_ood_straight_manifest.json").read_text())
    assert "none" not in curved["curves"] and sum(curved["curves"].values()) == 50
    assert straight["curves"] == {"none": 50}
    assert not {"fibres", "wood"} & set(
        json.loads((generated / "train_manifest.json").read_text())["backgrounds"])
    assert set(curved["backgrounds"]) <= {"fibres", "wood"}


def test_images_have_configured_size_and_keypoints(generated, read_records):
    for record in read_records(str(generated / "val.tfrecord"))[:20]:
        image = Image.open(io.BytesIO(record["image"]))
        assert image.size == (100, 32) and (record["width"], record["height"]) == (100, 32)
        assert record["format"] == "png" and 1 <= len(record["transcript"]) <= 16
        assert len(record["keypoints"]) == 40


def test_output_does_not_depend_on_workers(generated, tmp_path):
    code = generator.main(["--output_dir", str(tmp_path), "--split", "val", "--num_val", "100",
                             "--num_workers", "1", "--seed", "3"])
    assert code == 0
    assert (tmp_path / "val.tfrecord").read_bytes() == (generated / "val.tfrecord").read_bytes()
    assert not os.path.exists(tmp_path / "train-00000-of-00002.tfrecord")


def test_other_seed_gives_other_images(generated, tmp_path):
    generator.main(["--output_dir", str(tmp_path), "--split", "val", "--num_val", "20",
                      "--num_workers", "1", "--seed", "4"])
    assert (tmp_path / "val.tfrecord").read_bytes() != (generated / "val.tfrecord").read_bytes()


def test_min_legibility_0_turns_the_check_off_in_every_split(generated, tmp_path):
    """The flag reaches the OOD style too: nothing is drawn again."""
    code = generator.main(["--output_dir", str(tmp_path), "--split", "val_ood",
                             "--num_val_ood", "100", "--num_workers", "1", "--seed", "3",
                             "--min_legibility", "0"])
    assert code == 0
    manifest = json.loads((tmp_path / "val_ood_curved_manifest.json").read_text())
    assert manifest["style"]["min_legibility"] == 0 and manifest["illegible_redraws"] == 0
    floor = json.loads((generated / "val_ood_curved_manifest.json").read_text())
    assert floor["style"]["min_legibility"] == pytest.approx(1.5)


def test_shared_mode_still_separates_seeds(machine_fonts):
    plans, note = generator.make_plans(machine_fonts, val_disjoint="none")
    assert plans["train"].vocabulary.by_length == plans["val"].vocabulary.by_length
    assert "share" in note
    first = generator.render_one(plans["train"], 0)
    assert first[0].png != generator.render_one(plans["val"], 0)[0].png


def test_a_font_missing_a_character_is_never_used_for_it(machine_fonts):
    plans, _ = generator.make_plans(machine_fonts[:8], val_disjoint="none")
    good = machine_fonts[0]
    no_digits = dataclasses.replace(machine_fonts[1], chars=frozenset("abcdefghijklmnopqrstuvwxyz"
                                                                     "ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
    plan = dataclasses.replace(plans["train"], families=(("A", (no_digits,)), ("B", (good,))),
                               vocabulary=dataclasses.replace(plans["train"].vocabulary,
                                                              random_fraction=1.0))
    skips, digits = 0, 0
    for index in range(60):
        rng = np.random.default_rng(index)
        text, font, skipped = generator._choose(plan, rng)
        skips += skipped
        if any(c.isdigit() for c in text):
            digits += 1
            assert font is good
    assert digits and skips


def test_keep_aspect_and_named_heldout_family(machine_fonts, tmp_path, read_records):
    families = sorted(fonts.group_by_family(machine_fonts))
    if len(families) < 3:
        pytest.skip("needs three font families")
    code = generator.main(["--output_dir", str(tmp_path), "--split", "val", "--num_val", "10",
                             "--num_workers", "1", "--keep_aspect", "--height", "64",
                             "--width", "256", "--heldout_font_families", families[0],
                             "--ood_font_families", families[1]])
    assert code == 0
    manifest = json.loads((tmp_path / "val_manifest.json").read_text())
    assert list(manifest["fonts"]) == [families[0]]
    assert all(r["height"] == 64 and 64 <= r["width"] <= 256
               for r in read_records(str(tmp_path / "val.tfrecord")))


def test_user_word_list(machine_fonts, tmp_path, read_records):
    words = tmp_path / "words.txt"
    words.write_text("\n".join(f"Shop{i}" for i in range(300)))
    code = generator.main(["--output_dir", str(tmp_path / "out"), "--split", "train",
                             "--num_train", "20", "--num_shards", "1", "--num_workers", "1",
                             "--word_list", str(words), "--random_fraction", "0"])
    assert code == 0
    texts = {r["transcript"] for r in read_records(str(tmp_path / "out" / "train*.tfrecord"))}
    assert texts <= {f"Shop{i}" for i in range(300)}


def test_help_exits_0(capsys):
    with pytest.raises(SystemExit) as exit_info:
        generator.main(["--help"])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0 and "--ood_font_families" in out and "val_ood" in out


def test_list_fonts_prints_families(machine_fonts, tmp_path, capsys):
    assert generator.main(["--output_dir", str(tmp_path), "--list_fonts"]) == 0
    out = capsys.readouterr().out
    assert machine_fonts[0].family in out and "usable fonts" in out
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("argv, message", [
    (["--heldout_font_families", "No Such Family"], "No Such Family"),
    (["--height", "4"], "--height/--width"),
    (["--random_fraction", "2"], "random_fraction"),
    (["--min_legibility", "-1"], "min_legibility"),
    (["--fonts", "/nonexistent/font.ttf"], "/nonexistent/font.ttf"),
    (["--font_dirs", "/nonexistent/fonts"], "/nonexistent/fonts"),
    (["--word_list", "/nonexistent/words.txt"], "/nonexistent/words.txt"),
])
def test_bad_settings_return_2_with_message(machine_fonts, tmp_path, capsys, argv, message):
    assert generator.main(["--output_dir", str(tmp_path), "--num_train", "1", *argv]) == 2
    assert message in capsys.readouterr().err


def test_empty_word_list_names_it(machine_fonts, tmp_path, capsys):
    path = tmp_path / "empty.txt"
    path.write_text("\n")
    assert generator.main(["--output_dir", str(tmp_path), "--word_list", str(path)]) == 2
    assert str(path) in capsys.readouterr().err


def test_make_plans_unknown_mode_raises(machine_fonts):
    with pytest.raises(ValueError, match="val_disjoint"):
        generator.make_plans(machine_fonts, val_disjoint="some")


# ---- a Google Fonts library (tests/data/fonts: one family per category, caps-only, reserved)


def test_google_fonts_library_renders_every_category(tmp_path, read_records):
    library = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "fonts")
    faces = sorted(str(p) for p in __import__("pathlib").Path(library).glob("*/files/*.woff2"))
    code = generator.main(["--output_dir", str(tmp_path), "--num_train", "120", "--num_val",
                           "10", "--num_val_ood", "10", "--num_val_ood_per_category", "12",
                           "--num_shards", "1", "--num_workers", "1", "--fonts", *faces,
                           "--google_fonts", library, "--heldout_font_families", "Abel",
                           "--ood_font_families", "VT323"])
    assert code == 0
    manifest = json.loads((tmp_path / "train_manifest.json").read_text())
    assert set(manifest["fonts"]) == {"Prata", "Schoolbell", "Bangers"}  # Bebas Neue reserved
    assert set(manifest["images_per_category"]) == {"serif", "handwriting", "display"}
    assert sum(manifest["images_per_category"].values()) == 120
    assert manifest["category_weights"] == {"serif": 0.3333, "display": 0.3333,
                                            "handwriting": 0.3333}
    assert [os.path.basename(p) for p in manifest["caps_only_fonts"]] == [
        "bangers-latin-400-normal.woff2"]
    records = read_records(str(tmp_path / "train.tfrecord"))
    caps = [r["transcript"] for r in records if "bangers" in r["filename"]]
    assert caps and all(t == t.upper() for t in caps)
    assert any(t != t.upper() for r in records if "bangers" not in r["filename"]
               for t in [r["transcript"]])
    for category, family in (("display", "titan-one"), ("handwriting", "handlee")):
        path = tmp_path / generator.CATEGORY_DIR / f"val_ood_{category}.tfrecord"
        records = read_records(str(path))
        assert len(records) == 12 and all(family in r["filename"] for r in records)
        split_manifest = json.loads((tmp_path / f"val_ood_{category}_manifest.json").read_text())
        assert split_manifest["images_per_category"] == {category: 12}
    assert not (tmp_path / generator.CATEGORY_DIR / "val_ood_serif.tfrecord").exists()


def test_a_font_that_fails_to_draw_is_named_with_the_image_and_text(machine_fonts, tmp_path,
                                                                    monkeypatch, capsys):
    def broken(text, font_path, rng, style):
        raise OSError("array allocation size too large")

    monkeypatch.setattr(generator.render, "render", broken)
    code = generator.main(["--output_dir", str(tmp_path), "--split", "val", "--num_val", "3",
                           "--num_workers", "1"])
    assert code == 1
    err = capsys.readouterr().err
    assert err.startswith("aster-synth-words: error: image 0 of split val (seed 0): ")
    assert "failed to draw '" in err and "array allocation size too large" in err
    assert not (tmp_path / "val_manifest.json").exists()
