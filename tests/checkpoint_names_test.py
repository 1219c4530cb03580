"""Checkpoints written before the speed changes of issue 15 still load: the model's variables keep
their names and shapes.

tests/checkpoint_variables/ holds the paper and demo configs as they were at b63e91f (2026-12-02,
before the BiLSTM, decoder and bfloat16 changes) and the variables their training models had at
that commit. A Saver restores by name and shape, so a model built today from the same config with
exactly these variables restores a checkpoint of that commit. The evaluation graph (beam search,
the decoders' split kernels) must read the same variables (less the CTC head it does not decode)
and create no others.
"""

import os
import re

import pytest

from aster.builders import model_builder
from aster.tf_setup import tf
from aster.utils import config_util

HERE = os.path.join(os.path.dirname(__file__), "checkpoint_variables")
CONFIGS = ["aster_paper_b63e91f", "demo_cpu_b63e91f"]


def read_manifest(path):
    """{name: shape} of a manifest (lines "name [d0, d1, ...]", # comments)."""
    variables = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                match = re.fullmatch(r"(\S+) \[([\d, ]*)\]\n?", line)
                assert match, f"{path}: bad line {line!r}"
                variables[match.group(1)] = [int(d) for d in match.group(2).split(",") if d]
    return variables


def model_variables(config, is_training):
    """{name: shape} of the global variables of the config's model, built in a fresh graph: for
    training, preprocess + predict + loss (the trainer's model calls); else preprocess + predict
    + postprocess (evaluation's)."""
    model_config = config.model.multi_predictors_recognition_model
    with tf.Graph().as_default():
        model = model_builder.build(config.model, is_training=is_training)
        predictions = model.predict(model.preprocess(tf.zeros([2, 64, 256, 3])))
        if is_training:
            keypoints = None
            if model_config.keypoint_supervision:
                keypoints = tf.zeros([2, 2 * model_config.spatial_transformer.num_control_points])
            model.provide_groundtruth(tf.constant(["ab", "cde"]), keypoints)
            model.loss(predictions)
        else:
            model.postprocess(predictions)
        return {v.op.name: v.shape.as_list() for v in tf.global_variables()}


@pytest.mark.parametrize("name", CONFIGS)
def test_the_training_model_has_the_variables_of_b63e91f(name):
    config = config_util.load_pipeline_config(os.path.join(HERE, f"{name}.config"))
    expected = read_manifest(os.path.join(HERE, f"{name}.txt"))
    assert len(expected) > 100  # the whole model, not a stub
    assert model_variables(config, is_training=True) == expected


def test_the_evaluation_model_reads_the_same_variables():
    """All but the auxiliary CTC head's, which training builds and evaluation never decodes."""
    name = "demo_cpu_b63e91f"
    config = config_util.load_pipeline_config(os.path.join(HERE, f"{name}.config"))
    expected = read_manifest(os.path.join(HERE, f"{name}.txt"))
    evaluated = model_variables(config, is_training=False)
    assert evaluated == {k: v for k, v in expected.items() if k in evaluated}
    assert sorted(set(expected) - set(evaluated)) == ["Ctc/logits/biases", "Ctc/logits/weights"]


def test_read_manifest_rejects_a_line_without_a_shape(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("# comment\nA/kernel [3, 4]\nB/bias\n")
    with pytest.raises(AssertionError, match="bad line 'B/bias"):
        read_manifest(str(path))
