"""Checkpoints on disk: discovery, the never-skipping polling loop, and restoring a model.

Checkpoints are the files a tf.train.Saver writes, `<prefix>-<step>.index` plus its data shards
`<prefix>-<step>.data-NNNNN-of-MMMMM`. A checkpoint counts as present only when its index and all
of its data shards exist (the Saver writes the index last, so a half-written one is never picked).

The loop (`checkpoint_loop`) evaluates every checkpoint that appears, in step order. Unlike
tf.train.checkpoints_iterator, which jumps to the newest checkpoint, it works through the backlog
one step at a time, so a checkpoint still on disk when its turn comes is always evaluated. A
checkpoint that disappears before its turn (the Saver's max_to_keep) or while it is being
evaluated is logged and skipped.

`make_saver` and `restore` load a model's variables (or their moving averages) from a checkpoint
for evaluation, export and the predictors; a checkpoint that vanished or is truncated raises
CheckpointUnavailableError, one that does not match the model a ValueError.
"""

import dataclasses
import glob
import logging
import os
import re
import time

from aster.tf_setup import tf

logger = logging.getLogger(__name__)

_INDEX_RE = re.compile(r"^(?P<prefix>.+)-(?P<step>\d+)\.index$")
_SHARD_RE = re.compile(r"\.data-(\d+)-of-(\d+)$")


class CheckpointUnavailableError(RuntimeError):
    """The checkpoint vanished or cannot be read any more (deleted or truncated while in use)."""


@dataclasses.dataclass(frozen=True, order=True)
class Checkpoint:
    """A checkpoint on disk: its global step and path prefix (what Saver.restore takes)."""

    step: int
    path: str


def checkpoint_step(path):
    """The global step in a checkpoint path such as `dir/model.ckpt-1200` (or its .index file).

    Raises:
      ValueError: the name does not end in -<step>.
    """
    name = os.path.basename(path)
    if name.endswith(".index"):
        name = name[: -len(".index")]
    match = re.search(r"-(\d+)$", name)
    if not match:
        raise ValueError(f"checkpoint path {path!r} does not end in -<global step>")
    return int(match.group(1))


def checkpoint_exists(path):
    """True when the index and every data shard of checkpoint prefix `path` exist."""
    if not os.path.isfile(path + ".index"):
        return False
    shards = glob.glob(glob.escape(path) + ".data-*-of-*")
    if not shards:
        return False
    match = _SHARD_RE.search(shards[0])
    if not match:
        return False
    total = int(match.group(2))
    for i in range(total):
        if not os.path.isfile(f"{path}.data-{i:05d}-of-{total:05d}"):
            return False
    return True


def list_checkpoints(checkpoint_dir):
    """Complete checkpoints directly in `checkpoint_dir`, sorted by step (then path).

    Temporary `*_temp` folders of a Saver in the middle of a write are not looked into.
    """
    found = []
    for index in glob.glob(os.path.join(glob.escape(checkpoint_dir), "*.index")):
        match = _INDEX_RE.match(os.path.basename(index))
        if not match:
            continue
        path = index[: -len(".index")]
        if checkpoint_exists(path):
            found.append(Checkpoint(int(match.group("step")), path))
    return sorted(found)


def newest_checkpoint(checkpoint_dir):
    """The complete checkpoint with the highest step, or None."""
    checkpoints = list_checkpoints(checkpoint_dir)
    return checkpoints[-1] if checkpoints else None


def require_checkpoint(path):
    """Returns `path` when it is a complete checkpoint prefix.

    Raises:
      ValueError: it is not (the message names --checkpoint_path).
    """
    if not checkpoint_exists(path):
        raise ValueError(f"--checkpoint_path {path!r}: no complete checkpoint there "
                         "(expected its .index and .data-* files)")
    return path


def find_checkpoint(path):
    """The checkpoint prefix `path` names: itself, or a training folder's newest checkpoint.

    Raises:
      ValueError: no complete checkpoint there (the message names --checkpoint_path).
    """
    if os.path.isdir(path):
        newest = newest_checkpoint(path)
        if newest is None:
            raise ValueError(f"--checkpoint_path {path!r}: no complete checkpoint there")
        return newest.path
    return require_checkpoint(path)


