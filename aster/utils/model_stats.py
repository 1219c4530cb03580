"""Parameter and FLOP counts of a model (used by the trainer's start-up log, tests and
benchmarks/flops.py).

    model_stats.parameter_count()                    # trainable parameters of the default graph
    model_stats.model_stats(functools.partial(model_builder.build, config.model), 64, 256)
"""

import numpy as np

from aster.core.standard_fields import PredictionFields
from aster.tf_setup import tf


def parameter_count(variables=None):
    """Total number of elements in the given (default: trainable) variables."""
    variables = tf.trainable_variables() if variables is None else variables
    return sum(int(v.shape.num_elements() or 0) for v in variables)


def _float_ops(graph):
    opts = tf.profiler.ProfileOptionBuilder.float_operation()
    opts["output"] = "none"
    return tf.profiler.profile(graph, options=opts).total_float_ops


def model_stats(build_model, input_height, input_width, label="x"):
    """Trainable parameters and forward FLOPs per image of a model.

    FLOPs are TensorFlow's profiler count (a multiply and an add count as two), for one image of
    input_height x input_width: the rectifier and encoder, plus every decoder run teacher-forced
    over all its steps with one hypothesis (a beam of width k costs about k times the decoder
    share at inference).

    Args:
      build_model: callable(is_training) -> RecognitionModel, e.g.
        functools.partial(model_builder.build, model_config) (the model is built twice).
      input_height, input_width: int, the size fed to preprocess().
      label: a groundtruth word for the teacher-forced pass.

    Returns:
      dict with "parameters", "encoder_flops", "decoder_flops", "forward_flops" (ints).
    """
    images = np.zeros([1, input_height, input_width, 3], np.float32)
    with tf.Graph().as_default() as graph:
        model = build_model(is_training=False)
        model.predict(model.preprocess(tf.constant(images)))
        encoder_flops = _float_ops(graph)  # decoders inside while loops are not counted here
    # The teacher-forced steps after the first run under tf.cond (AttentionDecoder.
    # teacher_forced_logits): built as version-1 control flow, their ops stay in the graph, where
    # the profiler counts them, instead of in functions, where it does not.
    control_flow_v2 = tf.control_flow_v2_enabled()
    tf.disable_control_flow_v2()
    try:
        with tf.Graph().as_default() as graph:
            model = build_model(is_training=True)
            predictions = model.predict(model.preprocess(tf.constant(images)))
            # A keypoint-supervised model's loss needs keypoints: zeros (counted as missing) will
            # do.
            points = predictions.get(PredictionFields.control_points)
            keypoints = None if points is None else tf.zeros([1, 2 * int(points.shape[1])])
            model.provide_groundtruth(tf.constant([label]), keypoints)
            model.loss(predictions)
            total_flops = _float_ops(graph)
            parameters = parameter_count()
    finally:
        if control_flow_v2:
            tf.enable_control_flow_v2()
    return {
        "parameters": parameters,
        "encoder_flops": encoder_flops,
        "decoder_flops": total_flops - encoder_flops,
        "forward_flops": total_flops,
    }
