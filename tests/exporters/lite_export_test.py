"""Tests for aster/exporters/lite_export.py and aster/exporters/lite_runtime.py: the TFLite export, its parity with the
checkpoint under ai-edge-litert in a process without `aster` or TensorFlow, and the wrapper's
input checks."""

import os
import sys

import export_parity
import numpy as np
import pytest
from PIL import Image
from tiny_model import ROOT, random_tiny_checkpoint, tiny_config

from aster import export
from aster.core import preprocessor_geometry as geometry
from aster.exporters import lite_export, lite_runtime
from aster.tf_setup import tf

pytest.importorskip("ai_edge_litert", reason="the tflite extra (ai-edge-litert) is not installed")

NUM_IMAGES = 56
@pytest.mark.slow
def test_tflite_greedy_parity_with_checkpoint_without_tensorflow(tmp_path):
    config, ckpt = random_tiny_checkpoint(str(tmp_path / "train"))
    out_dir = str(tmp_path / "lite")
    assert export.main(["--checkpoint_path", ckpt, "--pipeline_config_path",
                        os.path.join(ROOT, "configs", "tiny.config"),
                        "--output_dir", out_dir, "--format", "tflite"]) == 0
    assert sorted(os.listdir(out_dir)) == ["model.json", "model.tflite", "pipeline.config",
                                           "recognizer.py"]
    metadata = lite_runtime.load_metadata(out_dir)
    assert metadata["input"] == {"name": "images", "dtype": "uint8", "height": 32, "width": 64,
                                 "channels": 3}
    assert metadata["decoding"] == "greedy" and metadata["op_set"] == "TFLITE_BUILTINS"
    assert {k: v for k, v in metadata["resize"].items() if k != "note"} == {
        "method": "bilinear", "antialias": True, "height": 32, "width": 64}
    export_parity.assert_parity(config, ckpt, out_dir, tmp_path, NUM_IMAGES)


@pytest.mark.slow
def test_tflite_beam_search_parity_with_checkpoint(tmp_path):
    config, ckpt = random_tiny_checkpoint(str(tmp_path / "train"))
    for predictor in config.model.multi_predictors_recognition_model.predictor:
        predictor.attention_predictor.beam_width = 3
    out_dir = lite_export.export_tflite(config, ckpt, str(tmp_path / "lite"), decoding="beam")
    export_parity.assert_parity(config, ckpt, out_dir, tmp_path, 16)


def test_decoding_config_greedy_sets_beam_width_1_and_refuses_unknown():
    base = tiny_config()
    base.model.multi_predictors_recognition_model.predictor[0].attention_predictor.beam_width = 5
    greedy = lite_export.decoding_config(base, "greedy")
    widths = [p.attention_predictor.beam_width
              for p in greedy.model.multi_predictors_recognition_model.predictor]
    assert widths == [1, 1]
    assert lite_export.decoding_config(base, "beam").model.multi_predictors_recognition_model \
        .predictor[0].attention_predictor.beam_width == 5
    with pytest.raises(ValueError, match="--decoding: unknown decoding 'top'"):
        lite_export.decoding_config(base, "top")


def test_export_tflite_refuses_existing_output_dir(tmp_path):
    os.makedirs(tmp_path / "out")
    with pytest.raises(ValueError, match="already exists"):
        lite_export.export_tflite(tiny_config(), str(tmp_path / "none"), str(tmp_path / "out"))


def test_labels_to_text_stops_at_reserved_labels_and_marks_unknown():
    labels = np.array([[2, 3, 1, 2], [4, 0, 3, 3], [-1, 2, 2, 2], [2, 5, 5, 1]])
    texts = lite_runtime.labels_to_text(labels, ["a", "b", "c"], 2, unknown_label=5)
    assert texts == ["ab", "c", "", "a\ufffd\ufffd"]


