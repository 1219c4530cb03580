"""Trains a recognition model: the original ASTER trainer flow on tf.compat.v1, working end to end.

    trainer.train(pipeline_config, train_dir, model_deploy.DeploymentConfig(num_clones=2))
    trainer.train(pipeline_config, train_dir, deploy,
                  cluster=trainer.ClusterRole(master=server.target, task=1, is_chief=False))

Reading order of train(): global step -> inputs -> model clones -> optimizer (+ sync replicas)
-> gradients and their hooks (bias multiplier, regex multipliers, freeze, clip) -> train op with the
loss check and batch-norm updates -> summaries -> scaffold (savers, fine-tune) -> hooks -> session
loop. Checkpoints are `<train_dir>/model.ckpt-<step>`; the merged config is
`<train_dir>/pipeline.config`; rerunning with the same train_dir resumes from the newest checkpoint.
The train op is built in aster/utils/train_ops.py, the session in aster/utils/train_session.py.
"""

import dataclasses
import functools
import logging
import os
from collections.abc import Callable, Sequence

from aster.builders import input_reader_builder, optimizer_builder
from aster.core import conv_gradients
from aster.core.standard_fields import InputDataFields
from aster.readers import paths
from aster.tf_setup import tf
from aster.utils import (
    checkpoints,
    config_checks,
    config_util,
    hooks,
    model_deploy,
    model_stats,
    train_ops,
    train_session,
)
from aster.utils.summaries import add_summaries
from aster.utils.train_session import NonFiniteLossError

__all__ = ["ClusterRole", "NonFiniteLossError", "Seams", "build_graph", "train"]

_LOG = logging.getLogger("aster.trainer")


@dataclasses.dataclass(frozen=True)
class ClusterRole:
    """This worker's place in the cluster (the defaults: one process training alone).

    master: the TensorFlow master (server.target in a cluster; "" in-process).
    task: this worker's task index (logging).
    is_chief: whether this worker initializes, saves checkpoints and summaries.
    """

    master: str = ""
    task: int = 0
    is_chief: bool = True


@dataclasses.dataclass(frozen=True)
class Seams:
    """Pieces tests and benchmarks replace (None / () keep the real ones).

    build_model: callable(model_config, is_training) -> RecognitionModel; default
      aster.builders.model_builder.build.
    build_batch_queue: callable(train_input_readers, train_config, num_clones) -> an object whose
      dequeue() gives one clone's batch dict and whose images_per_step is the images of one step
      over all clones (benchmarks feed in-memory batches); default
      input_reader_builder.build_batch_queue.
    extra_hooks: more SessionRunHooks for the training session (run before the trainer's).
    """

    build_model: Callable | None = None
    build_batch_queue: Callable | None = None
    extra_hooks: Sequence = ()

    def model_builder(self):
        if self.build_model is not None:
            return self.build_model
        # Imported on use: tests and tools that pass their own build_model need not build the model.
        from aster.builders import model_builder

        return model_builder.build

    def batch_queue_builder(self):
        return self.build_batch_queue or input_reader_builder.build_batch_queue


@dataclasses.dataclass(frozen=True)
class _TrainGraph:
    """What the session loop needs of the built graph."""

    clones: list
    model_variables: list
    total_loss: tf.Tensor
    train_op: tf.Tensor
    sync_optimizer: tf.train.SyncReplicasOptimizer | None
    saver: tf.train.Saver
    scaffold: tf.train.Scaffold
    images_per_step: int


# --------------------------------------------------------------------------- inputs and clones


def _batch_queue(pipeline_config, train_dir, deploy_config, seams):
    """The batch queue, on the inputs device.

    A seeded reader resumed at step S reshuffles with a seed from its shuffle_seed and S (the
    iterator's position is not checkpointed).
    """
    with tf.device(deploy_config.inputs_device()):
        readers = input_reader_builder.resumed_readers(pipeline_config.train_input_reader,
                                                       train_session.restored_step(train_dir))
        return seams.batch_queue_builder()(readers, pipeline_config.train_config,
                                           deploy_config.num_clones)


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


# --------------------------------------------------------------------------- optimizer and train op