def checkpoint_loop(checkpoint_dir, evaluate_fn, poll_secs=300.0, max_evals=0, timeout_secs=0.0,
                    final_step=0, sleep=time.sleep, clock=time.monotonic):
    """Evaluates checkpoints of `checkpoint_dir` in step order as they appear.

    Args:
      checkpoint_dir: where training writes checkpoints.
      evaluate_fn: called with a Checkpoint; may raise CheckpointUnavailableError (logged, the
        loop moves on). Any other exception propagates.
      poll_secs: seconds to wait before looking again when nothing new is there.
      max_evals: stop after this many successful evaluations; 0 = no limit.
      timeout_secs: stop when no new checkpoint appeared for this long; 0 = wait forever.
      final_step: stop after evaluating a checkpoint whose step is >= this; 0 = never.
      sleep, clock: injectable for tests.

    Returns:
      The list of Checkpoints evaluated, in order.
    """
    evaluated, seen = [], {}
    last_step = -1
    last_new = clock()
    while True:
        for ckpt in list_checkpoints(checkpoint_dir):
            if ckpt.step > last_step and ckpt.path not in seen:
                seen[ckpt.path] = ckpt
                last_new = clock()
        pending = sorted(c for c in seen.values() if c.step > last_step)
        if not pending:
            if timeout_secs and clock() - last_new >= timeout_secs:
                logger.info("no new checkpoint in %s for %.0f s; stopping", checkpoint_dir,
                            timeout_secs)
                return evaluated
            sleep(poll_secs)
            continue
        ckpt = pending[0]
        last_step = ckpt.step
        if not checkpoint_exists(ckpt.path):
            logger.warning("checkpoint %s was deleted before its turn; skipping it", ckpt.path)
            continue
        try:
            evaluate_fn(ckpt)
        except CheckpointUnavailableError as e:
            logger.warning("checkpoint %s became unavailable during evaluation (%s); skipping it",
                           ckpt.path, e)
            continue
        evaluated.append(ckpt)
        if max_evals and len(evaluated) >= max_evals:
            logger.info("evaluated %d checkpoints (eval_config.max_evals); stopping", max_evals)
            return evaluated
        if final_step and ckpt.step >= final_step:
            logger.info("evaluated the final checkpoint (step %d >= num_steps %d); stopping",
                        ckpt.step, final_step)
            return evaluated


# --------------------------------------------------------------------------- restore


def _stored_variables(checkpoint_path):
    """{name: shape} of the checkpoint's variables; CheckpointUnavailableError when it cannot be
    read."""
    try:
        reader = tf.train.NewCheckpointReader(checkpoint_path)
    except (tf.errors.NotFoundError, tf.errors.DataLossError, tf.errors.OpError) as e:
        raise CheckpointUnavailableError(f"{checkpoint_path}: {e.message}") from e
    return reader.get_variable_to_shape_map()


def _moving_average_names(model_vars, stored, checkpoint_path):
    """{checkpoint name: variable}, trainable variables mapped to their moving averages."""
    ema = tf.train.ExponentialMovingAverage(0.0)
    averaged = {v.op.name: ema.average_name(v) for v in model_vars if v.trainable}
    if averaged and not any(name in stored for name in averaged.values()):
        raise ValueError(
            f"eval_config.use_moving_averages is true but checkpoint {checkpoint_path} has no "
            "moving averages (train with train_config.optimizer.use_moving_average: true, or "
            "set eval_config.use_moving_averages: false)")
    var_list = {}
    for v in model_vars:
        name = averaged.get(v.op.name, v.op.name)
        if name not in stored:
            logger.warning("no moving average %s in the checkpoint; using %s", name, v.op.name)
            name = v.op.name
        var_list[name] = v
    return var_list


def make_saver(model_vars, checkpoint_path, use_moving_averages):
    """A Saver restoring `model_vars` (or their moving averages) from `checkpoint_path`.

    With use_moving_averages each trainable variable is restored from its
    ExponentialMovingAverage shadow (`<name>/ExponentialMovingAverage`); non-trainable ones
    (batch-norm statistics) from themselves. Returns None when there is nothing to restore.

    Raises:
      CheckpointUnavailableError: the checkpoint cannot be read.
      ValueError: variables missing from the checkpoint or stored with other shapes, or no
        moving averages in it.
    """
    stored = _stored_variables(checkpoint_path)
    if use_moving_averages:
        var_list = _moving_average_names(model_vars, stored, checkpoint_path)
    else:
        var_list = {v.op.name: v for v in model_vars}
    missing = sorted(name for name in var_list if name not in stored)
    if missing:
        raise ValueError(
            f"checkpoint {checkpoint_path} lacks {len(missing)} of the model's "
            f"{len(var_list)} variables (does the model config match the training run?): "
            f"{missing[:5]}")
    reshaped = [f"{name} {stored[name]} (the model's: {v.shape.as_list()})"
                for name, v in sorted(var_list.items())
                if v.shape.is_fully_defined() and list(stored[name]) != v.shape.as_list()]
    if reshaped:
        raise ValueError(
            f"checkpoint {checkpoint_path} stores {len(reshaped)} of the model's variables with "
            f"other shapes (does the model config match the training run?): "
            f"{'; '.join(reshaped[:3])}")
    if not var_list:
        return None
    return tf.train.Saver(var_list=var_list, save_relative_paths=True)


def restore(sess, saver, checkpoint_path):
    """Restores `saver` (from make_saver; None restores nothing) into `sess`.

    Raises:
      CheckpointUnavailableError: the checkpoint vanished or is truncated.
    """
    if saver is None:
        return
    try:
        saver.restore(sess, checkpoint_path)
    except (tf.errors.NotFoundError, tf.errors.DataLossError, tf.errors.OutOfRangeError) as e:
        # OutOfRange: a data file cut short (the index promises more bytes than it has).
        reason = e.message.strip().splitlines()[0] if e.message.strip() else type(e).__name__
        raise CheckpointUnavailableError(f"{checkpoint_path}: cannot be read, truncated or "
                                         f"damaged ({reason})") from e
    except ValueError as e:
        if checkpoint_exists(checkpoint_path):
            raise
        raise CheckpointUnavailableError(f"{checkpoint_path}: {e}") from e
