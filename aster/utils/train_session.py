"""The trainer's session: its ConfigProto, session creators, fine-tune restore, stop and run loop.

    resume = train_session.resume_checkpoint(saver, train_dir)    # None: a new run
    creator = train_session.session_creator(scaffold, role.master, role.is_chief, resume,
                                            train_session.session_config(deploy, train_config),
                                            train_config)
    train_session.run_loop(creator, hooks, train_op, train_dir)   # NonFiniteLossError on NaN/Inf

The chief (or the single process) restores exactly the checkpoint it is given (the trainer gives
train_dir's newest, checkpoints.newest, the one the input seeding and the "finished" check read
too); the other workers wait for it to initialize the variables.
"""

import logging
import re

from aster.core import session_options
from aster.tf_setup import tf
from aster.utils import checkpoints, class_remap, variables_helper

_LOG = logging.getLogger("aster.trainer")

_NONFINITE = re.compile(r"loss (\S+) is NaN or Inf")


class NonFiniteLossError(RuntimeError):
    """A loss became NaN or Inf; the newest checkpoint is the last good one."""


def fine_tune_init_fn(train_config, model_variables, model_config=None):
    """Scaffold init_fn restoring what fine_tune_checkpoint has (only when not resuming); with
    the model's config, a variable whose class axis changed with the label map is restored class
    by class (class_remap)."""
    if not train_config.fine_tune_checkpoint:
        return None
    # A checkpoint prefix, a training or model folder, or a shipped model's name.
    path = checkpoints.resolve(train_config.fine_tune_checkpoint,
                               "train_config.fine_tune_checkpoint")
    name_map = [(m.model_prefix, m.checkpoint_prefix) for m in train_config.fine_tune_variable_map]
    skipped = []
    available = variables_helper.get_variables_available_in_checkpoint(
        model_variables, path, name_map=name_map,
        skip_regexes=list(train_config.fine_tune_skip_regexes), shape_skipped=skipped)
    remapped = class_remap.remappable(path, model_config, skipped) if model_config else []
    if not available:
        raise ValueError(f"train_config.fine_tune_checkpoint {train_config.fine_tune_checkpoint!r} "
                         "has none of the model's variables")
    # A model folder may store float16 weights (package_model write --float16): cast on restore.
    saver = checkpoints.saver_for(available, path, name="fine_tune_saver")
    _LOG.info("fine-tune: restoring %d of %d variables from %s", len(available),
              len(model_variables), path)

    def init_fn(scaffold, session):
        del scaffold
        saver.restore(session, path)
        class_remap.load(remapped, session)

    return init_fn


def restored_step(train_dir):
    """The global step of train_dir's newest checkpoint (checkpoints.newest), which the chief
    resumes from (0: none)."""
    newest = checkpoints.newest(train_dir)
    if newest is None:
        return 0
    path = newest.path
    try:
        step = int(tf.train.load_variable(path, "global_step"))
    except (tf.errors.OpError, ValueError) as error:  # e.g. deleted by the chief meanwhile
        _LOG.warning("cannot read the global step of %s (%s); the input is seeded as at step 0",
                     path, type(error).__name__)
        return 0
    _LOG.info("resuming from %s (step %d)", path, step)
    return step


def resume_checkpoint(saver, train_dir):
    """The checkpoint the chief resumes from: train_dir's newest (as checkpoints.newest), or None.

    `saver` is told of the folder's newest max_to_keep checkpoints, so that it deletes them in
    turn as it saves new ones (a session restored through the `checkpoint` state file did this;
    a checkpoint kept by keep_checkpoint_every_n_hours stays out of that count as before).
    """
    found = checkpoints.list_checkpoints(train_dir)  # the scan checkpoints.newest reads
    keep = saver.saver_def.max_to_keep
    if found and keep > 0:
        saver.recover_last_checkpoints([c.path for c in found[-keep:]])
    return found[-1].path if found else None


class _WorkerSessionCreator(tf.train.WorkerSessionCreator):
    """WorkerSessionCreator polling the chief's init every `recovery_wait_secs` (stock: 30 s)."""

    def __init__(self, recovery_wait_secs, **kwargs):
        super().__init__(**kwargs)
        self._recovery_wait_secs = recovery_wait_secs

    def _get_session_manager(self):
        if self._session_manager is None:
            self._session_manager = tf.train.SessionManager(
                local_init_op=self._scaffold.local_init_op,
                ready_op=self._scaffold.ready_op,
                ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
                graph=tf.get_default_graph(), recovery_wait_secs=self._recovery_wait_secs)
        return self._session_manager