def _optimizer(train_config, deploy_config, global_step):
    """(optimizer, the SyncReplicasOptimizer wrapping it or None); loss-scaled on GPU float16."""
    optimizer = optimizer_builder.build(train_config.optimizer, global_step)
    if train_session.gpu_mixed_precision(deploy_config, train_config):
        if train_config.sync_replicas:
            raise ValueError(
                "train_config.mixed_precision: GPU float16 training with sync_replicas is not "
                "supported (a step skipped for overflowing gradients leaves the global step the "
                "replicas synchronise on unchanged); turn one of them off")
        _LOG.info("train_config.mixed_precision on GPU clones: float16 mixed precision with "
                  "dynamic loss scaling")
        optimizer = train_session.loss_scaled(optimizer)
    if not train_config.sync_replicas:
        return optimizer, None
    sync_optimizer = tf.train.SyncReplicasOptimizer(
        optimizer, replicas_to_aggregate=train_config.replicas_to_aggregate,
        total_num_replicas=deploy_config.num_replicas)
    return sync_optimizer, sync_optimizer


def _train_op(train_config, deploy_config, clones, global_step):
    """(total_loss, train_op, sync_optimizer or None), with the training summaries.

    On the optimizer device: the clones' gradients summed, then the hooks in the original order,
    the loss checks and the train op. The summaries (gradient norms before the hooks and, when
    they clip, after them) are outside it.
    """
    update_ops = model_deploy.first_clone_update_ops(clones)
    with tf.device(deploy_config.optimizer_device()):
        optimizer, sync_optimizer = _optimizer(train_config, deploy_config, global_step)
        total_loss, gradients = model_deploy.optimize_clones(clones, optimizer)
        grads_and_vars = train_ops.gradient_hooks(gradients, train_config)
        checks = (train_ops.loss_checks(clones, total_loss)
                  if train_config.check_loss_numerics else [])
        train_op, updates_norm = train_ops.train_op(
            optimizer, grads_and_vars, global_step, total_loss, update_ops, checks,
            track_updates=(deploy_config.num_ps_tasks == 0
                           and train_config.summarize_update_norm))
    add_summaries(clones, total_loss, gradients,
                  grads_and_vars if train_ops.clips_gradients(train_config) else None,
                  updates_norm, train_config.num_image_summaries)
    return total_loss, train_op, sync_optimizer


def _scaffold(train_config, deploy_config, model_variables, model_config):
    """(saver, scaffold): the saver resumes from train_dir; the init_fn restores a fine-tune."""
    saver = tf.train.Saver(
        max_to_keep=train_config.max_checkpoints_to_keep,
        keep_checkpoint_every_n_hours=train_config.keep_checkpoint_every_n_hours,
        sharded=deploy_config.num_ps_tasks > 1)
    scaffold = tf.train.Scaffold(
        saver=saver, init_fn=train_session.fine_tune_init_fn(train_config, model_variables,
                                                                 model_config))
    return saver, scaffold


def build_graph(pipeline_config, train_dir, deploy_config, seams=None):
    """Builds the training graph into the default graph, in the module docstring's order: what
    train() runs, without its hooks and session (benchmarks build several in one process).

    Returns:
      an object with clones, model_variables, total_loss, train_op, sync_optimizer, saver,
      scaffold and images_per_step.
    """
    train_config = pipeline_config.train_config
    seams = seams or Seams()
    with tf.device(deploy_config.variables_device()):
        global_step = tf.train.get_or_create_global_step()
    batch_queue = _batch_queue(pipeline_config, train_dir, deploy_config, seams)
    # In CPU bfloat16 the few-tap convolutions' filter gradients are matrix products (faster on
    # AMX than oneDNN's bfloat16 filter-gradient kernel; aster.core.conv_gradients).
    with conv_gradients.filter_gradients_as_products(
            train_session.cpu_bfloat16(deploy_config, train_config)):
        clones = model_deploy.create_clones(deploy_config, functools.partial(
            _clone_fn, seams.model_builder(), pipeline_config.model, batch_queue))
    model_variables = [v for v in tf.global_variables() if v is not global_step]
    total_loss, train_op, sync_optimizer = _train_op(train_config, deploy_config, clones,
                                                     global_step)
    saver, scaffold = _scaffold(train_config, deploy_config, model_variables,
                                pipeline_config.model)
    # A synchronous global step aggregates replicas_to_aggregate replicas' batches.
    replicas = train_config.replicas_to_aggregate if train_config.sync_replicas else 1
    return _TrainGraph(clones, model_variables, total_loss, train_op, sync_optimizer, saver,
                       scaffold, batch_queue.images_per_step * replicas)


# --------------------------------------------------------------------------- hooks


