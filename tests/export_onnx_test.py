"""Tests for aster/onnx_export.py and aster/onnx_runtime.py: the ONNX export and its parity with
the checkpoint under onnxruntime in a process without `aster` or TensorFlow."""

import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from export_test import ROOT, _random_tiny_checkpoint, tiny_config
from PIL import Image

from aster import export, inference, lite_runtime, onnx_export, onnx_runtime

pytest.importorskip("tf2onnx", reason="the onnx extra (tf2onnx) is not installed")
pytest.importorskip("onnxruntime", reason="the onnx extra (onnxruntime) is not installed")

SCORE_ATOL = 1e-3  # float32 TPS grid instead of float64, and onnxruntime's kernels

# Runs in a fresh interpreter: NumPy, onnxruntime and the exported recognizer.py only.
_RUN_SCRIPT = r"""
import json, sys
import numpy as np
model_dir, images_path = sys.argv[1], sys.argv[2]
sys.path.insert(0, model_dir)
from recognizer import Recognizer
recognizer = Recognizer(model_dir, num_threads=1)
images = np.load(images_path)
out = recognizer.predict(images)
one = recognizer.predict(images[:1])
banned = [m for m in sys.modules if m.split(".")[0] in ("aster", "tensorflow")]
assert not banned, banned
print(json.dumps({"text": out["text"], "scores": out["scores"].tolist(),
                  "control_points": out["control_points"].tolist(),
                  "one_text": one["text"], "one_score": float(one["scores"][0])}))
"""


def _images(count, seed=1):
    """uint8 [count, 32, 64, 3] (the tiny model's input size) and their PNG bytes."""
    rng = np.random.default_rng(seed)
    pixels = rng.integers(0, 256, size=(count, 32, 64, 3), dtype=np.uint8)
    pixels[: count // 2] //= 2  # darker half: varied scores
    encoded = []
    for image in pixels:
        buffer = io.BytesIO()
        Image.fromarray(image).save(buffer, format="PNG")
        encoded.append(buffer.getvalue())
    return pixels, encoded


def _assert_parity(config, ckpt, model_dir, tmp_path, count):
    pixels, encoded = _images(count)
    with inference.CheckpointPredictor(config, ckpt) as predictor:
        expected = predictor.predict(encoded)
    path = str(tmp_path / "images.npy")
    np.save(path, pixels)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TF_USE_LEGACY_KERAS")}
    proc = subprocess.run([sys.executable, "-c", _RUN_SCRIPT, model_dir, path],
                          capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["text"] == [t.decode("utf-8") for t in expected["text"]]
    assert got["one_text"] == got["text"][:1]
    assert abs(got["one_score"] - got["scores"][0]) < 1e-4
    np.testing.assert_allclose(got["scores"], expected["scores"], atol=SCORE_ATOL, rtol=0)
    np.testing.assert_allclose(got["control_points"], expected["control_points"], atol=1e-5)
    assert len(set(np.round(expected["scores"], 3))) > 1  # the scores depend on the image
    print(f"parity on {count} images: max |score difference| "
          f"{np.max(np.abs(np.array(got['scores']) - expected['scores'])):.2e}")


@pytest.mark.slow
def test_onnx_greedy_parity_with_checkpoint_without_tensorflow(tmp_path):
    config, ckpt = _random_tiny_checkpoint(str(tmp_path / "train"))
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
    _assert_parity(config, ckpt, out_dir, tmp_path, 56)


@pytest.mark.slow
def test_onnx_beam_search_parity_with_checkpoint(tmp_path):
    config, ckpt = _random_tiny_checkpoint(str(tmp_path / "train"))
    for predictor in config.model.multi_predictors_recognition_model.predictor:
        predictor.attention_predictor.beam_width = 3
    out_dir = onnx_export.export_onnx(config, ckpt, str(tmp_path / "onnx"), decoding="beam")
    _assert_parity(config, ckpt, out_dir, tmp_path, 16)


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
