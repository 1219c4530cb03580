"""Tests for aster/exporters/onnx_export.py and aster/exporters/onnx_runtime.py: the ONNX export and its parity with
the checkpoint under onnxruntime in a process without `aster` or TensorFlow."""

import json
import os
import sys

import export_parity
import pytest
from tiny_model import ROOT, random_tiny_checkpoint, tiny_config

from aster import export
from aster.exporters import lite_runtime, onnx_export, onnx_runtime

pytest.importorskip("tf2onnx", reason="the onnx extra (tf2onnx) is not installed")
pytest.importorskip("onnxruntime", reason="the onnx extra (onnxruntime) is not installed")

@pytest.mark.slow
def test_onnx_greedy_parity_with_checkpoint_without_tensorflow(tmp_path):
    config, ckpt = random_tiny_checkpoint(str(tmp_path / "train"))
    out_dir = str(tmp_path / "onnx")
    assert export.main(["--checkpoint_path", ckpt, "--pipeline_config_path",
                        os.path.join(ROOT, "configs", "tiny.config"),
                        "--output_dir", out_dir, "--format", "onnx"]) == 0
    assert sorted(os.listdir(out_dir)) == ["lite_runtime.py", "model.json", "model.onnx",
                                           "pipeline.config", "recognizer.py"]
    metadata = lite_runtime.load_metadata(out_dir)
    assert metadata["input"] == {"name": "images", "dtype": "uint8", "height": 32, "width": 64,
                                 "channels": 3}
    assert metadata["format"] == "onnx" and metadata["decoding"] == "greedy"
    assert (metadata["resize"]["method"], metadata["resize"]["antialias"]) == ("bilinear", True)
    export_parity.assert_parity(config, ckpt, out_dir, tmp_path, 56)


@pytest.mark.slow
def test_onnx_beam_search_parity_with_checkpoint(tmp_path):
    config, ckpt = random_tiny_checkpoint(str(tmp_path / "train"))
    for predictor in config.model.multi_predictors_recognition_model.predictor:
        predictor.attention_predictor.beam_width = 3
    out_dir = onnx_export.export_onnx(config, ckpt, str(tmp_path / "onnx"), decoding="beam")
    export_parity.assert_parity(config, ckpt, out_dir, tmp_path, 16)


def test_export_onnx_refuses_existing_output_dir(tmp_path):
    os.makedirs(tmp_path / "out")
    with pytest.raises(ValueError, match="already exists"):
        onnx_export.export_onnx(tiny_config(), str(tmp_path / "none"), str(tmp_path / "out"))


def test_convert_without_tf2onnx_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "tf2onnx", None)
    with pytest.raises(ValueError, match=r"aster-tf\[onnx\]"):
        onnx_export.convert(None)


def test_recognizer_refuses_a_folder_of_another_format(tmp_path):
    with open(tmp_path / "model.json", "w", encoding="utf-8") as f:
        json.dump({"format": "tflite"}, f)
    with pytest.raises(ValueError, match="format is 'tflite', expected 'onnx'"):
        onnx_runtime.Recognizer(str(tmp_path))
    with pytest.raises(ValueError, match="model.json: cannot read"):
        onnx_runtime.Recognizer(str(tmp_path / "missing"))


def test_onnx_runtime_offers_the_same_resize_for_model():
    assert onnx_runtime.resize_for_model is lite_runtime.resize_for_model
