"""Tests for aster/exporters/saved_model_export.py (aster-export): the SavedModel, its signature and its
parity with the checkpoint; and for the serving graph it holds (aster/inference.py: decoding,
input size, the predictor)."""

import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image
from stand_in_model import StandInModel, write_checkpoint
from tiny_model import random_tiny_checkpoint, tiny_config

from aster import inference
from aster.core import session_options
from aster.exporters import saved_model_export
from aster.tf_setup import tf
from aster.utils import config_util

# Runs in a fresh interpreter: TensorFlow only, never `aster`.
_LOAD_SCRIPT = r"""
import json, sys
import tensorflow as tf
model_dir, paths = sys.argv[1], sys.argv[2:]
serve = tf.saved_model.load(model_dir).signatures["serving_default"]
images = tf.constant([open(p, "rb").read() for p in paths])
out = serve(images=images)
assert not any(m == "aster" or m.startswith("aster.") for m in sys.modules), "aster imported"
print(json.dumps({
    "text": [t.decode("utf-8") for t in out["text"].numpy()],
    "scores": out["scores"].numpy().tolist(),
    "rectified_shape": list(out["rectified_images"].shape),
}))
"""


def write_images(directory, count, seed=0):
    """Writes `count` random PNG/JPEG word-like images of different sizes; returns their paths."""
    rng = np.random.default_rng(seed)
    paths = []
    for i in range(count):
        h, w = int(rng.integers(20, 60)), int(rng.integers(40, 200))
        pixels = rng.integers(0, 255, size=(h, w, 3), dtype=np.uint8)
        ext = "png" if i % 2 == 0 else "jpg"
        path = os.path.join(directory, f"word_{i}.{ext}")
        Image.fromarray(pixels).save(path)
        paths.append(path)
    return paths


