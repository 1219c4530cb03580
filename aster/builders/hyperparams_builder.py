"""Builds tf-slim arg_scopes, regularizers and initializers from Hyperparams messages.

    scope = hyperparams_builder.build(config.conv_hyperparams, is_training)
    with slim.arg_scope(scope):
        net = slim.conv2d(images, 32, [3, 3])

A CONV scope configures slim.conv2d, slim.separable_conv2d and slim.conv2d_transpose; an FC scope
configures slim.fully_connected. With batch_norm set, the layers drop their bias and apply a fused
slim.batch_norm whose moving-average updates go to tf.GraphKeys.UPDATE_OPS (the trainer runs them).
"""

from aster.protos import hyperparams_pb2
from aster.tf_setup import slim, tf
from aster.utils import config_checks

_ACTIVATIONS = {
    hyperparams_pb2.Hyperparams.NONE: None,
    hyperparams_pb2.Hyperparams.RELU: tf.nn.relu,
    hyperparams_pb2.Hyperparams.RELU_6: tf.nn.relu6,
}

_AFFECTED_OPS = {
    hyperparams_pb2.Hyperparams.CONV: [slim.conv2d, slim.separable_conv2d, slim.conv2d_transpose],
    hyperparams_pb2.Hyperparams.FC: [slim.fully_connected],
}


def build(hyperparams_config, is_training, field_path="hyperparams"):
    """Returns a slim arg_scope (a dict, for `with slim.arg_scope(scope):`).

    Args:
      hyperparams_config: hyperparams_pb2.Hyperparams.
      is_training: Python bool; batch norm uses batch statistics (and updates its moving averages)
        only when this and `batch_norm.train` are both true.
      field_path: the message's path in the pipeline config, for error messages.

    Returns:
      The arg_scope dict for the affected slim ops.

    Raises:
      ValueError: wrong message type, or an invalid regularizer or initializer.
    """
    if not isinstance(hyperparams_config, hyperparams_pb2.Hyperparams):
        raise ValueError(
            f"{field_path}: expected a Hyperparams message, got {type(hyperparams_config).__name__}"
        )
    config_checks.check(hyperparams_config, field_path)
    # proto2 enums are closed: a value outside Op / Activation never reaches here.
    affected_ops = _AFFECTED_OPS[hyperparams_config.op]
    kwargs = {
        "weights_regularizer": None,
        "activation_fn": _ACTIVATIONS[hyperparams_config.activation],
        "normalizer_fn": None,
        "normalizer_params": None,
    }
    if hyperparams_config.HasField("regularizer"):
        kwargs["weights_regularizer"] = build_regularizer(
            hyperparams_config.regularizer, f"{field_path}.regularizer"
        )
    if hyperparams_config.HasField("initializer"):
        kwargs["weights_initializer"] = build_initializer(
            hyperparams_config.initializer, f"{field_path}.initializer"
        )
    if hyperparams_config.HasField("batch_norm"):
        kwargs["normalizer_fn"] = slim.batch_norm
        kwargs["normalizer_params"] = build_batch_norm_params(
            hyperparams_config.batch_norm, is_training
        )
    with slim.arg_scope(affected_ops, **kwargs) as scope:
        return scope


def build_batch_norm_params(batch_norm_config, is_training):
    """Returns the keyword arguments of slim.batch_norm for a BatchNorm message.

    `updates_collections` is passed as a list so that slim takes its own fused path (no Keras
    layer) and still adds the moving-average updates to tf.GraphKeys.UPDATE_OPS.
    """
    return {
        "decay": batch_norm_config.decay,
        "center": batch_norm_config.center,
        "scale": batch_norm_config.scale,
        "epsilon": batch_norm_config.epsilon,
        "fused": True,
        "data_format": "NHWC",
        "is_training": bool(is_training and batch_norm_config.train),
        "updates_collections": [tf.GraphKeys.UPDATE_OPS],
    }


# ---------------------------------------------------------------- regularizers


def _build_l1_regularizer(config, field_path):
    return slim.l1_regularizer(scale=float(config.weight)) if config.weight > 0 else None


def _build_l2_regularizer(config, field_path):
    return slim.l2_regularizer(scale=float(config.weight)) if config.weight > 0 else None


_REGULARIZERS = {
    "l1_regularizer": _build_l1_regularizer,
    "l2_regularizer": _build_l2_regularizer,
}


def build_regularizer(regularizer_config, field_path="regularizer"):
    """Returns a weight regularizer function, or None when its weight is 0.

    L1: weight * sum(|w|). L2: weight * sum(w^2) / 2 (tf.nn.l2_loss). A weight of 0 adds nothing
    to the regularization losses.

    Args:
      regularizer_config: hyperparams_pb2.Regularizer.
      field_path: the message's path in the pipeline config, for error messages.

    Returns:
      A function tensor -> scalar tensor, or None.

    Raises:
      ValueError: the oneof is empty or the weight is negative.
    """
    config_checks.check(regularizer_config, field_path)
    name = regularizer_config.WhichOneof("regularizer_oneof")
    return _REGULARIZERS[name](getattr(regularizer_config, name), f"{field_path}.{name}")


# ---------------------------------------------------------------- initializers


def _build_truncated_normal(config, field_path):
    return tf.truncated_normal_initializer(mean=config.mean, stddev=config.stddev)


def _build_variance_scaling(config, field_path):
    mode = hyperparams_pb2.VarianceScalingInitializer.Mode.Name(config.mode)
    return slim.variance_scaling_initializer(
        factor=config.factor, mode=mode, uniform=config.uniform
    )


def _build_orthogonal(config, field_path):
    seed = config.seed if config.HasField("seed") else None
    return tf.orthogonal_initializer(gain=config.gain, seed=seed)


def _build_uniform(config, field_path):
    return tf.random_uniform_initializer(minval=config.minval, maxval=config.maxval)


_INITIALIZERS = {
    "truncated_normal_initializer": _build_truncated_normal,
    "variance_scaling_initializer": _build_variance_scaling,
    "orthogonal_initializer": _build_orthogonal,
    "uniform_initializer": _build_uniform,
}


def build_initializer(initializer_config, field_path="initializer"):
    """Returns a variable initializer for an Initializer message.

    Args:
      initializer_config: hyperparams_pb2.Initializer.
      field_path: the message's path in the pipeline config, for error messages.

    Raises:
      ValueError: the oneof is empty or a parameter is out of range.
    """
    config_checks.check(initializer_config, field_path)
    name = initializer_config.WhichOneof("initializer_oneof")
    return _INITIALIZERS[name](getattr(initializer_config, name), f"{field_path}.{name}")
