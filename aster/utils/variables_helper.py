"""Selecting variables by name and transforming (gradient, variable) lists.

Regexes are matched with re.match against `var.op.name` (from the start of the name, as the
original ASTER / object-detection helpers did): "FeatureExtractor/" matches every variable under
that scope. The gradient functions take and return lists of (gradient, variable) pairs; gradients
may be None (skipped) or tf.IndexedSlices.
"""

import logging
import re

from aster.tf_setup import tf
from aster.utils import checkpoints

# The bias multiplier's targets: variables whose last name component is bias, biases or beta.
BIAS_REGEXES = (r"(?:.*/)?bias(?:es)?$", r"(?:.*/)?beta$")

_LOG = logging.getLogger(__name__)


def _matches(name, regexes):
    return any(re.match(pattern, name) for pattern in regexes)


def filter_variables(variables, filter_regex_list, invert=False):
    """The variables whose names match any regex (or, with invert, match none)."""
    return [v for v in variables if _matches(v.op.name, filter_regex_list) != invert]


def _scale(grad, factor):
    if isinstance(grad, tf.IndexedSlices):
        return tf.IndexedSlices(grad.values * factor, grad.indices, grad.dense_shape)
    return grad * factor


def multiply_gradients(grads_and_vars, multipliers):
    """Scales gradients by per-variable factors.

    Args:
      grads_and_vars: list of (gradient, variable).
      multipliers: dict from variable (or its op name) to a float or float32 scalar tensor.

    Returns:
      A new list of (gradient, variable).
    """
    result = []
    for grad, var in grads_and_vars:
        factor = multipliers.get(var, multipliers.get(var.op.name))
        if grad is not None and factor is not None:
            with tf.name_scope("multiply_gradients"):
                grad = _scale(grad, tf.cast(factor, grad.dtype))
        result.append((grad, var))
    return result


def multiply_gradients_matching_regex(grads_and_vars, regex_list, multiplier):
    """Multiplies the gradients of variables matching any regex by `multiplier`."""
    matching = filter_variables([v for _, v in grads_and_vars], regex_list)
    for var in matching:
        _LOG.info("gradient of %s multiplied by %g", var.op.name, multiplier)
    return multiply_gradients(grads_and_vars, {v: multiplier for v in matching})


def multiply_bias_gradients(grads_and_vars, multiplier):
    """Multiplies the gradients of biases and batch-norm betas (BIAS_REGEXES) by `multiplier`."""
    return multiply_gradients_matching_regex(grads_and_vars, BIAS_REGEXES, multiplier)


def freeze_gradients_matching_regex(grads_and_vars, regex_list):
    """Drops the (gradient, variable) pairs of variables matching any regex (they stay fixed)."""
    frozen = set(filter_variables([v for _, v in grads_and_vars], regex_list))
    for var in frozen:
        _LOG.info("freezing %s", var.op.name)
    return [(g, v) for g, v in grads_and_vars if v not in frozen]


def clip_gradient_norms(grads_and_vars, max_norm):
    """Clips each gradient to L2 norm <= max_norm (tf.contrib.training.clip_gradient_norms).

    Raises:
      ValueError: max_norm <= 0.
    """
    if max_norm <= 0:
        raise ValueError(f"max_norm must be positive, got {max_norm}")
    result = []
    for grad, var in grads_and_vars:
        if grad is not None:
            with tf.name_scope("clip_gradient_norms"):
                if isinstance(grad, tf.IndexedSlices):
                    grad = tf.IndexedSlices(tf.clip_by_norm(grad.values, max_norm), grad.indices,
                                            grad.dense_shape)
                else:
                    grad = tf.clip_by_norm(grad, max_norm)
        result.append((grad, var))
    return result


def clip_gradients_by_global_norm(grads_and_vars, max_norm):
    """Scales all gradients together so their global L2 norm is <= max_norm.

    Raises:
      ValueError: max_norm <= 0.
    """
    if max_norm <= 0:
        raise ValueError(f"max_norm must be positive, got {max_norm}")
    present = [(g, v) for g, v in grads_and_vars if g is not None]
    if not present:
        return list(grads_and_vars)
    with tf.name_scope("clip_gradients_by_global_norm"):
        clipped, _ = tf.clip_by_global_norm([g for g, _ in present], max_norm)
    by_var = {v: g for (_, v), g in zip(present, clipped, strict=True)}
    return [(by_var.get(v, g), v) for g, v in grads_and_vars]


def _checkpoint_name(name, name_map):
    for model_prefix, checkpoint_prefix in name_map:
        if name.startswith(model_prefix):
            return checkpoint_prefix + name[len(model_prefix):]
    return name


def get_variables_available_in_checkpoint(variables, checkpoint_path, name_map=(),
                                          skip_regexes=(), shape_skipped=None):
    """The variables that can be restored from a checkpoint, keyed by their checkpoint names.

    A variable is skipped (with a warning) when it matches a skip regex (info only), is missing
    from the checkpoint, or has a different shape there.

    Args:
      variables: list of tf.Variable.
      checkpoint_path: what checkpoints.resolve takes: a checkpoint prefix, a training or model
        folder (its newest complete checkpoint) or a shipped model's name.
      name_map: (model_prefix, checkpoint_prefix) pairs; the first matching prefix renames.
      skip_regexes: regexes of variables never restored.
      shape_skipped: optional list; each variable skipped for its shape is appended to it as
        (variable, its checkpoint name) (what class_remap may still restore class by class).

    Returns:
      dict from checkpoint variable name to tf.Variable, suitable for tf.train.Saver(var_list=...).

    Raises:
      ValueError: no checkpoint there (checkpoints.resolve), or one that cannot be read.
    """
    checkpoint_path = checkpoints.resolve(checkpoint_path)
    try:
        shapes = dict(tf.train.list_variables(checkpoint_path))
    except (tf.errors.OpError, ValueError) as error:  # NotFound, DataLoss, a damaged index
        raise ValueError(f"cannot read checkpoint {checkpoint_path!r}: {error}") from error
    available = {}
    for var in variables:
        name = var.op.name
        if _matches(name, skip_regexes):
            _LOG.info("fine-tune: %s skipped (fine_tune_skip_regexes)", name)
            continue
        ckpt_name = _checkpoint_name(name, name_map)
        if ckpt_name not in shapes:
            _LOG.warning("fine-tune: %s not in checkpoint %s (as %s); it keeps its initializer",
                         name, checkpoint_path, ckpt_name)
            continue
        if list(shapes[ckpt_name]) != var.shape.as_list():
            _LOG.warning("fine-tune: %s has shape %s but the checkpoint's %s has %s; skipped",
                         name, var.shape.as_list(), ckpt_name, shapes[ckpt_name])
            if shape_skipped is not None:
                shape_skipped.append((var, ckpt_name))
            continue
        available[ckpt_name] = var
    return available