@pytest.mark.parametrize("images, message", [
    ("word.png", r"expected a uint8 array \[N, 32, 64, 3\].*got str"),
    (b"\x89PNG", "got bytes"),
    (None, "got NoneType"),
    ([{"a": 1}], "got an array of object"),
    (np.array(["a", "b"]), "got an array of <U1"),
    (np.zeros((0, 32, 64, 3), np.uint8), "images: empty batch"),
    ([], "images: empty batch"),
    (np.zeros((2, 32, 64, 3), np.float32), "expected dtype uint8.*got float32"),
    (np.zeros((32, 64, 3), np.uint8), r"expected shape \[N, 32, 64, 3\].*add a batch axis"),
    (np.zeros((2, 64, 32, 3), np.uint8), r"resize to 64x32 first.*got \[2, 64, 32, 3\]"),
    (np.zeros((2, 32, 64, 4), np.uint8), r"got \[2, 32, 64, 4\]"),
])
def test_check_images_rejects_bad_input_with_what_was_expected(images, message):
    with pytest.raises(ValueError, match=message):
        lite_runtime.check_images(images, 32, 64)


def test_check_images_accepts_a_list_of_images():
    batch = lite_runtime.check_images([np.zeros((32, 64, 3), np.uint8)] * 2, 32, 64)
    assert batch.shape == (2, 32, 64, 3) and batch.dtype == np.uint8


def _set_resize(**fields):
    def edit(config):
        for name, value in fields.items():
            step = config.eval_config.data_preprocessing_steps[0].resize_image
            setattr(step, name, getattr(step, value) if isinstance(value, str) else value)
    return edit


def _no_resize_step(config):
    del config.eval_config.data_preprocessing_steps[0]


@pytest.mark.parametrize("edit, method, antialias", [
    (None, "bilinear", True),
    (_set_resize(antialias=False), "bilinear", False),
    (_set_resize(method="BICUBIC"), "bicubic", True),
    (_set_resize(method="NEAREST_NEIGHBOR"), "nearest", False),  # never antialiased
    (_set_resize(method="AREA", antialias=False), "area", True),  # always averages
    (_no_resize_step, "bilinear", True),  # decode_and_resize's own resize
])
def test_resize_metadata_follows_the_eval_resize_step(edit, method, antialias):
    config = tiny_config()
    if edit is not None:
        edit(config)
    resize = lite_export.resize_metadata(config)
    assert (resize["method"], resize["antialias"], resize["height"], resize["width"]) == (
        method, antialias, 32, 64)
    assert f"method={method!r}, antialias={antialias}" in resize["note"]


def _metadata(method="bilinear", antialias=True, height=32, width=100):
    return {"input": {"height": height, "width": width},
            "resize": {"method": method, "antialias": antialias, "height": height, "width": width}}