class ExactStopAtStepHook(tf.train.StopAtStepHook):
    """Stops once the global step read after a run reaches last_step.

    The stock hook adds one to the step read before the run. A synchronous replica's run can span
    several global steps (it waits for a token while the others finish steps), so the stock hook
    would start one more run after the last step; no replica is left to complete it, and the run
    blocks until operation_timeout_ms.
    """

    def after_run(self, run_context, run_values):
        if run_context.session.run(self._global_step_tensor) >= self._last_step:
            run_context.request_stop()


def stop_hook(train_config):
    """The hook ending training at train_config.num_steps (None when it is 0: never)."""
    if train_config.num_steps <= 0:
        return None
    stop = ExactStopAtStepHook if train_config.sync_replicas else tf.train.StopAtStepHook
    return stop(last_step=train_config.num_steps)


def session_creator(scaffold, master, is_chief, checkpoint_path, config, train_config):
    """The chief's creator restores `checkpoint_path`; a worker's waits for the chief.

    Args:
      scaffold, master, config: of the session.
      is_chief: whether this process initializes (or restores) the variables.
      checkpoint_path: the checkpoint prefix the chief restores, exactly this one (not looked up
        again); None or "" initializes the variables (a new run).
      train_config: worker_recovery_wait_secs.
    """
    if is_chief:
        return tf.train.ChiefSessionCreator(scaffold=scaffold, master=master, config=config,
                                            checkpoint_filename_with_path=checkpoint_path or None)
    return _WorkerSessionCreator(train_config.worker_recovery_wait_secs, scaffold=scaffold,
                                 master=master, config=config)


def _num_gpus():
    return len(tf.config.list_physical_devices("GPU"))


def clones_on_gpus(deploy_config):
    """Whether the clones run on GPUs: placed there (not clone_on_cpu) on a machine that has any.
    Clones placed on GPUs of a machine without any run on its CPU (soft placement)."""
    return bool(not deploy_config.clone_on_cpu and _num_gpus() > 0)


def gpu_mixed_precision(deploy_config, train_config):
    """Whether training runs in GPU float16 mixed precision: train_config.mixed_precision with the
    clones on GPUs (clones_on_gpus; on CPUs the same option is oneDNN bfloat16, see
    aster.core.session_options)."""
    return bool(train_config.mixed_precision and clones_on_gpus(deploy_config))


def cpu_bfloat16(deploy_config, train_config):
    """Whether training runs in oneDNN bfloat16 on this machine's CPU: train_config.mixed_precision,
    not on GPUs (gpu_mixed_precision), on a CPU that computes bfloat16 natively (elsewhere
    session_options.configure warns and trains in float32)."""
    return bool(train_config.mixed_precision
                and not gpu_mixed_precision(deploy_config, train_config)
                and session_options.cpu_supports_bfloat16())


def loss_scaled(optimizer):
    """`optimizer` with dynamic loss scaling, for float16 gradients.

    compute_gradients differentiates loss x scale and divides the gradients by the scale (the
    gradient hooks see true gradients); apply_gradients applies them only when all are finite,
    else skips the step (global step unchanged) and halves the scale; after 2,000 finite steps in
    a row it doubles the scale (starts at 2^15). The scale is a variable, saved with the
    checkpoint.
    """
    return tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(optimizer, "dynamic")


def session_config(deploy_config, train_config):
    """The session's ConfigProto: the clones' devices, the speed options, the ps filters."""
    config = session_options.configure(
        deploy_config.session_config(), intra_op_threads=train_config.intra_op_threads,
        inter_op_threads=train_config.inter_op_threads, bfloat16=train_config.mixed_precision,
        xla_jit=train_config.xla_jit, gpu=gpu_mixed_precision(deploy_config, train_config))
    if deploy_config.num_ps_tasks > 0:
        config.device_filters.extend([f"/job:{deploy_config.ps_job_name}",
                                      deploy_config.worker_device])
        config.operation_timeout_in_ms = train_config.operation_timeout_ms
    return config


def run_loop(creator, hooks, train_op, train_dir):
    """Runs train_op until a hook stops; turns a failed loss check into NonFiniteLossError."""
    try:
        with tf.train.MonitoredSession(session_creator=creator, hooks=hooks,
                                       stop_grace_period_secs=10) as session:
            while not session.should_stop():
                session.run(train_op)
    except tf.errors.InvalidArgumentError as error:
        match = _NONFINITE.search(error.message)
        if not match:
            raise
        last = checkpoints.newest(train_dir)
        raise NonFiniteLossError(
            f"loss {match.group(1)} became NaN or Inf; training stopped. The last good checkpoint "
            f"is {last.path if last else '(none saved)'}") from error
