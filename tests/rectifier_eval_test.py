"""Rectifier diagnostics of the evaluator: control-point displacement and the comparison with the
identity rectification (eval_config.compare_identity_rectification)."""

import json
import logging
import os

import numpy as np
import pytest
from stand_in_model import StandInModel, make_config, stand_in_batches, write_checkpoint

from aster import evaluator
from aster.builders import model_builder
from aster.tf_setup import tf
from aster.utils import config_util

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# StandInModel's control points, and initial points offset from them by (dx, dy) per point.
_POINTS = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
_OFFSETS = np.array([[0.1, 0.0], [0.0, 0.1], [0.0, 0.0], [0.3, 0.4]])
_TARGET = np.array([[0.2, 0.2], [0.8, 0.2], [0.2, 0.8], [0.8, 0.8]])


class _StandInStn:
    init_control_points = _POINTS + _OFFSETS
    target_control_points = _TARGET


class RectifiedStandIn(StandInModel):
    """StandInModel with a stand-in rectifier. With control_points (the identity path) it
    predicts round(value) + 1 + 10 * max|control_points - target| (value + 1 when it gets the
    target pattern), so the identity path's accuracy differs from the normal one's."""

    create_variable_on_identity = False

    def __init__(self):
        super().__init__()
        self.spatial_transformer = _StandInStn()

    def predict(self, preprocessed_images, scope=None, control_points=None):
        out = super().predict(preprocessed_images, scope)
        if control_points is not None:
            if self.create_variable_on_identity:
                tf.Variable(0.0, name="Extra")
            error = tf.reduce_max(tf.abs(control_points - tf.constant(_TARGET, tf.float32)))
            out["value"] = out["value"] + 1.0 + 10.0 * error
        return out


class _LeakyStandIn(RectifiedStandIn):
    create_variable_on_identity = True


def _run(config, eval_dir, model_fn, ckpt, **kwargs):
    kwargs.setdefault("batches_fn", stand_in_batches())
    (results,) = evaluator.run(config, str(eval_dir), model_fn=model_fn, checkpoint_path=ckpt,
                               **kwargs)
    return results


def test_displacement_is_reported_in_normalised_units_and_input_pixels(tmp_path):
    ckpt = write_checkpoint(str(tmp_path / "train"), 5, 7.0)
    results = _run(make_config(), tmp_path / "eval", RectifiedStandIn, ckpt)
    (dataset,) = results["datasets"]
    rectifier = dataset["rectifier"]
    # The stand-in's images are 16 x 32 (height x width): x scales by 32, y by 16.
    px = [3.2, 1.6, 0.0, np.hypot(0.3 * 32, 0.4 * 16)]
    assert rectifier["num_control_points"] == 4
    assert rectifier["mean_displacement"] == pytest.approx(0.7 / 4, rel=1e-5)
    assert rectifier["max_displacement"] == pytest.approx(0.5, rel=1e-5)
    assert rectifier["mean_displacement_px"] == pytest.approx(np.mean(px), rel=1e-5)
    assert rectifier["max_displacement_px"] == pytest.approx(max(px), rel=1e-5)
    # Without the option there is no second decoding.
    assert "identity_rectification" not in dataset and "rectification_gain" not in dataset
    with open(tmp_path / "eval" / "results.json") as f:
        stored = json.load(f)["datasets"][0]["rectifier"]
    assert stored["mean_displacement_px"] == pytest.approx(np.mean(px), rel=1e-5)
    md = (tmp_path / "eval" / "results.md").read_text()
    assert "| control-point displacement (px) |" in md and "identity-rect." not in md
    assert f"| {np.mean(px):.2f} (max {max(px):.2f}) |" in md


def test_identity_comparison_decodes_the_same_batches_with_the_target_pattern(tmp_path):
    ckpt = write_checkpoint(str(tmp_path / "train"), 5, 7.0)
    config = make_config("eval_config { compare_identity_rectification: true }")
    results = _run(config, tmp_path / "eval", RectifiedStandIn, ckpt)
    (dataset,) = results["datasets"]
    # Normal path "7" (4 of the 5 scored right); identity path "8" (only the "8" right).
    assert dataset["accuracy"] == pytest.approx(0.8)
    assert dataset["identity_rectification"]["accuracy"] == pytest.approx(0.2)
    assert dataset["identity_rectification"]["one_minus_ned"] == pytest.approx(0.2)
    assert dataset["identity_rectification"]["num_correct"] == 1
    assert dataset["rectification_gain"] == pytest.approx(0.6)
    with open(tmp_path / "eval" / "results.json") as f:
        stored = json.load(f)["datasets"][0]
    assert stored["identity_rectification"]["accuracy"] == pytest.approx(0.2)
    md = (tmp_path / "eval" / "results.md").read_text()
    assert "| identity-rect. accuracy | rectification gain | control-point displacement" in md
    assert "| 20.00% | +60.00 pp |" in md
    values = {}
    events = [f for f in os.listdir(tmp_path / "eval" / "bench_a") if "tfevents" in f]
    for event in tf.train.summary_iterator(str(tmp_path / "eval" / "bench_a" / events[0])):
        values.update({v.tag: v.simple_value for v in event.summary.value})
    assert values["eval/rectification_gain"] == pytest.approx(0.6)
    assert values["eval/identity_rectification/accuracy"] == pytest.approx(0.2)


