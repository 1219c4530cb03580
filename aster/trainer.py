"""Trains a recognition model: the original ASTER trainer flow on tf.compat.v1, working end to end.

    trainer.train(pipeline_config, train_dir, model_deploy.DeploymentConfig(num_clones=2))

Reading order of train(): global step -> inputs -> model clones -> optimizer (+ sync replicas)
-> gradients and their hooks (bias multiplier, regex multipliers, freeze, clip) -> train op with the
loss check and batch-norm updates -> summaries -> scaffold (savers, fine-tune) -> hooks -> session
loop. Checkpoints are `<train_dir>/model.ckpt-<step>`; the merged config is
`<train_dir>/pipeline.config`; rerunning with the same train_dir resumes from the newest checkpoint.
"""

import functools
import logging
import os
import re

from aster.builders import input_reader_builder, optimizer_builder
from aster.core import session_options
from aster.core.standard_fields import InputDataFields
from aster.tf_setup import tf
from aster.utils import config_checks, config_util, hooks, model_deploy, variables_helper
from aster.utils.summaries import add_summaries

_LOG = logging.getLogger("aster.trainer")

_NONFINITE = re.compile(r"loss (\S+) is NaN or Inf")


class NonFiniteLossError(RuntimeError):
    """A loss became NaN or Inf; the newest checkpoint is the last good one."""


def _default_model_builder():
    # Imported on use: tests and tools that pass their own build_model need not build the model.
    from aster.builders import model_builder

    return model_builder.build


# --------------------------------------------------------------------------- model per clone


def _clone_fn(build_model, model_config, batch_queue):
    """Runs one clone: dequeue, preprocess, groundtruth, predict, loss."""
    batch = batch_queue.dequeue()
    model = build_model(model_config, is_training=True)
    preprocessed = model.preprocess(batch[InputDataFields.image])
    model.provide_groundtruth(batch[InputDataFields.groundtruth_text],
                              batch.get(InputDataFields.groundtruth_keypoints))
    predictions = model.predict(preprocessed)
    losses = model.loss(predictions)
    return {model_deploy.LOSSES_KEY: losses, "predictions": predictions,
            "preprocessed_images": preprocessed}


# --------------------------------------------------------------------------- gradients


def _gradient_hooks(grads_and_vars, train_config):
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


def _clips_gradients(train_config):
    return (train_config.gradient_clipping_by_norm > 0
            or train_config.clip_gradients_by_global_norm > 0)


def _loss_checks(clones, total_loss):
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