def _chief_hooks(train_config, train_dir, graph):
    """Checkpoints, summaries, step rate, progress log, profiler and in-training eval.

    With eval_every_n_steps N the checkpoint hook also saves at each multiple of N, whatever the
    save intervals, and the evaluator (its listener and a hook) evaluates those checkpoints.
    Returns (hooks, the evaluator or None).
    """
    evaluator = None
    if train_config.eval_every_n_steps > 0:
        evaluator = hooks.BackgroundEvaluator(
            os.path.join(train_dir, config_util.PIPELINE_FILENAME),
            os.path.join(train_dir, "eval"), train_config.eval_every_n_steps)
    result = [hooks.CheckpointHook(
        train_dir, graph.saver, save_secs=train_config.save_checkpoint_secs,
        save_steps=train_config.save_checkpoint_steps,
        step_multiple=train_config.eval_every_n_steps if evaluator else 0,
        listeners=[evaluator] if evaluator else [])]
    if evaluator:
        result.append(evaluator)
    if train_config.save_summaries_steps > 0:
        result.append(tf.train.SummarySaverHook(save_steps=train_config.save_summaries_steps,
                                                output_dir=train_dir, scaffold=graph.scaffold))
        result.append(tf.train.StepCounterHook(every_n_steps=train_config.save_summaries_steps,
                                               output_dir=train_dir))
    if train_config.log_every_n_steps > 0:
        result.append(hooks.ProgressLoggerHook(graph.total_loss, graph.images_per_step,
                                               train_config.num_steps,
                                               train_config.log_every_n_steps))
    if train_config.profile_at_step > 0:
        result.append(hooks.ProfileAtStepHook(train_config.profile_at_step, train_dir))
    return result, evaluator


def _hooks(train_config, train_dir, graph, cluster, seams):
    """(every hook of the session, the in-training evaluator or None): the seams' hooks first,
    then the stop hook, the sync replicas hook and, on the chief, _chief_hooks."""
    all_hooks = list(seams.extra_hooks)
    stop = train_session.stop_hook(train_config)
    if stop is not None:
        all_hooks.append(stop)
    if graph.sync_optimizer is not None:
        all_hooks.append(graph.sync_optimizer.make_session_run_hook(cluster.is_chief))
    if not cluster.is_chief:
        return all_hooks, None
    chief_hooks, evaluator = _chief_hooks(train_config, train_dir, graph)
    return all_hooks + chief_hooks, evaluator


# --------------------------------------------------------------------------- session loop


def _log_startup(deploy_config, graph):
    for i, clone in enumerate(graph.clones):
        _LOG.info("clone %d: device %s, scope %r", i, clone.device, clone.scope)
    device = deploy_config.variables_device()
    _LOG.info("variables on %s; inputs on %s; optimizer on %s",
              device if isinstance(device, str) else
              f"{deploy_config.num_ps_tasks} ps tasks (round robin)",
              deploy_config.inputs_device(), deploy_config.optimizer_device())
    trainable = set(tf.trainable_variables())
    _LOG.info("model: %d variables, %d trainable parameters", len(graph.model_variables),
              model_stats.parameter_count([v for v in graph.model_variables if v in trainable]))


def _warn_schedule_end(train_config):
    """Warns when training runs past the end of its decaying learning rate: the usual slip when
    num_steps alone is raised to train longer."""
    end = optimizer_builder.decay_end_step(train_config.optimizer)
    if end is not None and train_config.num_steps > end:
        field = (f"train_config.optimizer.{train_config.optimizer.WhichOneof('optimizer')}"
                 ".learning_rate.cosine_decay_learning_rate.total_steps")
        _LOG.warning(
            "train_config.num_steps (%d) is past the cosine schedule's total_steps (%d): the "
            "last %d steps run at min_learning_rate; to train longer, set %s to num_steps too",
            train_config.num_steps, end, train_config.num_steps - end, field)


# A training reader whose images one run shows more often than this is named in a warning: a few
# hundred crops fine-tuned for thousands of steps are memorised, not learned from.
REPEAT_WARNING = 20
# Readers of fewer bytes than this are counted record by record (a fraction of a second); larger
# ones are left alone (their images repeat less, and counting would take long).
COUNTED_READER_BYTES = 64 << 20


