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
LARGE_COUNT = 8  # images also given to predict_images at another size
LARGE_SCORE_ATOL = 0.05  # measured: up to 0.012

# Runs in a fresh interpreter: NumPy, the runtime and the exported recognizer.py only.
_RUN_SCRIPT = r"""
import json, sys, time
import numpy as np
model_dir, images_path = sys.argv[1], sys.argv[2]
sys.path.insert(0, model_dir)
from recognizer import Recognizer, resize_for_model
recognizer = Recognizer(model_dir, num_threads=1)
images = np.load(images_path)
out = recognizer.predict(images)
one = recognizer.predict(images[:1])
large = resized = None
if len(sys.argv) > 3:
    large_images = list(np.load(sys.argv[3]))
    large = recognizer.predict_images(large_images)
    resized = recognizer.predict([resize_for_model(x, recognizer.metadata) for x in large_images])
start = time.perf_counter()
for _ in range(5):
    recognizer.predict(images[:1])
latency = (time.perf_counter() - start) / 5
banned = [m for m in sys.modules if m.split(".")[0] in ("aster", "tensorflow")]
assert not banned, banned
print(json.dumps({"text": out["text"], "scores": out["scores"].tolist(),
                  "control_points": out["control_points"].tolist(),
                  "one_text": one["text"], "one_score": float(one["scores"][0]),
                  "latency_s": latency,
                  "large_text": large["text"] if large else None,
                  "large_scores": large["scores"].tolist() if large else None,
                  "resized_text": resized["text"] if resized else None}))
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


def large_images(pixels, height=80, width=150):
    """`pixels` enlarged to height x width (not a multiple of the input size), and their PNG
    bytes: recognizer.predict_images must shrink them as the checkpoint's eval steps do."""
    large = np.stack([np.asarray(Image.fromarray(image).resize((width, height), Image.BICUBIC))
                      for image in pixels])
    encoded = []
    for image in large:
        buffer = io.BytesIO()
        Image.fromarray(image).save(buffer, format="PNG")
        encoded.append(buffer.getvalue())
    return large, encoded


def run_without_tensorflow(model_dir, pixels, tmp_path, large=None):
    """The recognizer's outputs on `pixels` (dict of lists), from a fresh interpreter; with
    `large` (uint8 [N, H, W, 3] of another size), also large_text and large_scores (from
    predict_images) and resized_text (predict on resize_for_model's images)."""
    path = str(tmp_path / "images.npy")
    np.save(path, pixels)
    args = [path]
    if large is not None:
        args.append(str(tmp_path / "large.npy"))
        np.save(args[-1], large)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TF_USE_LEGACY_KERAS")}
    proc = subprocess.run([sys.executable, "-c", _RUN_SCRIPT, model_dir, *args],
                          capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def assert_parity(config, ckpt, model_dir, tmp_path, count):
    """The exported model gives the checkpoint's texts, scores and control points."""
    pixels, encoded = images(count)
    large, large_encoded = large_images(pixels[:LARGE_COUNT])
    with inference.CheckpointPredictor(config, ckpt) as predictor:
        expected = predictor.predict(encoded)
        expected_large = predictor.predict(large_encoded)
    got = run_without_tensorflow(model_dir, pixels, tmp_path, large)
    assert got["text"] == [t.decode("utf-8") for t in expected["text"]]
    assert got["one_text"] == got["text"][:1]
    assert abs(got["one_score"] - got["scores"][0]) < 1e-4
    np.testing.assert_allclose(got["scores"], expected["scores"], atol=SCORE_ATOL, rtol=0)
    np.testing.assert_allclose(got["control_points"], expected["control_points"], atol=1e-5)
    assert len(set(np.round(expected["scores"], 3))) > 1  # the scores depend on the image
    # predict_images is predict on resize_for_model's images; and Pillow's antialiased resize
    # to uint8 is the eval steps' in float32 to a pixel level, so the scores stay close (the
    # random model's texts are near ties that such a difference may flip).
    assert got["large_text"] == got["resized_text"]
    np.testing.assert_allclose(got["large_scores"], expected_large["scores"],
                               atol=LARGE_SCORE_ATOL, rtol=0)
    print(f"parity on {count} images: max |score difference| "
          f"{np.max(np.abs(np.array(got['scores']) - expected['scores'])):.2e} (larger images "
          f"through predict_images: "
          f"{np.max(np.abs(np.array(got['large_scores']) - expected_large['scores'])):.2e}), "
          f"batch-1 latency {got['latency_s'] * 1000:.1f} ms")
