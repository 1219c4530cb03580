"""The trainer's train op: gradient hooks, loss checks and applying the gradients.

    grads_and_vars = train_ops.gradient_hooks(gradients, train_config)
    checks = train_ops.loss_checks(clones, total_loss)
    train_op, updates_norm = train_ops.train_op(optimizer, grads_and_vars, global_step, total_loss,
                                                update_ops, checks, track_updates=True)
"""

from aster.tf_setup import tf
from aster.utils import model_deploy, variables_helper


def gradient_hooks(grads_and_vars, train_config):
    """Bias multiplier, regex multipliers, freeze, clip: the original order."""
    if train_config.bias_grad_multiplier:
        grads_and_vars = variables_helper.multiply_bias_gradients(
            grads_and_vars, train_config.bias_grad_multiplier)
    for entry in train_config.gradient_multipliers:
        grads_and_vars = variables_helper.multiply_gradients_matching_regex(
            grads_and_vars, [entry.regex], entry.multiplier)
    if train_config.freeze_variables:
        grads_and_vars = variables_helper.freeze_gradients_matching_regex(
            grads_and_vars, list(train_config.freeze_variables))
    if train_config.gradient_clipping_by_norm > 0:
        grads_and_vars = variables_helper.clip_gradient_norms(
            grads_and_vars, train_config.gradient_clipping_by_norm)
    if train_config.clip_gradients_by_global_norm > 0:
        grads_and_vars = variables_helper.clip_gradients_by_global_norm(
            grads_and_vars, train_config.clip_gradients_by_global_norm)
    return grads_and_vars


def clips_gradients(train_config):
    """Whether gradient_hooks clips (then the clipped norm gets its own summary)."""
    return (train_config.gradient_clipping_by_norm > 0
            or train_config.clip_gradients_by_global_norm > 0)


def loss_checks(clones, total_loss):
    """check_numerics on every clone loss and the total, each message naming its loss."""
    checks = []
    for clone in clones:
        losses = clone.outputs[model_deploy.LOSSES_KEY]
        items = losses.items() if isinstance(losses, dict) else enumerate(losses)
        for name, loss in items:
            label = f"{clone.scope}{name}"
            checks.append(tf.debugging.check_numerics(loss, f"loss {label} is NaN or Inf"))
    # The total is checked after the single losses, so a bad loss is reported by its own name.
    with tf.control_dependencies(checks):
        checks.append(tf.debugging.check_numerics(total_loss, "loss total_loss is NaN or Inf"))
    return checks


def _gated(grads_and_vars, gates):
    """The gradients, each passed through an identity that runs only after `gates`."""
    if not gates:
        return grads_and_vars
    with tf.control_dependencies(gates):
        return [(None if g is None else tf.identity(g), v) for g, v in grads_and_vars]


def train_op(optimizer, grads_and_vars, global_step, total_loss, update_ops, checks,
             track_updates):
    """Applies the gradients after the loss checks; returns (train_op, updates_norm or None).

    The train op's value is the (checked) total loss; running it applies the gradients (and the
    moving average) and the first clone's batch-norm updates. Only the gradients wait for the
    checks: apply_gradients is built outside any control dependency, so the ops it makes
    (SyncReplicasOptimizer's token queue and the chief's sync op) do not run the loss or the input.
    """
    params = [v for g, v in grads_and_vars if g is not None]
    with tf.control_dependencies(checks):
        before = [tf.identity(v.read_value()) for v in params] if track_updates else []
    apply_op = optimizer.apply_gradients(_gated(grads_and_vars, checks + before),
                                         global_step=global_step)
    updates_norm = None
    if track_updates:
        with tf.control_dependencies([apply_op]):
            after = [v.read_value() for v in params]
        updates_norm = tf.global_norm([a - b for a, b in zip(after, before, strict=True)])
    with tf.control_dependencies([apply_op, *update_ops]):
        return tf.identity(checks[-1] if checks else total_loss, name="train_op"), updates_norm