def test_identity_comparison_follows_the_num_examples_limit(tmp_path):
    ckpt = write_checkpoint(str(tmp_path / "train"), 5, 7.0)
    config = make_config("eval_config { compare_identity_rectification: true num_examples: 3 }")
    (dataset,) = _run(config, tmp_path / "eval", RectifiedStandIn, ckpt)["datasets"]
    assert dataset["size"] == 3 and dataset["accuracy"] == pytest.approx(2 / 3)
    assert dataset["identity_rectification"]["accuracy"] == pytest.approx(1 / 3)


def test_identity_path_that_creates_variables_is_refused(tmp_path):
    ckpt = write_checkpoint(str(tmp_path / "train"), 5, 7.0)
    config = make_config("eval_config { compare_identity_rectification: true }")
    with pytest.raises(RuntimeError, match="created 1 variables.*Extra"):
        _run(config, tmp_path / "eval", _LeakyStandIn, ckpt)


def test_option_without_rectifier_warns_once_and_skips(tmp_path, caplog):
    ckpt = write_checkpoint(str(tmp_path / "train"), 5, 7.0)
    config = make_config("""
        eval_input_reader { tf_record_input_reader { input_path: "x/bench_b.tfrecord" } }
        eval_config { compare_identity_rectification: true }""")
    with caplog.at_level(logging.WARNING):
        results = _run(config, tmp_path / "eval", StandInModel, ckpt)
    assert len(results["datasets"]) == 2
    for dataset in results["datasets"]:
        assert dataset["accuracy"] == pytest.approx(0.8)
        for key in ("rectifier", "identity_rectification", "rectification_gain"):
            assert key not in dataset
    warnings = [r for r in caplog.records if "compare_identity_rectification" in r.getMessage()]
    assert len(warnings) == 1
    md = (tmp_path / "eval" / "results.md").read_text()
    assert "identity-rect." not in md and "displacement" not in md


# ------------------------------------------------------------------ the real tiny model


def _tiny_checkpoint(config, directory, step, offset=None):
    """Saves an untrained tiny model; with offset (dx, dy), fc2's biases moved so that every
    predicted control point is its initial one plus offset (fc2's weights stay zero)."""
    with tf.Graph().as_default():
        model = model_builder.build(config.model, is_training=False)
        model.postprocess(model.predict(model.preprocess(tf.zeros([1, 32, 64, 3]))))
        stn = model.spatial_transformer
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            (weights,) = [v for v in tf.global_variables()
                          if v.op.name == "SpatialTransformer/LocalizationNet/fc2/weights"]
            (biases,) = [v for v in tf.global_variables()
                         if v.op.name == "SpatialTransformer/LocalizationNet/fc2/biases"]
            assert not sess.run(weights).any()
            if offset is not None:
                points = stn.init_control_points + np.asarray(offset)
                sess.run(biases.assign(np.log(points / (1.0 - points)).ravel()))  # sigmoid
            return tf.train.Saver().save(sess, os.path.join(directory, "model.ckpt"),
                                         global_step=step, write_meta_graph=False)


@pytest.mark.slow
def test_real_tiny_model_displacement_and_identity_comparison(tmp_path):
    config = config_util.load_pipeline_config(os.path.join(ROOT, "configs", "tiny.config"))
    config = config_util.merge_overrides(config, assignments=[
        "eval_config.batch_size=4", "eval_config.compare_identity_rectification=true"])
    train = str(tmp_path / "train")
    initial = _tiny_checkpoint(config, train, 1)
    moved = _tiny_checkpoint(config, train, 2, offset=(0.03, 0.04))
    batches = stand_in_batches(["ab", "cd", "ef", "gh", "ij", "kl"])

    first = _run(config, tmp_path / "eval", None, initial, batches_fn=batches)
    (dataset,) = first["datasets"]
    assert dataset["rectifier"]["num_control_points"] == 20
    for key in ("mean_displacement", "max_displacement"):
        assert dataset["rectifier"][key] == pytest.approx(0.0, abs=1e-6)
    for key in ("mean_displacement_px", "max_displacement_px"):
        assert dataset["rectifier"][key] == pytest.approx(0.0, abs=1e-4)
    # Initial pattern = target pattern in the tiny config: both paths decode the same.
    identity = dataset["identity_rectification"]
    assert identity["accuracy"] == dataset["accuracy"]
    assert identity["one_minus_ned"] == pytest.approx(dataset["one_minus_ned"])
    assert dataset["rectification_gain"] == 0.0

    second = _run(config, tmp_path / "eval", None, moved, batches_fn=batches)
    (dataset,) = second["datasets"]
    # The tiny model's input is 32 x 64: (0.03, 0.04) is (1.92, 1.28) px.
    px = np.hypot(0.03 * 64, 0.04 * 32)
    for key in ("mean_displacement", "max_displacement"):
        assert dataset["rectifier"][key] == pytest.approx(0.05, rel=1e-3)
    for key in ("mean_displacement_px", "max_displacement_px"):
        assert dataset["rectifier"][key] == pytest.approx(px, rel=1e-3)
    assert 0.0 <= dataset["identity_rectification"]["accuracy"] <= 1.0
    assert dataset["rectification_gain"] == pytest.approx(
        dataset["accuracy"] - dataset["identity_rectification"]["accuracy"])
    md = (tmp_path / "eval" / "results.md").read_text()
    assert f"| {px:.2f} (max {px:.2f}) |" in md

