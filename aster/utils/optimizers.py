"""Optimizers that tf.compat.v1 lacks: AdamW, Nadam, and a moving-average wrapper.

These replace `tf.contrib.opt.NadamOptimizer`, `AdamWOptimizer` and `MovingAverageOptimizer`,
built only on public tf.compat.v1 classes and `tf.raw_ops`.
"""

import re

from aster.tf_setup import tf

# Variables that AdamW decays: convolution / dense kernels (slim "weights", Keras "kernel").
KERNEL_REGEX = r"(?:.*/)?(?:weights|kernel)$"


def _dense_from_indexed(values, indices, var):
    """Sums sparse gradient rows into a dense tensor shaped like var."""
    return tf.math.unsorted_segment_sum(values, indices, tf.shape(var, out_type=indices.dtype)[0])


class NadamOptimizer(tf.train.AdamOptimizer):
    """Adam with Nesterov momentum (Dozat 2016), as tf.contrib.opt.NadamOptimizer computed it.

    Sparse gradients are summed into dense ones first (correct, not memory-optimal).
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name="Nadam"):
        super().__init__(learning_rate, beta1, beta2, epsilon, use_locking, name)

    def _adam_args(self, dtype):
        beta1_power, beta2_power = self._get_beta_accumulators()
        return {
            "beta1_power": tf.cast(beta1_power, dtype),
            "beta2_power": tf.cast(beta2_power, dtype),
            "lr": tf.cast(self._lr_t, dtype),
            "beta1": tf.cast(self._beta1_t, dtype),
            "beta2": tf.cast(self._beta2_t, dtype),
            "epsilon": tf.cast(self._epsilon_t, dtype),
            "use_locking": self._use_locking,
            "use_nesterov": True,
        }

    def _apply_dense(self, grad, var):
        return tf.raw_ops.ApplyAdam(
            var=var, m=self.get_slot(var, "m"), v=self.get_slot(var, "v"), grad=grad,
            **self._adam_args(var.dtype.base_dtype)).op

    def _resource_apply_dense(self, grad, var):
        return tf.raw_ops.ResourceApplyAdam(
            var=var.handle, m=self.get_slot(var, "m").handle, v=self.get_slot(var, "v").handle,
            grad=grad, **self._adam_args(grad.dtype.base_dtype))

    def _apply_sparse(self, grad, var):
        return self._apply_dense(_dense_from_indexed(grad.values, grad.indices, var), var)

    def _resource_apply_sparse(self, grad, var, indices):
        return self._resource_apply_dense(_dense_from_indexed(grad, indices, var), var)


class AdamWOptimizer(tf.train.AdamOptimizer):
    """Adam with decoupled weight decay (Loshchilov & Hutter 2019) on kernels only.

    Before each variable's Adam update, a variable whose name matches `decay_regex` (kernels:
    names ending in "weights" or "kernel"; never biases or batch-norm parameters) is multiplied by
    (1 - learning_rate * weight_decay), PyTorch's AdamW convention.
    """

    def __init__(self, learning_rate=0.001, weight_decay=0.01, beta1=0.9, beta2=0.999,
                 epsilon=1e-8, decay_regex=KERNEL_REGEX, use_locking=False, name="AdamW"):
        if weight_decay < 0:
            raise ValueError(f"weight_decay must be >= 0, got {weight_decay}")
        super().__init__(learning_rate, beta1, beta2, epsilon, use_locking, name)
        self._weight_decay = weight_decay
        self._decay_regex = re.compile(decay_regex)

    def decays(self, var):
        """Whether var gets weight decay."""
        return bool(self._decay_regex.match(var.op.name))

    def _decay_deps(self, var):
        if not self._weight_decay or not self.decays(var):
            return []
        factor = tf.cast(self._lr_t, var.dtype.base_dtype) * self._weight_decay
        return [tf.assign_sub(var, factor * var.read_value(), use_locking=self._use_locking).op]

    def _apply_dense(self, grad, var):
        with tf.control_dependencies(self._decay_deps(var)):
            return super()._apply_dense(grad, var)

    def _resource_apply_dense(self, grad, var):
        with tf.control_dependencies(self._decay_deps(var)):
            return super()._resource_apply_dense(grad, var)

    def _apply_sparse(self, grad, var):
        with tf.control_dependencies(self._decay_deps(var)):
            return super()._apply_sparse(grad, var)

    def _resource_apply_sparse(self, grad, var, indices):
        with tf.control_dependencies(self._decay_deps(var)):
            return super()._resource_apply_sparse(grad, var, indices)


class MovingAverageOptimizer(tf.train.Optimizer):
    """Wraps an optimizer; after each update, updates an exponential moving average of the weights.

    The shadow variables are named `<variable>/ExponentialMovingAverage` and saved in checkpoints
    with everything else; at eval, `tf.train.ExponentialMovingAverage(decay).variables_to_restore()`
    (or `self.variables_to_restore()`) maps them back onto the model variables. With
    `num_updates` (the global step) the decay is min(decay, (1 + step) / (10 + step)).
    """

    def __init__(self, optimizer, average_decay=0.9999, num_updates=None,
                 name="MovingAverageOptimizer"):
        super().__init__(use_locking=False, name=name)
        self._opt = optimizer
        self._ema = tf.train.ExponentialMovingAverage(average_decay, num_updates=num_updates)

    @property
    def ema(self):
        """The tf.train.ExponentialMovingAverage holding the shadow variables."""
        return self._ema

    @property
    def wrapped(self):
        """The optimizer doing the updates."""
        return self._opt

    def variables_to_restore(self, moving_avg_variables=None):
        return self._ema.variables_to_restore(moving_avg_variables)

    def compute_gradients(self, *args, **kwargs):
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        grads_and_vars = list(grads_and_vars)
        update = self._opt.apply_gradients(grads_and_vars, global_step=global_step, name=name)
        var_list = [v for g, v in grads_and_vars if g is not None]
        with tf.control_dependencies([update]):
            average = self._ema.apply(var_list)
        return tf.group(update, average, name="update_with_moving_average")

    def get_slot(self, var, name):
        return self._opt.get_slot(var, name)

    def get_slot_names(self):
        return self._opt.get_slot_names()

    def variables(self):
        return self._opt.variables()
