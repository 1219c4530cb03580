"""Deploying a model over clones (devices of one worker), replicas (workers) and ps tasks.

A rewrite of slim's deployment/model_deploy.py for tf.compat.v1 graphs:

    deploy = DeploymentConfig(num_clones=2, clone_on_cpu=True)
    with tf.device(deploy.variables_device()):
        global_step = tf.train.get_or_create_global_step()
    clones = create_clones(deploy, model_fn)  # model_fn() -> {"losses": {name: scalar}, ...}
    with tf.device(deploy.optimizer_device()):
        optimizer = ...
    total_loss, grads_and_vars = optimize_clones(clones, optimizer)
    update_ops = first_clone_update_ops(clones)

Clone i runs on /device:GPU:i (or the CPU); its variables live on the variables device (the CPU, or
the ps tasks round robin) and are shared between clones. Each clone's loss is divided by the
number of clones and the gradients are summed, which is the gradient of the mean loss: N clones
with N*B examples give the same gradients as one clone with those N*B examples. The
regularization losses are added once (to the first clone), and batch-norm updates come from the
first clone only.
"""

import collections
import contextlib

from aster.tf_setup import tf

# Key in a model_fn's output dict holding its dict (or list) of scalar losses.
LOSSES_KEY = "losses"

# Ops that create or hold state; they go to the variables device.
_VARIABLE_OPS = frozenset([
    "Variable", "VariableV2", "VarHandleOp", "AutoReloadVariable", "MutableHashTable",
    "MutableHashTableV2", "MutableHashTableOfTensors", "MutableHashTableOfTensorsV2",
    "MutableDenseHashTable", "MutableDenseHashTableV2",
])

Clone = collections.namedtuple("Clone", ["outputs", "scope", "device"])


