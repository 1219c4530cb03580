"""benchmarks/resize_antialias.py: one row per height, both resizes, on a random tiny model."""

import json

import bench_scripts
import pytest
from tiny_model import random_tiny_checkpoint

from aster.synth import fonts
from aster.utils import config_util


@pytest.fixture
def resize_antialias(monkeypatch):
    try:
        fonts.find_fonts()
    except fonts.NoFontsError:
        pytest.skip("no usable fonts on this machine")
    yield bench_scripts.load("resize_antialias", monkeypatch)
    bench_scripts.forget_siblings()


def test_a_row_per_height_with_both_resizes(resize_antialias, tmp_path, capsys):
    config, checkpoint = random_tiny_checkpoint(str(tmp_path))
    config_path = str(tmp_path / "pipeline.config")
    config_util.save_pipeline_config(config, config_path)
    assert resize_antialias.main(["--checkpoint_path", checkpoint, "--pipeline_config_path",
                                  config_path, "--heights", "32", "64", "--images", "4",
                                  "--greedy"]) == 0
    out = capsys.readouterr().out
    rows = json.loads(out.strip().splitlines()[-1])["rows"]
    assert [r["height"] for r in rows] == [32, 64]
    assert all(0.0 <= r["plain"] <= 1.0 and 0.0 <= r["antialiased"] <= 1.0 for r in rows)
    assert "| 64 |" in out and "plain bilinear" in out


def test_a_config_without_a_resize_step_is_refused(resize_antialias, tmp_path):
    config, checkpoint = random_tiny_checkpoint(str(tmp_path))
    del config.eval_config.data_preprocessing_steps[:]
    with pytest.raises(ValueError, match="no resize_image step"):
        resize_antialias.accuracy(config, checkpoint, "unused.tfrecord", True, str(tmp_path))