def reader_repeats(pipeline_config):
    """[(reader index, input_path, images, times each image is shown)] of the small TFRecord
    training readers, over train_config.num_steps with their batch_size entries."""
    train_config = pipeline_config.train_config
    if not train_config.num_steps:
        return []
    found = []
    for i, (reader, batch) in enumerate(zip(pipeline_config.train_input_reader,
                                            train_config.batch_size, strict=False)):
        if reader.WhichOneof("input_reader") != "tf_record_input_reader":
            continue
        pattern = reader.tf_record_input_reader.input_path
        try:
            files = paths.expand_paths(pattern, f"train_input_reader[{i}]")
            if sum(tf.io.gfile.stat(f).length for f in files) > COUNTED_READER_BYTES:
                continue
            count = sum(1 for f in files for _ in tf.compat.v1.io.tf_record_iterator(f))
        except (ValueError, tf.errors.OpError):  # reported where the reader is built
            continue
        if count:
            found.append((i, pattern, count, train_config.num_steps * batch / count))
    return found


def _warn_repeats(pipeline_config):
    for i, pattern, count, repeats in reader_repeats(pipeline_config):
        if repeats > REPEAT_WARNING:
            _LOG.warning(
                "train_input_reader[%d] (%s) has %d images: %d steps show each of them ~%.0f "
                "times, so the model may memorise them; mix in a larger reader (README, "
                "\"Fine-tuning\") or train fewer steps", i, pattern, count,
                pipeline_config.train_config.num_steps, repeats)


def _run(creator, all_hooks, evaluator, graph, train_dir):
    """The session loop; the in-training evaluator finishes (or, on an error, its running
    evaluation does and a waiting one is dropped)."""
    try:
        train_session.run_loop(creator, all_hooks, graph.train_op, train_dir)
    except BaseException:
        if evaluator is not None:
            evaluator.wait()
        raise
    if evaluator is not None:
        evaluator.finish()  # the final checkpoint too


# --------------------------------------------------------------------------- train


def _finished(train_config, train_dir):
    """True (and says so) when train_dir's newest checkpoint is at num_steps or past it: a rerun
    of a finished run trains nothing (the session would otherwise run one more step before its
    stop hook looks at the step)."""
    newest = checkpoints.newest(train_dir)
    if not train_config.num_steps or newest is None or newest.step < train_config.num_steps:
        return False
    _LOG.info("%s is at step %d, train_config.num_steps is %d: nothing to train (raise num_steps "
              "to train on)", newest.path, newest.step, train_config.num_steps)
    return True


def train(pipeline_config, train_dir, deploy_config=None, *, cluster=None, seams=None):
    """Builds the training graph and runs it until train_config.num_steps.

    Args:
      pipeline_config: pipeline_pb2.TrainEvalPipelineConfig (already merged and validated).
      train_dir: checkpoints, summaries, pipeline.config and traces go here.
      deploy_config: model_deploy.DeploymentConfig; default: one clone.
      cluster: ClusterRole (master, task, is_chief); default: one process training alone.
      seams: Seams (build_model, build_batch_queue, extra_hooks); default: the real pieces.

    Raises:
      NonFiniteLossError: a loss became NaN or Inf (the newest checkpoint is the last good one).
      ValueError: invalid pieces of the config (from the builders).
    """
    train_config = pipeline_config.train_config
    # The run-time fields (intervals, hooks, sync replicas); the builders check their own parts.
    config_checks.check(train_config, "train_config")
    config_checks.check_agreement(pipeline_config)  # facts stated in several messages
    _warn_schedule_end(train_config)
    _warn_repeats(pipeline_config)
    if _finished(train_config, train_dir):
        return
    deploy_config = deploy_config or model_deploy.DeploymentConfig()
    cluster = cluster or ClusterRole()
    seams = seams or Seams()
    os.makedirs(train_dir, exist_ok=True)
    if cluster.is_chief:
        config_util.save_pipeline_config(pipeline_config, train_dir)
    with tf.Graph().as_default():
        graph = build_graph(pipeline_config, train_dir, deploy_config, seams)
        all_hooks, evaluator = _hooks(train_config, train_dir, graph, cluster, seams)
        _log_startup(deploy_config, graph)
        resume = (train_session.resume_checkpoint(graph.saver, train_dir) if cluster.is_chief
                  else None)
        creator = train_session.session_creator(
            graph.scaffold, cluster.master, cluster.is_chief, resume,
            train_session.session_config(deploy_config, train_config), train_config)
        _run(creator, all_hooks, evaluator, graph, train_dir)
        _LOG.info("training stopped at step %s; checkpoints in %s (task %d)",
                  train_config.num_steps or "?", train_dir, cluster.task)