def _large_image(height=157, width=503):
    """uint8 [height, width, 3]: smoothed noise (so that rounding, not detail, dominates)."""
    noise = np.random.default_rng(0).integers(0, 256, (height // 4, width // 4, 3), np.uint8)
    return np.asarray(Image.fromarray(noise).resize((width, height), Image.BICUBIC))


# Pillow rounds (and clips) to uint8 between its horizontal and vertical passes too, which
# bicubic's negative lobes make count now and then.
@pytest.mark.parametrize("method, tolerance", [("bilinear", 1.5), ("bicubic", 6.0),
                                               ("nearest", 0.0)])
def test_resize_for_model_matches_tensorflow_resize_image(method, tolerance):
    image = _large_image()
    got = lite_runtime.resize_for_model(image, _metadata(method))
    with tf.Graph().as_default(), tf.Session() as sess:
        expected = sess.run(geometry.resize_image(tf.constant(image, tf.float32), 32, 100, method))
    assert got.shape == (32, 100, 3) and got.dtype == np.uint8
    difference = np.abs(got - expected)
    assert difference.max() <= tolerance and difference.mean() < 0.5, difference.max()


def test_resize_for_model_takes_pil_images_and_arrays_of_any_mode():
    gray = np.full((90, 300), 200, np.uint8)
    rgba = np.dstack([np.full((20, 30, 3), 200, np.uint8), np.zeros((20, 30), np.uint8)])
    images = [gray, gray[..., None], np.dstack([gray] * 3), rgba, Image.fromarray(gray),
              Image.fromarray(rgba)]
    metadata = _metadata(height=32, width=64)
    del metadata["resize"]  # a folder exported before model.json said how: antialiased bilinear
    for image in images:
        out = lite_runtime.resize_for_model(image, metadata)
        assert out.shape == (32, 64, 3) and out.dtype == np.uint8 and np.all(out == 200)


def test_resize_for_model_enlarges_without_antialias():
    out = lite_runtime.resize_for_model(np.zeros((10, 20, 3), np.uint8), _metadata(antialias=False))
    assert out.shape == (32, 100, 3)


@pytest.mark.parametrize("image, metadata, message", [
    ("word.png", _metadata(), "expected a PIL image or a uint8 array.*got str.*with Pillow first"),
    (np.zeros((40, 80, 3), np.float32), _metadata(), r"got an array of float32 \[40, 80, 3\]"),
    (np.zeros((40, 80, 2), np.uint8), _metadata(), r"got an array of uint8 \[40, 80, 2\]"),
    (np.zeros((40, 80, 3), np.uint8), _metadata("lanczos"), "resize method 'lanczos': expected"),
    (np.zeros((40, 80, 3), np.uint8), _metadata("bicubic", antialias=False),
     r"bicubic without antialias, which Pillow cannot do when shrinking \(80x40 to 100x32\)"),
])
def test_resize_for_model_rejects_what_it_cannot_resize(image, metadata, message):
    with pytest.raises(ValueError, match=message):
        lite_runtime.resize_for_model(image, metadata)


def test_resize_for_model_without_pillow_says_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ValueError, match=r"needs Pillow \(pip install pillow\)"):
        lite_runtime.resize_for_model(np.zeros((40, 80, 3), np.uint8), _metadata())


def test_resize_batch_takes_a_list_or_a_batch_and_refuses_one_image():
    batch = np.zeros((2, 40, 80, 3), np.uint8)
    assert [x.shape for x in lite_runtime.resize_batch(batch, _metadata())] == [(32, 100, 3)] * 2
    assert len(lite_runtime.resize_batch([batch[0], Image.new("L", (5, 5))], _metadata())) == 2
    with pytest.raises(ValueError, match=r"expected a list of images, got an array of uint8 "
                                         r"\[40, 80, 3\] \(wrap one image in a list\)"):
        lite_runtime.resize_batch(batch[0], _metadata())
    with pytest.raises(ValueError, match="got Image"):
        lite_runtime.resize_batch(Image.new("L", (5, 5)), _metadata())


def test_recognizer_refuses_a_folder_without_model_json(tmp_path):
    with pytest.raises(ValueError, match="model.json: cannot read"):
        lite_runtime.Recognizer(str(tmp_path))


@pytest.mark.slow
def test_quantized_exports_are_smaller_and_still_run_without_tensorflow(tmp_path):
    config, ckpt = random_tiny_checkpoint(str(tmp_path / "train"))
    sizes, outputs = {}, {}
    pixels, _ = export_parity.images(8)
    for quantize in lite_export.QUANTIZATIONS:
        out_dir = lite_export.export_tflite(config, ckpt, str(tmp_path / quantize),
                                            quantize=quantize)
        assert lite_runtime.load_metadata(out_dir)["quantize"] == quantize
        sizes[quantize] = os.path.getsize(os.path.join(out_dir, lite_export.MODEL_FILE))
        outputs[quantize] = export_parity.run_without_tensorflow(out_dir, pixels, tmp_path)
    # float16 weights take half the bytes of float32 ones, int8 a quarter (plus the graph).
    assert sizes["float16"] < 0.6 * sizes["none"] and sizes["dynamic_int8"] < 0.4 * sizes["none"]
    # float16-rounded weights, float32 arithmetic: the same scores to about 1e-3 relative.
    np.testing.assert_allclose(outputs["float16"]["scores"], outputs["none"]["scores"],
                               rtol=0.02, atol=0.05)
    assert len(outputs["dynamic_int8"]["text"]) == 8
    assert np.all(np.isfinite(outputs["dynamic_int8"]["scores"]))


def test_quantization_is_checked_and_only_for_tflite(tmp_path, capsys):
    with pytest.raises(ValueError, match="--quantize: unknown quantisation 'int4'"):
        lite_export.check_quantization("int4")
    with pytest.raises(ValueError, match="--quantize float16: only for --format tflite, not onnx"):
        lite_export.check_quantization("float16", "onnx")
    lite_export.check_quantization("none", "saved_model")
    config, ckpt = random_tiny_checkpoint(str(tmp_path / "train"))
    del config
    assert export.main(["--checkpoint_path", ckpt, "--pipeline_config_path",
                        os.path.join(ROOT, "configs", "tiny.config"), "--output_dir",
                        str(tmp_path / "saved"), "--quantize", "float16"]) == 1
    assert "only for --format tflite, not saved_model" in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "saved")