class DeploymentConfig:
    """Where clones, variables, inputs and the optimizer go.

    Args:
      num_clones: model copies on this worker (one per GPU, or logical CPU devices).
      clone_on_cpu: put clones on CPUs. With several clones they use /device:CPU:i, which needs a
        session (or server) made with `session_config()` (ConfigProto device_count CPU = N).
      replica_id: index of this worker among num_replicas.
      num_replicas: workers (replicas) training together.
      num_ps_tasks: parameter-server tasks; 0 keeps the variables on this worker.
      worker_job_name: the job of the workers in the cluster spec.
      ps_job_name: the job of the ps tasks.
      worker_task_index: this worker's task index in worker_job_name when it differs from
        replica_id (a cluster with a separate chief job: worker i is replica i + 1).

    Raises:
      ValueError: a count is out of range, replicas without ps tasks, or an empty job name that
        a distributed setup needs.
    """

    def __init__(self, num_clones=1, clone_on_cpu=False, replica_id=0, num_replicas=1,
                 num_ps_tasks=0, worker_job_name="worker", ps_job_name="ps",
                 worker_task_index=None):
        if num_clones < 1:
            raise ValueError(f"num_clones must be >= 1, got {num_clones}")
        if num_replicas < 1:
            raise ValueError(f"num_replicas must be >= 1, got {num_replicas}")
        if not 0 <= replica_id < num_replicas:
            raise ValueError(
                f"replica_id must be in [0, num_replicas={num_replicas}), got {replica_id}")
        if num_ps_tasks < 0:
            raise ValueError(f"num_ps_tasks must be >= 0, got {num_ps_tasks}")
        if num_replicas > 1 and num_ps_tasks == 0:
            raise ValueError(
                f"num_replicas={num_replicas} needs num_ps_tasks > 0 to share the variables")
        if num_ps_tasks > 0 and not worker_job_name:
            raise ValueError("worker_job_name must be non-empty when num_ps_tasks > 0")
        if num_ps_tasks > 0 and not ps_job_name:
            raise ValueError("ps_job_name must be non-empty when num_ps_tasks > 0")
        self._num_clones = num_clones
        self._clone_on_cpu = clone_on_cpu
        self._replica_id = replica_id
        self._num_replicas = num_replicas
        self._num_ps_tasks = num_ps_tasks
        self._worker_job_name = worker_job_name
        self._ps_job_name = ps_job_name
        self._ps_device = f"/job:{ps_job_name}" if num_ps_tasks > 0 else ""
        task = replica_id if worker_task_index is None else worker_task_index
        self._worker_device = f"/job:{worker_job_name}/task:{task}" if num_ps_tasks > 0 else ""
        self._variables_setter = None

    num_clones = property(lambda self: self._num_clones)
    clone_on_cpu = property(lambda self: self._clone_on_cpu)
    replica_id = property(lambda self: self._replica_id)
    num_replicas = property(lambda self: self._num_replicas)
    num_ps_tasks = property(lambda self: self._num_ps_tasks)
    worker_job_name = property(lambda self: self._worker_job_name)
    ps_job_name = property(lambda self: self._ps_job_name)
    worker_device = property(lambda self: self._worker_device)

    def num_cpu_devices(self):
        """Logical CPU devices the clones need on this worker."""
        return self._num_clones if self._clone_on_cpu else 1

    def session_config(self, **kwargs):
        """A ConfigProto with the CPU devices the clones need and soft placement on."""
        return tf.ConfigProto(device_count={"CPU": self.num_cpu_devices()},
                              allow_soft_placement=True, **kwargs)

    def clone_device(self, clone_index):
        """Device string of clone `clone_index` (e.g. /job:worker/task:0/device:GPU:1).

        Raises:
          ValueError: clone_index out of range.
        """
        if not 0 <= clone_index < self._num_clones:
            raise ValueError(
                f"clone_index must be in [0, num_clones={self._num_clones}), got {clone_index}")
        if self._clone_on_cpu:
            return f"{self._worker_device}/device:CPU:{clone_index}"
        return f"{self._worker_device}/device:GPU:{clone_index}"

    def clone_scope(self, clone_index):
        """Name scope of a clone: "" with one clone, else clone_<i>.

        Raises:
          ValueError: clone_index out of range.
        """
        if not 0 <= clone_index < self._num_clones:
            raise ValueError(
                f"clone_index must be in [0, num_clones={self._num_clones}), got {clone_index}")
        return f"clone_{clone_index}" if self._num_clones > 1 else ""

    def optimizer_device(self):
        """The device for the optimizer's non-variable ops (this worker's CPU)."""
        return f"{self._worker_device}/device:CPU:0"

    def inputs_device(self):
        """The device for the input pipeline (this worker's CPU)."""
        return f"{self._worker_device}/device:CPU:0"

    def variables_device(self):
        """A device string, or with ps tasks a function placing variables round robin on them.

        Use it with `tf.device(...)` (a string) or `tf.compat.v1.device(...)` (either).
        """
        if self._num_ps_tasks == 0:
            return "/device:CPU:0"
        if self._variables_setter is None:  # one setter, so the round robin spans all calls
            self._variables_setter = tf.train.replica_device_setter(
                ps_tasks=self._num_ps_tasks, ps_device=self._ps_device,
                worker_device=self._worker_device, ps_ops=sorted(_VARIABLE_OPS))
        return self._variables_setter

    def clone_device_function(self, clone_index):
        """Places variable ops on the variables device and every other op on the clone.

        Variables created by any API (slim, tf.get_variable, layers) end up shared and on the
        variables device, the computation on the clone's device.
        """
        clone_device = self.clone_device(clone_index)
        variables_device = self.variables_device()

        def _device_fn(op):
            if op.type in _VARIABLE_OPS:
                if callable(variables_device):
                    return variables_device(op)
                return variables_device
            return clone_device

        return _device_fn


def _name_scope(name):
    """tf.name_scope(name), or no new scope for "" (tf.name_scope(None) would reset to the root)."""
    return tf.name_scope(name) if name else contextlib.nullcontext("")


