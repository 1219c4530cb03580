"""Builds a tf.compat.v1 optimizer (and its learning-rate schedule) from an Optimizer config.

    optimizer = optimizer_builder.build(train_config.optimizer, global_step)

Every learning-rate schedule adds a `LearningRate` scalar summary. With `use_moving_average`
(default true, as in the original: the trap is that every config keeps shadow copies of the weights
unless it says `use_moving_average: false`) the optimizer is wrapped in
`aster.utils.optimizers.MovingAverageOptimizer`, whose shadow variables eval restores.
"""

from aster.tf_setup import tf
from aster.utils import config_checks, learning_schedules, optimizers


def _build_rms_prop(config, global_step):
    return tf.train.RMSPropOptimizer(
        build_learning_rate(config.learning_rate, global_step), decay=config.decay,
        momentum=config.momentum_optimizer_value, epsilon=config.epsilon)


def _build_momentum(config, global_step):
    return tf.train.MomentumOptimizer(
        build_learning_rate(config.learning_rate, global_step),
        momentum=config.momentum_optimizer_value)


def _build_adam(config, global_step):
    return tf.train.AdamOptimizer(build_learning_rate(config.learning_rate, global_step))


def _build_adamw(config, global_step):
    return optimizers.AdamWOptimizer(
        build_learning_rate(config.learning_rate, global_step), weight_decay=config.weight_decay,
        beta1=config.beta1, beta2=config.beta2, epsilon=config.epsilon)


def _build_nadam(config, global_step):
    return optimizers.NadamOptimizer(build_learning_rate(config.learning_rate, global_step))


def _build_adadelta(config, global_step):
    return tf.train.AdadeltaOptimizer(
        build_learning_rate(config.learning_rate, global_step), rho=config.rho)


_OPTIMIZERS = {
    "rms_prop_optimizer": _build_rms_prop,
    "momentum_optimizer": _build_momentum,
    "adam_optimizer": _build_adam,
    "adamw_optimizer": _build_adamw,
    "nadam_optimizer": _build_nadam,
    "adadelta_optimizer": _build_adadelta,
}


def build(optimizer_config, global_step=None, field_path="train_config.optimizer"):
    """Builds the optimizer.

    Args:
      optimizer_config: an optimizer_pb2.Optimizer.
      global_step: int64 scalar variable/tensor driving the schedules; defaults to
        tf.train.get_or_create_global_step().

    Returns:
      A tf.train.Optimizer (a MovingAverageOptimizer when use_moving_average is set).

    Raises:
      ConfigError (a ValueError): a config that breaks a rule of aster.utils.config_checks (no
        optimizer or learning rate chosen, an invalid schedule; the message names the field).
    """
    config_checks.check(optimizer_config, field_path)
    if global_step is None:
        global_step = tf.train.get_or_create_global_step()
    name = optimizer_config.WhichOneof("optimizer")
    optimizer = _OPTIMIZERS[name](getattr(optimizer_config, name), global_step)
    if optimizer_config.use_moving_average:
        optimizer = optimizers.MovingAverageOptimizer(
            optimizer, average_decay=optimizer_config.moving_average_decay,
            num_updates=global_step)
    return optimizer


def decay_end_step(optimizer_config):
    """The step at which the learning-rate schedule reaches its final value and stays there: the
    cosine schedule's total_steps; None for a schedule with no such end (constant, exponential,
    manual steps) or a config without an optimizer."""
    name = optimizer_config.WhichOneof("optimizer")
    if name is None:
        return None
    learning_rate = getattr(optimizer_config, name).learning_rate
    if learning_rate.WhichOneof("learning_rate") != "cosine_decay_learning_rate":
        return None
    return learning_rate.cosine_decay_learning_rate.total_steps


def _constant(config, global_step):
    del global_step
    return tf.constant(config.learning_rate, tf.float32, name="learning_rate")


def _exponential_decay(config, global_step):
    return learning_schedules.exponential_decay(
        global_step, config.initial_learning_rate, config.decay_steps, config.decay_factor,
        staircase=config.staircase)


def _manual_step(config, global_step):
    boundaries = [int(entry.step) for entry in config.schedule]
    rates = [config.initial_learning_rate] + [entry.learning_rate for entry in config.schedule]
    return learning_schedules.manual_stepping(global_step, boundaries, rates)


def _cosine_decay(config, global_step):
    return learning_schedules.cosine_decay_with_warmup(
        global_step, config.learning_rate_base, config.total_steps,
        warmup_learning_rate=config.warmup_learning_rate, warmup_steps=config.warmup_steps,
        hold_base_rate_steps=config.hold_base_rate_steps,
        min_learning_rate=config.min_learning_rate)


_SCHEDULES = {
    "constant_learning_rate": _constant,
    "exponential_decay_learning_rate": _exponential_decay,
    "manual_step_learning_rate": _manual_step,
    "cosine_decay_learning_rate": _cosine_decay,
}


def build_learning_rate(learning_rate_config, global_step, field_path="learning_rate"):
    """Builds the learning rate tensor and its `LearningRate` summary.

    Args:
      learning_rate_config: an optimizer_pb2.LearningRate.
      global_step: int64 scalar tensor.

    Returns:
      A float32 scalar tensor.

    Raises:
      ConfigError (a ValueError): no schedule chosen, or the schedule's values are invalid.
    """
    config_checks.check(learning_rate_config, field_path)
    name = learning_rate_config.WhichOneof("learning_rate")
    learning_rate = _SCHEDULES[name](getattr(learning_rate_config, name), global_step)
    tf.summary.scalar("LearningRate", learning_rate)
    return learning_rate
