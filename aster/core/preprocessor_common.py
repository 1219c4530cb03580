"""Helpers shared by the preprocessing ops: value range, seeded random draws, optional application.

Images in the pipeline are float32 in [0, 255] ([H, W, C], one example at a time inside tf.data);
every op that can leave that range clips back to it.
"""

from aster.tf_setup import tf

PIXEL_MIN = 0.0
PIXEL_MAX = 255.0


def clip(image):
    """Clips pixel values to [0, 255]."""
    return tf.clip_by_value(image, PIXEL_MIN, PIXEL_MAX)


def sub_seed(seed, k):
    """A distinct op-level seed for the k-th random draw of an op (None stays None)."""
    return None if seed is None else int(seed) * 7919 + k


def uniform(minval, maxval, seed=None, shape=(), dtype=tf.float32):
    """Random draw in [minval, maxval) (ints: [minval, maxval)); op-level seed for tests."""
    return tf.random.uniform(list(shape), minval, maxval, dtype=dtype, seed=seed)


def maybe_apply(probability, fn, inputs, seed=None):
    """Applies `fn` to `inputs` with the given probability.

    Args:
      probability: Python float; <= 0 never applies, >= 1 always (no random draw).
      fn: function of `inputs` (a tuple of tensors) returning a tuple of the same structure.
      inputs: tuple of tensors.
      seed: op-level seed of the draw.

    Returns:
      tuple of tensors, `fn(inputs)` or `inputs`.
    """
    if probability >= 1.0:
        return tuple(fn(inputs))
    if probability <= 0.0:
        return tuple(inputs)
    apply = tf.less(uniform(0.0, 1.0, seed), probability)
    out = tf.cond(apply, lambda: tuple(fn(inputs)), lambda: tuple(tf.identity(t) for t in inputs))
    for o, i in zip(out, inputs, strict=True):
        o.set_shape(i.shape)
    return tuple(out)


def check_range(name, lo, hi, lo_limit=None, hi_limit=None):
    """Raises ValueError unless lo <= hi (and both lie within the given limits)."""
    if lo > hi:
        raise ValueError(f"{name}: minimum {lo} is larger than maximum {hi}")
    if lo_limit is not None and lo < lo_limit:
        raise ValueError(f"{name}: {lo} is below {lo_limit}")
    if hi_limit is not None and hi > hi_limit:
        raise ValueError(f"{name}: {hi} is above {hi_limit}")


def check_probability(name, probability):
    """Raises ValueError unless 0 <= probability <= 1."""
    if not 0.0 <= probability <= 1.0:
        raise ValueError(f"{name}.probability must be in [0, 1], got {probability}")