def load_without_aster(model_dir, image_paths):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TF_USE_LEGACY_KERAS")}
    proc = subprocess.run([sys.executable, "-c", _LOAD_SCRIPT, model_dir, *image_paths],
                          capture_output=True, text=True, env=env, cwd=os.path.dirname(model_dir),
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_decode_and_resize_handles_png_jpeg_gray_and_alpha():
    from aster.tf_setup import tf

    encoded = []
    for mode, fmt in (("RGB", "PNG"), ("L", "JPEG"), ("RGBA", "PNG")):
        buffer = io.BytesIO()
        Image.new(mode, (30, 10), 200 if mode == "L" else (10, 20, 30, 255)[:len(mode)]).save(
            buffer, format=fmt)
        encoded.append(buffer.getvalue())
    with tf.Graph().as_default():
        images = inference.decode_and_resize(tf.constant(encoded), 8, 16)
        with tf.Session() as sess:
            out = sess.run(images)
    assert out.shape == (3, 8, 16, 3)
    assert np.allclose(out[0], [10, 20, 30]) and np.allclose(out[1], 200, atol=2)


def test_model_input_size_without_model_raises():
    from aster.protos import model_pb2

    with pytest.raises(ValueError, match="no model is set"):
        inference.model_input_size(model_pb2.Model())
    assert inference.model_input_size(tiny_config().model) == (32, 64)


def test_export_refuses_existing_output_dir(tmp_path):
    ckpt = write_checkpoint(str(tmp_path / "train"), 1, 7.0)
    os.makedirs(tmp_path / "out")
    with pytest.raises(ValueError, match="already exists"):
        saved_model_export.export_saved_model(tiny_config(), ckpt, str(tmp_path / "out"),
                                  model_fn=StandInModel)


def test_export_stand_in_model_signature_loads_without_aster(tmp_path):
    ckpt = write_checkpoint(str(tmp_path / "train"), 1, 42.0)
    out_dir = saved_model_export.export_saved_model(tiny_config(), ckpt, str(tmp_path / "exported"),
                                        model_fn=StandInModel)
    assert os.path.isfile(os.path.join(out_dir, "saved_model.pb"))
    assert os.path.isfile(os.path.join(out_dir, "pipeline.config"))
    paths = write_images(str(tmp_path), 3)
    loaded = load_without_aster(out_dir, paths)
    assert loaded["text"] == ["42"] * 3 and loaded["scores"] == [-42.0] * 3
    assert loaded["rectified_shape"] == [3, 8, 16, 3]


@pytest.mark.slow
def test_export_parity_with_checkpoint_on_20_images_without_aster(tmp_path):
    config, ckpt = random_tiny_checkpoint(str(tmp_path / "train"))
    paths = write_images(str(tmp_path), 20, seed=1)
    encoded = [open(p, "rb").read() for p in paths]
    with inference.CheckpointPredictor(config, ckpt) as predictor:
        expected = predictor.predict(encoded)
    out_dir = saved_model_export.export_saved_model(config, ckpt, str(tmp_path / "exported"))
    loaded = load_without_aster(out_dir, paths)
    assert loaded["text"] == [t.decode("utf-8") for t in expected["text"]]
    np.testing.assert_allclose(loaded["scores"], expected["scores"], atol=1e-4, rtol=0)
    assert loaded["rectified_shape"][0] == 20
    assert len(set(np.round(expected["scores"], 3))) > 1  # the scores depend on the image


def test_decode_and_resize_applies_eval_preprocessing_steps():
    from aster.builders import preprocessor_builder
    from aster.tf_setup import tf

    config = config_util.merge_overrides(tiny_config(), """
        eval_config { data_preprocessing_steps { rgb_to_gray { three_channels: true } } }""")
    steps = preprocessor_builder.build_steps(config.eval_config.data_preprocessing_steps)
    buffer = io.BytesIO()
    Image.new("RGB", (30, 10), (200, 20, 20)).save(buffer, format="PNG")
    with tf.Graph().as_default():
        images = inference.decode_and_resize(tf.constant([buffer.getvalue()]), 8, 16, steps)
        with tf.Session() as sess:
            out = sess.run(images)
    assert out.shape == (1, 8, 16, 3)
    assert np.allclose(out[..., 0], out[..., 1]) and out[..., 0].max() < 150  # gray, not red


def test_decode_and_resize_antialiases_and_keeps_the_steps_resize():
    from aster.builders import preprocessor_builder
    from aster.core import preprocessor_geometry as geometry

    rows, cols = np.indices((160, 320))  # a 1-pixel checkerboard, 5 times the tiny input size
    board = np.repeat(((rows + cols) % 2 * 255).astype(np.uint8)[..., None], 3, axis=2)
    buffer = io.BytesIO()
    Image.fromarray(board).save(buffer, format="PNG")
    steps = preprocessor_builder.build_steps(tiny_config().eval_config.data_preprocessing_steps)
    with tf.Graph().as_default():
        encoded = tf.constant([buffer.getvalue()])
        plain = inference.decode_and_resize(encoded, 32, 64)
        stepped = inference.decode_and_resize(encoded, 32, 64, steps)
        direct = geometry.resize_image(tf.constant(board, tf.float32), 32, 64)
        with tf.Session() as sess:
            plain, stepped, direct = sess.run([plain, stepped, direct])
    assert np.abs(plain - 127.5).max() < 5.0  # averaged, not sampled: no checkerboard left
    np.testing.assert_allclose(stepped[0], direct, atol=1e-3)  # the final resize is a no-op


@pytest.mark.skipif(not session_options.cpu_supports_bfloat16(), reason="no native bfloat16")
def test_checkpoint_predictor_session_config_bfloat16_close_to_float32(tmp_path):
    config, ckpt = random_tiny_checkpoint(str(tmp_path / "train"))
    encoded = [open(p, "rb").read() for p in write_images(str(tmp_path), 4, seed=2)]
    with inference.CheckpointPredictor(config, ckpt) as predictor:
        expected = predictor.predict(encoded)
    bf16 = session_options.configure(tf.ConfigProto(), bfloat16=True)
    with inference.CheckpointPredictor(config, ckpt, session_config=bf16) as predictor:
        got = predictor.predict(encoded)
    assert got["scores"].dtype == np.float32 and np.all(np.isfinite(got["scores"]))
    assert len(got["text"]) == 4
    # bfloat16 (8-bit mantissa) moves the TPS sampling points by up to about a pixel, so single
    # pixels may differ a lot; on average the rectified images agree.
    difference = np.abs(got["rectified_images"] - expected["rectified_images"])
    assert difference.mean() < 0.03, difference.mean()