def _train_op(optimizer, grads_and_vars, global_step, total_loss, update_ops, checks,
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


# --------------------------------------------------------------------------- session


def _fine_tune_init_fn(train_config, model_variables):
    """Scaffold init_fn restoring what fine_tune_checkpoint has (only when not resuming)."""
    if not train_config.fine_tune_checkpoint:
        return None
    name_map = [(m.model_prefix, m.checkpoint_prefix) for m in train_config.fine_tune_variable_map]
    available = variables_helper.get_variables_available_in_checkpoint(
        model_variables, train_config.fine_tune_checkpoint, name_map=name_map,
        skip_regexes=list(train_config.fine_tune_skip_regexes))
    if not available:
        raise ValueError(f"train_config.fine_tune_checkpoint {train_config.fine_tune_checkpoint!r} "
                         "has none of the model's variables")
    saver = tf.train.Saver(available, name="fine_tune_saver")
    path = train_config.fine_tune_checkpoint
    if tf.gfile.IsDirectory(path):
        path = tf.train.latest_checkpoint(path)
    _LOG.info("fine-tune: restoring %d of %d variables from %s", len(available),
              len(model_variables), path)

    def init_fn(scaffold, session):
        del scaffold
        saver.restore(session, path)

    return init_fn


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


def _restored_step(train_dir):
    """The global step of train_dir's newest checkpoint, which the chief resumes from (0: none)."""
    path = tf.train.latest_checkpoint(train_dir)
    if not path:
        return 0
    try:
        step = int(tf.train.load_variable(path, "global_step"))
    except (tf.errors.OpError, ValueError) as error:  # e.g. deleted by the chief meanwhile
        _LOG.warning("cannot read the global step of %s (%s); the input is seeded as at step 0",
                     path, type(error).__name__)
        return 0
    _LOG.info("resuming from %s (step %d)", path, step)
    return step


class _ExactStopAtStepHook(tf.train.StopAtStepHook):
    """Stops once the global step read after a run reaches last_step.

    The stock hook adds one to the step read before the run. A synchronous replica's run can span
    several global steps (it waits for a token while the others finish steps), so the stock hook
    would start one more run after the last step; no replica is left to complete it, and the run
    blocks until operation_timeout_ms.
    """

    def after_run(self, run_context, run_values):
        if run_context.session.run(self._global_step_tensor) >= self._last_step:
            run_context.request_stop()


def _session_creator(scaffold, master, is_chief, train_dir, config, train_config):
    if is_chief:
        return tf.train.ChiefSessionCreator(scaffold=scaffold, master=master, config=config,
                                            checkpoint_dir=train_dir)
    return _WorkerSessionCreator(train_config.worker_recovery_wait_secs, scaffold=scaffold,
                                 master=master, config=config)


def _chief_hooks(train_config, train_dir, saver, scaffold, total_loss, images_per_step):
    """Checkpoints, summaries, step rate, progress log, profiler and in-training eval.

    With eval_every_n_steps N the checkpoint hook also saves at each multiple of N, whatever the
    save intervals, and the evaluator (its listener and a hook) evaluates those checkpoints.
    """
    evaluator = None
    if train_config.eval_every_n_steps > 0:
        evaluator = hooks.BackgroundEvaluator(
            os.path.join(train_dir, config_util.PIPELINE_FILENAME),
            os.path.join(train_dir, "eval"), train_config.eval_every_n_steps)
    result = [hooks.CheckpointHook(
        train_dir, saver, save_secs=train_config.save_checkpoint_secs,
        save_steps=train_config.save_checkpoint_steps,
        step_multiple=train_config.eval_every_n_steps if evaluator else 0,
        listeners=[evaluator] if evaluator else [])]
    if evaluator:
        result.append(evaluator)
    if train_config.save_summaries_steps > 0:
        result.append(tf.train.SummarySaverHook(save_steps=train_config.save_summaries_steps,
                                                output_dir=train_dir, scaffold=scaffold))
        result.append(tf.train.StepCounterHook(every_n_steps=train_config.save_summaries_steps,
                                               output_dir=train_dir))
    if train_config.log_every_n_steps > 0:
        result.append(hooks.ProgressLoggerHook(total_loss, images_per_step, train_config.num_steps,
                                               train_config.log_every_n_steps))
    if train_config.profile_at_step > 0:
        result.append(hooks.ProfileAtStepHook(train_config.profile_at_step, train_dir))
    return result, evaluator


def _session_config(deploy_config, train_config):
    config = session_options.configure(
        deploy_config.session_config(), intra_op_threads=train_config.intra_op_threads,
        inter_op_threads=train_config.inter_op_threads, bfloat16=train_config.bfloat16,
        xla_jit=train_config.xla_jit)
    if deploy_config.num_ps_tasks > 0:
        config.device_filters.extend([f"/job:{deploy_config.ps_job_name}",
                                      deploy_config.worker_device])
        config.operation_timeout_in_ms = train_config.operation_timeout_ms
    return config


def _run_loop(session_creator, all_hooks, train_op, train_dir):
    """Runs train_op until a hook stops; turns a failed loss check into NonFiniteLossError."""
    try:
        with tf.train.MonitoredSession(session_creator=session_creator, hooks=all_hooks,
                                       stop_grace_period_secs=10) as session:
            while not session.should_stop():
                session.run(train_op)
    except tf.errors.InvalidArgumentError as error:
        match = _NONFINITE.search(error.message)
        if not match:
            raise
        last = tf.train.latest_checkpoint(train_dir)
        raise NonFiniteLossError(
            f"loss {match.group(1)} became NaN or Inf; training stopped. The last good checkpoint "
            f"is {last or '(none saved)'}") from error


def _log_startup(deploy_config, clones, model_variables):
    for i, clone in enumerate(clones):
        _LOG.info("clone %d: device %s, scope %r", i, clone.device, clone.scope)
    device = deploy_config.variables_device()
    _LOG.info("variables on %s; inputs on %s; optimizer on %s",
              device if isinstance(device, str) else
              f"{deploy_config.num_ps_tasks} ps tasks (round robin)",
              deploy_config.inputs_device(), deploy_config.optimizer_device())
    trainable = [v for v in model_variables if v in set(tf.trainable_variables())]
    _LOG.info("model: %d variables, %d trainable parameters", len(model_variables),
              model_deploy.parameter_count(trainable))


# --------------------------------------------------------------------------- train


def train(pipeline_config, train_dir, deploy_config=None, master="", task=0, is_chief=True,
          build_model=None, extra_hooks=(), build_batch_queue=None):
    """Builds the training graph and runs it until train_config.num_steps.

    Args:
      pipeline_config: pipeline_pb2.TrainEvalPipelineConfig (already merged and validated).
      train_dir: checkpoints, summaries, pipeline.config and traces go here.
      deploy_config: model_deploy.DeploymentConfig; default: one clone.
      master: the TensorFlow master (server.target in a cluster; "" in-process).
      task: this worker's task index (logging).
      is_chief: whether this worker initializes, saves checkpoints and summaries.
      build_model: callable(model_config, is_training) -> RecognitionModel; default
        aster.builders.model_builder.build.
      extra_hooks: more SessionRunHooks for the training session.
      build_batch_queue: callable(train_input_readers, train_config, num_clones) -> an object
        whose dequeue() gives one clone's batch dict (benchmarks feed in-memory batches);
        default input_reader_builder.build_batch_queue.

    Raises:
      NonFiniteLossError: a loss became NaN or Inf (the newest checkpoint is the last good one).
      ValueError: invalid pieces of the config (from the builders).
    """
    train_config = pipeline_config.train_config
    # The run-time fields (intervals, hooks, sync replicas); the builders check their own parts.
    config_checks.check(train_config, "train_config")
    deploy_config = deploy_config or model_deploy.DeploymentConfig()
    build_model = build_model or _default_model_builder()
    os.makedirs(train_dir, exist_ok=True)
    if is_chief:
        config_util.save_pipeline_config(pipeline_config, train_dir)

    with tf.Graph().as_default():
        # ---- Global step, on the variables device.
        with tf.device(deploy_config.variables_device()):
            global_step = tf.train.get_or_create_global_step()

        # ---- Inputs, on the inputs device; a seeded reader resumed at step S reshuffles with a
        # seed from its shuffle_seed and S (the iterator's position is not checkpointed).
        with tf.device(deploy_config.inputs_device()):
            readers = input_reader_builder.resumed_readers(pipeline_config.train_input_reader,
                                                           _restored_step(train_dir))
            batch_queue = (build_batch_queue or input_reader_builder.build_batch_queue)(
                readers, train_config, deploy_config.num_clones)

        # ---- Model clones.
        clones = model_deploy.create_clones(deploy_config, functools.partial(
            _clone_fn, build_model, pipeline_config.model, batch_queue))
        model_variables = [v for v in tf.global_variables() if v is not global_step]
        update_ops = model_deploy.first_clone_update_ops(clones)

        # ---- Optimizer, on the optimizer device (synchronous replicas when asked).
        with tf.device(deploy_config.optimizer_device()):
            optimizer = optimizer_builder.build(train_config.optimizer, global_step)
            sync_optimizer = None
            if train_config.sync_replicas:
                sync_optimizer = tf.train.SyncReplicasOptimizer(
                    optimizer, replicas_to_aggregate=train_config.replicas_to_aggregate,
                    total_num_replicas=deploy_config.num_replicas)
                optimizer = sync_optimizer

        # ---- Gradients: clones summed, then the hooks in the original order.
        with tf.device(deploy_config.optimizer_device()):
            total_loss, gradients = model_deploy.optimize_clones(clones, optimizer)
            grads_and_vars = _gradient_hooks(gradients, train_config)
            checks = _loss_checks(clones, total_loss) if train_config.check_loss_numerics else []
            train_op, updates_norm = _train_op(
                optimizer, grads_and_vars, global_step, total_loss, update_ops, checks,
                track_updates=(deploy_config.num_ps_tasks == 0
                               and train_config.summarize_update_norm))

        # ---- Summaries: gradient norms before the hooks and, when they clip, after them.
        add_summaries(clones, total_loss, gradients,
                      grads_and_vars if _clips_gradients(train_config) else None, updates_norm,
                      train_config.num_image_summaries)

        # ---- Scaffold: saver (resume) and fine-tune restore.
        saver = tf.train.Saver(
            max_to_keep=train_config.max_checkpoints_to_keep,
            keep_checkpoint_every_n_hours=train_config.keep_checkpoint_every_n_hours,
            sharded=deploy_config.num_ps_tasks > 1)
        scaffold = tf.train.Scaffold(
            saver=saver, init_fn=_fine_tune_init_fn(train_config, model_variables))

        # ---- Hooks and the session loop.
        all_hooks = list(extra_hooks)
        if train_config.num_steps > 0:
            stop = _ExactStopAtStepHook if train_config.sync_replicas else tf.train.StopAtStepHook
            all_hooks.append(stop(last_step=train_config.num_steps))
        if sync_optimizer is not None:
            all_hooks.append(sync_optimizer.make_session_run_hook(is_chief))
        evaluator = None
        if is_chief:
            images_per_step = sum(train_config.batch_size) * (
                train_config.replicas_to_aggregate if train_config.sync_replicas else 1)
            chief_hooks, evaluator = _chief_hooks(train_config, train_dir, saver, scaffold,
                                                  total_loss, images_per_step)
            all_hooks.extend(chief_hooks)
        _log_startup(deploy_config, clones, model_variables)
        session_creator = _session_creator(
            scaffold, master, is_chief, train_dir,
            _session_config(deploy_config, train_config), train_config)
        try:
            _run_loop(session_creator, all_hooks, train_op, train_dir)
        except BaseException:
            if evaluator is not None:
                evaluator.wait()  # the running evaluation; a waiting one is dropped
            raise
        if evaluator is not None:
            evaluator.finish()  # the final checkpoint too
        _LOG.info("training stopped at step %s; checkpoints in %s (task %d)",
                  train_config.num_steps or "?", train_dir, task)

