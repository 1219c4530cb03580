"""Tests for aster/export.py (aster-export): which checkpoint --checkpoint_path names, with the
stand-in model (the exports themselves: tests/exporters/)."""

import os

import numpy as np
import pytest
import shipped_stand_in
from PIL import Image
from stand_in_model import StandInModel

from aster import export, inference
from aster.utils import config_util

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _tiny_config():
    return config_util.load_pipeline_config(os.path.join(ROOT, "configs", "tiny.config"))


def _read_with(saved_model_dir, tmp_path):
    """The text the exported SavedModel reads in one image."""
    path = str(tmp_path / "word.png")
    Image.fromarray(np.full((20, 60, 3), 100, np.uint8)).save(path)
    with inference.SavedModelPredictor(saved_model_dir) as predictor:
        with open(path, "rb") as f:
            return predictor.predict([f.read()])["text"][0].decode("utf-8")


@pytest.mark.parametrize("argv", [["--checkpoint_path", "aster_base"], []])
def test_export_a_shipped_model_by_its_name_or_by_default(argv, tmp_path, monkeypatch, capsys):
    checkpoint = shipped_stand_in.install(tmp_path, monkeypatch, _tiny_config(), value=42.0)
    out_dir = str(tmp_path / "exported")
    assert export.main([*argv, "--output_dir", out_dir]) == 0
    assert capsys.readouterr().out.strip() == f"exported {checkpoint} to {out_dir}"
    assert _read_with(out_dir, tmp_path) == "42"


def test_export_a_training_folder_takes_its_newest_when_the_state_file_lags(tmp_path, monkeypatch,
                                                                              capsys):
    monkeypatch.setattr(inference, "default_model_fn", lambda model_config: StandInModel())
    twenty = shipped_stand_in.lagging_run(tmp_path / "train", _tiny_config())
    out_dir = str(tmp_path / "exported")
    assert export.main(["--checkpoint_path", str(tmp_path / "train"), "--output_dir",
                        out_dir]) == 0
    assert capsys.readouterr().out.strip() == f"exported {twenty} to {out_dir}"
    assert _read_with(out_dir, tmp_path) == "20"


def test_export_an_unknown_name_or_an_empty_folder_exits_1(tmp_path, monkeypatch, capsys):
    shipped_stand_in.install(tmp_path, monkeypatch, _tiny_config())
    monkeypatch.chdir(tmp_path)
    assert export.main(["--checkpoint_path", "aster_large", "--output_dir", "out"]) == 1
    err = capsys.readouterr().err
    assert "--checkpoint_path 'aster_large': no checkpoint, folder or shipped model" in err
    assert "shipped models: aster_base" in err
    os.makedirs(tmp_path / "empty")
    assert export.main(["--checkpoint_path", "empty", "--output_dir", "out"]) == 1
    assert "'empty': no complete checkpoint in this folder" in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "out")
