"""Parameter and FLOP counts of a model config (used by tests and benchmarks/flops.py)."""

import numpy as np

from aster.builders import model_builder
from aster.tf_setup import tf


def count_parameters(variables):
    """Total number of elements in `variables` (a list of tf.Variable)."""
    return int(sum(np.prod(v.shape.as_list()) for v in variables))


def _float_ops(graph):
    opts = tf.profiler.ProfileOptionBuilder.float_operation()
    opts["output"] = "none"
    return tf.profiler.profile(graph, options=opts).total_float_ops


def model_stats(model_config, input_height, input_width, label="x"):
    """Trainable parameters and forward FLOPs per image of a model config.

    FLOPs are TensorFlow's profiler count (a multiply and an add count as two), for one image of
    input_height x input_width: the rectifier and encoder, plus every decoder run teacher-forced
    over all its steps with one hypothesis (a beam of width k costs about k times the decoder
    share at inference).

    Args:
      model_config: model_pb2.Model.
      input_height, input_width: int, the size fed to preprocess().
      label: a groundtruth word for the teacher-forced pass.

    Returns:
      dict with "parameters", "encoder_flops", "decoder_flops", "forward_flops" (ints).
    """
    images = np.zeros([1, input_height, input_width, 3], np.float32)
    with tf.Graph().as_default() as graph:
        model = model_builder.build(model_config, is_training=False)
        model.predict(model.preprocess(tf.constant(images)))
        encoder_flops = _float_ops(graph)  # decoders inside while loops are not counted here
    with tf.Graph().as_default() as graph:
        model = model_builder.build(model_config, is_training=True)
        predictions = model.predict(model.preprocess(tf.constant(images)))
        model.provide_groundtruth(tf.constant([label]))
        model.loss(predictions)
        total_flops = _float_ops(graph)
        parameters = count_parameters(tf.trainable_variables())
    return {
        "parameters": parameters,
        "encoder_flops": encoder_flops,
        "decoder_flops": total_flops - encoder_flops,
        "forward_flops": total_flops,
    }