def create_clones(config, model_fn, args=None, kwargs=None):
    """Runs model_fn once per clone, sharing the variables.

    Args:
      config: a DeploymentConfig.
      model_fn: callable(*args, **kwargs) -> outputs; outputs[LOSSES_KEY] must hold the clone's
        losses (a dict or list of scalars) for optimize_clones.
      args, kwargs: passed to model_fn.

    Returns:
      A list of Clone(outputs, scope, device), one per clone.
    """
    clones = []
    args = args or []
    kwargs = kwargs or {}
    for i in range(config.num_clones):
        with _name_scope(config.clone_scope(i)) as clone_scope:
            with tf.device(config.clone_device_function(i)):
                with tf.variable_scope(tf.get_variable_scope(), reuse=True if i > 0 else None):
                    outputs = model_fn(*args, **kwargs)
        clones.append(Clone(outputs, clone_scope or "", config.clone_device(i)))
    return clones


def clone_losses(clone):
    """The clone's scalar losses as a list."""
    losses = clone.outputs[LOSSES_KEY]
    return list(losses.values()) if isinstance(losses, dict) else list(losses)


def _optimize_clone(optimizer, clone, num_clones, regularization_losses, **kwargs):
    """Loss of one clone (its losses / num_clones, plus regularization if given) and gradients."""
    parts = []
    losses = clone_losses(clone)
    if losses:
        clone_loss = tf.add_n(losses, name="clone_loss")
        if num_clones > 1:
            clone_loss = tf.div(clone_loss, float(num_clones), name="scaled_clone_loss")
        parts.append(clone_loss)
    if regularization_losses:
        parts.append(tf.add_n(regularization_losses, name="regularization_loss"))
    if not parts:
        return None, None
    loss = tf.add_n(parts)
    with tf.device(clone.device):
        grads_and_vars = optimizer.compute_gradients(loss, **kwargs)
    return loss, grads_and_vars


def _sum_clones_gradients(clone_grads):
    """Sums each variable's gradients over clones (IndexedSlices are concatenated)."""
    summed = []
    for grads_and_vars in zip(*clone_grads, strict=True):
        var = grads_and_vars[0][1]
        grads = [g for g, _ in grads_and_vars if g is not None]
        if not grads:
            summed.append((None, var))
        elif len(grads) == 1:
            summed.append((grads[0], var))
        elif all(isinstance(g, tf.IndexedSlices) for g in grads):
            summed.append((tf.IndexedSlices(tf.concat([g.values for g in grads], 0),
                                            tf.concat([g.indices for g in grads], 0),
                                            grads[0].dense_shape), var))
        else:
            with tf.name_scope(var.op.name + "/sum_grads"):
                summed.append((tf.add_n([tf.convert_to_tensor(g) for g in grads]), var))
    return summed


def optimize_clones(clones, optimizer, regularization_losses=None, **kwargs):
    """Computes the total loss and the summed gradients over clones.

    Args:
      clones: from create_clones.
      optimizer: a tf.train.Optimizer (only compute_gradients is called).
      regularization_losses: scalars added once (first clone); None reads the
        REGULARIZATION_LOSSES collection.
      **kwargs: passed to optimizer.compute_gradients (e.g. var_list).

    Returns:
      (total_loss scalar, list of (gradient, variable)) where total_loss = mean over clones of
      the clone losses + regularization.

    Raises:
      ValueError: no clone has a loss.
    """
    if regularization_losses is None:
        regularization_losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    losses, clone_grads = [], []
    for clone in clones:
        with _name_scope(clone.scope):
            loss, grads = _optimize_clone(optimizer, clone, len(clones), regularization_losses,
                                          **kwargs)
        if loss is not None:
            losses.append(loss)
            clone_grads.append(grads)
        regularization_losses = None  # only the first clone adds them
    if not losses:
        raise ValueError("no losses in any clone; model_fn must return outputs[LOSSES_KEY]")
    total_loss = tf.add_n(losses, name="total_loss")
    return total_loss, _sum_clones_gradients(clone_grads)


def first_clone_update_ops(clones):
    """UPDATE_OPS (batch-norm moving statistics) created by the first clone."""
    return tf.get_collection(tf.GraphKeys.UPDATE_OPS, clones[0].scope or None)
