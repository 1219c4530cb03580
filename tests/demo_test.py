"""Tests for aster/demo.py (aster-demo) with the stand-in model."""

import os

import numpy as np
import pytest
import shipped_stand_in
from PIL import Image
from stand_in_model import StandInModel, write_checkpoint

from aster import demo, export, inference
from aster.utils import config_util

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def trained(tmp_path, monkeypatch):
    """A training folder with a stand-in checkpoint (value 42) and its pipeline.config."""
    monkeypatch.setattr(inference, "default_model_fn", lambda model_config: StandInModel())
    train = str(tmp_path / "train")
    write_checkpoint(train, 5, 42.0)
    config = config_util.load_pipeline_config(os.path.join(ROOT, "configs", "tiny.config"))
    config_util.save_pipeline_config(config, os.path.join(train, "pipeline.config"))
    return train


def _images(tmp_path):
    paths = []
    for i, ext in enumerate(("png", "jpg")):
        path = str(tmp_path / f"word{i}.{ext}")
        Image.fromarray(np.full((20, 60, 3), 120 + i, np.uint8)).save(path)
        paths.append(path)
    return paths


def test_demo_from_checkpoint_prints_text_and_writes_no_file(trained, tmp_path, capsys):
    paths = _images(tmp_path)
    assert demo.main(["--checkpoint_path", trained, *paths]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines == [f"{p}\t42\t-42.0000" for p in paths]
    assert sorted(os.listdir(tmp_path)) == ["train", "word0.png", "word1.jpg"]


def test_demo_writes_rectified_images_into_output_dir_only(trained, tmp_path, capsys):
    paths = _images(tmp_path)
    out_dir = str(tmp_path / "out")
    assert demo.main(["--checkpoint_path", trained, "--output_dir", out_dir, *paths]) == 0
    for path in paths:
        rectified = demo.rectified_path(path, out_dir)
        assert os.path.dirname(rectified) == out_dir
        assert Image.open(rectified).size == (16, 8)
    assert sorted(os.listdir(tmp_path)) == ["out", "train", "word0.png", "word1.jpg"]


def test_help_says_what_is_written_where(capsys):
    with pytest.raises(SystemExit):
        demo.main(["--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "(default: write no file)" in help_text and "<name>_rectified.png" in help_text


def test_demo_from_saved_model_into_output_dir(trained, tmp_path, capsys):
    exported = str(tmp_path / "exported")
    assert export.main(["--checkpoint_path", trained, "--output_dir", exported]) == 0
    capsys.readouterr()
    paths = _images(tmp_path)
    out_dir = str(tmp_path / "out")
    assert demo.main(["--saved_model_dir", exported, "--output_dir", out_dir, *paths]) == 0
    assert capsys.readouterr().out.count("\t42\t") == 2
    assert sorted(os.listdir(out_dir)) == ["word0_rectified.png", "word1_rectified.png"]


def test_demo_reports_and_skips_unreadable_image(trained, tmp_path, capsys):
    good = _images(tmp_path)[0]
    bad = str(tmp_path / "broken.png")
    with open(bad, "wb") as f:
        f.write(b"\x89PNG not really")
    missing = str(tmp_path / "missing.jpg")
    assert demo.main(["--checkpoint_path", trained, good, bad, missing]) == 1
    captured = capsys.readouterr()
    assert captured.out.strip() == f"{good}\t42\t-42.0000"
    assert f"{bad}: cannot read the image" in captured.err
    assert f"{missing}: cannot read the image" in captured.err


def test_demo_bad_checkpoint_or_saved_model_exits_1(tmp_path, capsys):
    image = _images(tmp_path)[0]
    assert demo.main(["--checkpoint_path", str(tmp_path / "nothing"), image]) == 1
    assert "no checkpoint, folder or shipped model of that name" in capsys.readouterr().err
    os.makedirs(tmp_path / "empty")
    assert demo.main(["--checkpoint_path", str(tmp_path / "empty"), image]) == 1
    assert "empty': no complete checkpoint in this folder" in capsys.readouterr().err
    assert demo.main(["--saved_model_dir", str(tmp_path / "nothing"), image]) == 1
    assert "cannot load a SavedModel" in capsys.readouterr().err


def _tiny_config():
    return config_util.load_pipeline_config(os.path.join(ROOT, "configs", "tiny.config"))


def test_demo_reads_with_a_shipped_model_named_or_by_default(tmp_path, monkeypatch, capsys):
    shipped_stand_in.install(tmp_path, monkeypatch, _tiny_config(), value=42.0)
    image = _images(tmp_path)[0]
    assert demo.main(["--checkpoint_path", "aster_base", image]) == 0
    assert capsys.readouterr().out.strip() == f"{image}\t42\t-42.0000"
    assert demo.main([image]) == 0
    assert capsys.readouterr().out.strip() == f"{image}\t42\t-42.0000"


def test_demo_an_unknown_model_name_lists_the_shipped_ones(tmp_path, monkeypatch, capsys):
    shipped_stand_in.install(tmp_path, monkeypatch, _tiny_config())
    monkeypatch.chdir(tmp_path)
    assert demo.main(["--checkpoint_path", "aster_bsae", "x.png"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("aster-demo: --checkpoint_path 'aster_bsae': no checkpoint, folder or "
                          "shipped model of that name") and err.endswith(
                              "shipped models: aster_base)")


def test_demo_reads_the_folder_s_newest_when_the_state_file_lags(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(inference, "default_model_fn", lambda model_config: StandInModel())
    shipped_stand_in.lagging_run(tmp_path / "train", _tiny_config())
    image = _images(tmp_path)[0]
    assert demo.main(["--checkpoint_path", str(tmp_path / "train"), image]) == 0
    assert capsys.readouterr().out.strip() == f"{image}\t20\t-20.0000"


def test_demo_checkpoint_without_config_exits_1(tmp_path, capsys):
    write_checkpoint(str(tmp_path / "train"), 1, 1.0)
    image = _images(tmp_path)[0]
    assert demo.main(["--checkpoint_path", str(tmp_path / "train"), image]) == 1
    assert "--pipeline_config_path is required" in capsys.readouterr().err


def test_demo_bad_batch_size_is_usage_error(tmp_path):
    with pytest.raises(SystemExit) as e:
        demo.main(["--saved_model_dir", "x", "--batch_size", "0", "a.png"])
    assert e.value.code == 2


def test_demo_keeps_oneDNN_filters_between_calls_with_the_same_results(tmp_path, monkeypatch):
    """aster-demo sets TF_ONEDNN_ASSUME_FROZEN_WEIGHTS=1 (batch-1 speed); a real model read in
    batches of 2, 2 and 1 gives the same texts and scores as with the filters reordered per call."""
    import subprocess
    import sys

    from tiny_model import random_tiny_checkpoint

    monkeypatch.delenv("TF_ONEDNN_ASSUME_FROZEN_WEIGHTS", raising=False)
    with pytest.raises(SystemExit):  # a usage error, after main has set the default
        demo.main(["--batch_size", "0", "x.png"])
    assert os.environ["TF_ONEDNN_ASSUME_FROZEN_WEIGHTS"] == "1"
    config, ckpt = random_tiny_checkpoint(str(tmp_path / "train"))
    config_util.save_pipeline_config(config, str(tmp_path / "train" / "pipeline.config"))
    rng = np.random.default_rng(0)
    paths = []
    for i in range(5):
        paths.append(str(tmp_path / f"w{i}.png"))
        Image.fromarray(rng.integers(0, 255, (24, 70, 3), dtype=np.uint8)).save(paths[-1])
    outputs = []
    for frozen in ("1", "0"):
        env = {**os.environ, "TF_ONEDNN_ASSUME_FROZEN_WEIGHTS": frozen}
        out = subprocess.run(
            [sys.executable, "-c", "import sys; from aster.demo import main; sys.exit(main())",
             "--checkpoint_path", ckpt, "--batch_size", "2", "--output_dir", str(tmp_path),
             *paths], env=env, capture_output=True, text=True, timeout=300, check=True)
        outputs.append([line.split("\t") for line in out.stdout.strip().splitlines()])
    assert [row[:2] for row in outputs[0]] == [row[:2] for row in outputs[1]]
    assert len(outputs[0]) == 5
    np.testing.assert_allclose([float(r[2]) for r in outputs[0]],
                               [float(r[2]) for r in outputs[1]], atol=1e-3)
