"""Learning-rate schedules as functions of the global step (graph mode).

Every function takes the global step (an int64 scalar tensor) and returns a float32 scalar tensor.
They validate their Python arguments and raise ValueError naming the bad value.
"""

import math

from aster.tf_setup import tf


def exponential_decay(global_step, initial_learning_rate, decay_steps, decay_factor,
                      staircase=True):
    """initial * decay_factor ** (step / decay_steps), in whole periods when staircase.

    Raises:
      ValueError: decay_steps <= 0.
    """
    if decay_steps <= 0:
        raise ValueError(f"decay_steps must be positive, got {decay_steps}")
    return tf.train.exponential_decay(
        initial_learning_rate, global_step, decay_steps, decay_factor, staircase=staircase,
        name="exponential_decay_learning_rate")


def manual_stepping(global_step, boundaries, rates):
    """Piecewise constant: rates[i] for boundaries[i-1] <= step < boundaries[i].

    The rate switches when the global step reaches a boundary (rates[0] before the first one).

    Args:
      global_step: int64 scalar tensor.
      boundaries: strictly increasing non-negative ints, length n.
      rates: floats, length n + 1.

    Raises:
      ValueError: a boundary is negative or not an int, boundaries are not strictly increasing,
        a rate is not a number, or the lengths do not fit.
    """
    boundaries = list(boundaries)
    rates = list(rates)
    if any(not isinstance(b, int) or isinstance(b, bool) or b < 0 for b in boundaries):
        raise ValueError(f"boundaries must be non-negative ints, got {boundaries}")
    if any(b1 <= b0 for b0, b1 in zip(boundaries, boundaries[1:], strict=False)):
        raise ValueError(f"boundaries must be strictly increasing, got {boundaries}")
    if any(not isinstance(r, (int, float)) or isinstance(r, bool) for r in rates):
        raise ValueError(f"rates must be numbers, got {rates}")
    if len(rates) != len(boundaries) + 1:
        raise ValueError(
            f"need one more rate than boundaries, got {len(rates)} rates for "
            f"{len(boundaries)} boundaries")
    if not boundaries:
        return tf.constant(rates[0], tf.float32, name="learning_rate")
    step = tf.cast(global_step, tf.int64)
    passed = tf.cast(step >= tf.constant(boundaries, tf.int64), tf.int32)
    index = tf.reduce_sum(passed)
    return tf.gather(tf.constant(rates, tf.float32), index, name="learning_rate")


def cosine_decay_with_warmup(global_step, learning_rate_base, total_steps, warmup_learning_rate=0.0,
                             warmup_steps=0, hold_base_rate_steps=0, min_learning_rate=0.0):
    """Linear warmup, a hold at the base rate, then cosine decay to min_learning_rate.

    Args:
      global_step: int64 scalar tensor.
      learning_rate_base: the peak rate.
      total_steps: step at which the cosine reaches min_learning_rate (and stays there).
      warmup_learning_rate: rate at step 0; rises linearly to the base over warmup_steps.
      warmup_steps: length of the warmup.
      hold_base_rate_steps: steps at the base rate after the warmup.
      min_learning_rate: the final rate.

    Raises:
      ValueError: total_steps < warmup_steps + hold_base_rate_steps, or the warmup rate exceeds
        the base rate.
    """
    if total_steps < warmup_steps + hold_base_rate_steps:
        raise ValueError(
            f"total_steps ({total_steps}) must be >= warmup_steps + hold_base_rate_steps "
            f"({warmup_steps} + {hold_base_rate_steps})")
    if warmup_steps > 0 and warmup_learning_rate > learning_rate_base:
        raise ValueError(
            f"warmup_learning_rate ({warmup_learning_rate}) must be <= learning_rate_base "
            f"({learning_rate_base})")
    step = tf.cast(global_step, tf.float32)
    decay_start = float(warmup_steps + hold_base_rate_steps)
    decay_len = max(float(total_steps) - decay_start, 1.0)
    progress = tf.clip_by_value((step - decay_start) / decay_len, 0.0, 1.0)
    cosine = min_learning_rate + 0.5 * (learning_rate_base - min_learning_rate) * (
        1.0 + tf.cos(math.pi * progress))
    rate = tf.where(step < decay_start, tf.constant(learning_rate_base, tf.float32), cosine)
    if warmup_steps > 0:
        slope = (learning_rate_base - warmup_learning_rate) / float(warmup_steps)
        warmup = warmup_learning_rate + slope * step
        rate = tf.where(step < float(warmup_steps), warmup, rate)
    return tf.identity(rate, name="learning_rate")
