"""Shared by the TFLite and ONNX export tests: images, and the parity check of an exported
folder's recognizer.py run in a fresh interpreter that imports neither `aster` nor TensorFlow."""

import io
import json
import os
import subprocess
import sys

import numpy as np
from PIL import Image

from aster import inference

SCORE_ATOL = 1e-3  # float32 TPS grid instead of float64, and the runtime's kernels

# Runs in a fresh interpreter: NumPy, the runtime and the exported recognizer.py only.
_RUN_SCRIPT = r"""
import json, sys, time
import numpy as np
model_dir, images_path = sys.argv[1], sys.argv[2]
sys.path.insert(0, model_dir)
from recognizer import Recognizer
recognizer = Recognizer(model_dir, num_threads=1)
images = np.load(images_path)
out = recognizer.predict(images)
one = recognizer.predict(images[:1])
start = time.perf_counter()
for _ in range(5):
    recognizer.predict(images[:1])
latency = (time.perf_counter() - start) / 5
banned = [m for m in sys.modules if m.split(".")[0] in ("aster", "tensorflow")]
assert not banned, banned
print(json.dumps({"text": out["text"], "scores": out["scores"].tolist(),
                  "control_points": out["control_points"].tolist(),
                  "one_text": one["text"], "one_score": float(one["scores"][0]),
                  "latency_s": latency}))
"""


def images(count, seed=1):
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


def run_without_tensorflow(model_dir, pixels, tmp_path):
    """The recognizer's outputs on `pixels` (dict of lists), from a fresh interpreter."""
    path = str(tmp_path / "images.npy")
    np.save(path, pixels)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TF_USE_LEGACY_KERAS")}
    proc = subprocess.run([sys.executable, "-c", _RUN_SCRIPT, model_dir, path],
                          capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def assert_parity(config, ckpt, model_dir, tmp_path, count):
    """The exported model gives the checkpoint's texts, scores and control points."""
    pixels, encoded = images(count)
    with inference.CheckpointPredictor(config, ckpt) as predictor:
        expected = predictor.predict(encoded)
    got = run_without_tensorflow(model_dir, pixels, tmp_path)
    assert got["text"] == [t.decode("utf-8") for t in expected["text"]]
    assert got["one_text"] == got["text"][:1]
    assert abs(got["one_score"] - got["scores"][0]) < 1e-4
    np.testing.assert_allclose(got["scores"], expected["scores"], atol=SCORE_ATOL, rtol=0)
    np.testing.assert_allclose(got["control_points"], expected["control_points"], atol=1e-5)
    assert len(set(np.round(expected["scores"], 3))) > 1  # the scores depend on the image
    print(f"parity on {count} images: max |score difference| "
          f"{np.max(np.abs(np.array(got['scores']) - expected['scores'])):.2e}, batch-1 latency "
          f"{got['latency_s'] * 1000:.1f} ms")
