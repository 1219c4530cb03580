"""Tests for aster/inference.py: the inference graph recipe."""

import numpy as np
from stand_in_model import StandInModel

from aster import inference
from aster.core.standard_fields import PredictionFields
from aster.protos import model_pb2
from aster.tf_setup import tf


def test_build_inference_graph_returns_the_model_s_variables_and_predictions():
    with tf.Graph().as_default():
        tf.Variable(1.0, name="made_before")  # not the model's
        graph = inference.build_inference_graph(model_pb2.Model(), tf.fill([2, 4, 6, 3], 255.0),
                                                model_fn=StandInModel)
        assert [v.op.name for v in graph.variables] == ["StandIn/value"]
        assert isinstance(graph.model, StandInModel)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            images, text = sess.run([graph.images, graph.predictions[PredictionFields.text]])
    np.testing.assert_allclose(images, 1.0)  # the stand-in's preprocess: x / 127.5 - 1
    assert list(text) == [b"0", b"0"]
