"""Checkpoints on disk: which one a path or name means, the never-skipping polling loop, and
restoring a model.

    checkpoints.resolve("runs/demo/model.ckpt-500")   # a checkpoint prefix: itself
    checkpoints.resolve("runs/demo")                  # a training or model folder: its newest
    checkpoints.resolve("aster_base")                 # a shipped model's name (aster/pretrained.py)
    checkpoints.newest("runs/demo")                   # Checkpoint(step, path) or None

Checkpoints are the files a tf.train.Saver writes, `<prefix>-<step>.index` plus its data shards
`<prefix>-<step>.data-NNNNN-of-MMMMM`. A checkpoint counts as present only when its index and all
of its data shards exist: the Saver writes each file under a temporary name and renames it, the
data shards before the index, so a checkpoint killed half-way is never picked.

`newest` is the one meaning of "the newest checkpoint" in the package, for every user: a scan of
the folder's complete checkpoints, highest step first. The `checkpoint` state file the Saver also
writes is not read: it can lag the folder (a chief killed between the index and the state file, a
run copied with an older state file or none) or name a checkpoint that max_to_keep deleted, and
then "is training finished", "which step seeds the input" and "what is restored" would disagree.
TensorFlow's own tools may still read it; the Saver keeps writing it.

The loop (`checkpoint_loop`) evaluates every checkpoint that appears, in step order. Unlike
tf.train.checkpoints_iterator, which jumps to the newest checkpoint, it works through the backlog
one step at a time, so a checkpoint still on disk when its turn comes is always evaluated. A
checkpoint that disappears before its turn (the Saver's max_to_keep) or while it is being
evaluated is logged and skipped.

`make_saver` and `restore` load a model's variables (or their moving averages) from a checkpoint
for evaluation, export and the predictors; a checkpoint that vanished or is truncated raises
CheckpointUnavailableError, one that does not match the model a ValueError. A checkpoint may
store float variables at another precision than the model's (a model folder written with
`package_model write --float16`): `saver_for` restores them cast to the variables' dtypes.
"""

import collections
import dataclasses
import glob
import logging
import os
import re
import time

from aster import pretrained
from aster.tf_setup import tf

logger = logging.getLogger(__name__)

_INDEX_RE = re.compile(r"^(?P<prefix>.+)-(?P<step>\d+)\.index$")
_DATA_RE = re.compile(r"^(?P<prefix>.+)\.data-(?P<shard>\d+)-of-(?P<total>\d+)$")
_LOOKED_FOR = "a <prefix>-<step>.index file with all its .data-NNNNN-of-MMMMM shards"


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


def _complete_total(shards):
    """The shard count T for which all of shards 0..T-1 are in `shards` ({(index, total)}), or
    None."""
    for total in sorted({t for _, t in shards if t > 0}):
        if all((i, total) in shards for i in range(total)):
            return total
    return None


def _missing_file(path):
    """The first file of checkpoint prefix `path` that is not there, or None when it is complete.

    Files under a Saver's temporary names (`*.tempstate<N>`) do not count.
    """
    if not os.path.isfile(path + ".index"):
        return path + ".index"
    shards = set()
    for name in glob.glob(glob.escape(path) + ".data-*-of-*"):
        match = _DATA_RE.match(os.path.basename(name))
        if match and os.path.join(os.path.dirname(path), match.group("prefix")) == path:
            shards.add((int(match.group("shard")), int(match.group("total"))))
    if not shards:
        return path + ".data-00000-of-NNNNN"
    if _complete_total(shards) is not None:
        return None
    total = min(t for _, t in shards)
    missing = min(i for i in range(total) if (i, total) not in shards)
    return f"{path}.data-{missing:05d}-of-{total:05d}"


def checkpoint_exists(path):
    """True when the index and every data shard of checkpoint prefix `path` exist."""
    return _missing_file(path) is None


def list_checkpoints(checkpoint_dir):
    """Complete checkpoints directly in `checkpoint_dir`, sorted by step (then path); [] when the
    folder is missing or unreadable.

    One listing of the folder (a run keeping every checkpoint has thousands). Temporary `*_temp`
    folders and `*.tempstate<N>` files of a Saver in the middle of a write do not count.
    """
    try:
        names = os.listdir(checkpoint_dir)
    except OSError:
        return []
    shards = collections.defaultdict(set)
    for name in names:
        match = _DATA_RE.match(name)
        if match:
            shards[match.group("prefix")].add((int(match.group("shard")),
                                               int(match.group("total"))))
    found = []
    for name in names:
        match = _INDEX_RE.match(name)
        if match and _complete_total(shards[match.group("prefix") + "-" + match.group("step")]):
            prefix = os.path.join(checkpoint_dir, name[: -len(".index")])
            found.append(Checkpoint(int(match.group("step")), prefix))
    return sorted(found)


def newest(checkpoint_dir):
    """The complete checkpoint of `checkpoint_dir` with the highest step, or None.

    A scan of the folder (list_checkpoints); the `checkpoint` state file is not read (module
    docstring).
    """
    found = list_checkpoints(checkpoint_dir)
    return found[-1] if found else None


def resolve(path_or_name, field="checkpoint"):
    """The checkpoint prefix that `path_or_name` names, for every command and library caller.

    In this order: a complete checkpoint prefix (`dir/model.ckpt-500`, or its `.index` file) is
    itself; a folder (a training run's or a model's) gives its newest complete checkpoint
    (`newest`); otherwise the name of a shipped model (`aster_base`, a folder that
    pretrained.shipped_models lists) gives that model's checkpoint.

    Args:
      path_or_name: a checkpoint prefix, a folder or a shipped model's name.
      field: what the value is called in error messages (`--checkpoint_path`,
        `train_config.fine_tune_checkpoint`).

    Returns:
      The checkpoint prefix, what Saver.restore takes.

    Raises:
      ValueError: an empty value, a folder without a complete checkpoint, an incomplete
        checkpoint (naming the missing file), or none of these and no shipped model of that name
        (listing the shipped ones).
      pretrained.ModelFolderError (a ValueError): the shipped model's folder is damaged.
    """
    if not path_or_name:
        raise ValueError(f"{field} is empty: give a checkpoint prefix, a training or model "
                         f"folder, or a shipped model's name ({_shipped()})")
    path = path_or_name[: -len(".index")] if path_or_name.endswith(".index") else path_or_name
    if os.path.isdir(path):
        found = newest(path)
        if found is None:
            raise ValueError(f"{field} {path_or_name!r}: no complete checkpoint in this folder "
                             f"(looked for {_LOOKED_FOR}){_stepless_hint(path)}")
        return found.path
    missing = _missing_file(path)
    if missing is None:
        return path
    if glob.glob(glob.escape(path) + ".index*") or glob.glob(glob.escape(path) + ".data-*"):
        raise ValueError(f"{field} {path_or_name!r}: incomplete checkpoint, {missing} is "
                         "missing (half-written, or copied in part)")
    if path in pretrained.shipped_models():
        return pretrained.model_files(path)[0]
    raise ValueError(f"{field} {path_or_name!r}: no checkpoint, folder or shipped model of that "
                     f"name (looked for {path}.index and its .data shards, a folder of that "
                     f"name, and a model folder in {pretrained.MODELS_DIR}; {_shipped()})")


def _stepless_hint(folder):
    """Names a checkpoint of `folder` without a step in its name (a folder gives only stepped
    ones: the newest needs a step), which its prefix names."""
    stepless = sorted(os.path.basename(i)[: -len(".index")]
                      for i in glob.glob(os.path.join(glob.escape(folder), "*.index"))
                      if not _INDEX_RE.match(os.path.basename(i)))
    if not stepless:
        return ""
    return f"; {stepless[0]} has no step in its name: give its prefix, {folder}/{stepless[0]}"


def _shipped():
    names = pretrained.shipped_models()
    return f"shipped models: {', '.join(names)}" if names else "no model is shipped"


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


def _reader(checkpoint_path):
    """The checkpoint's reader; CheckpointUnavailableError when it cannot be read."""
    try:
        return tf.train.NewCheckpointReader(checkpoint_path)
    except (tf.errors.NotFoundError, tf.errors.DataLossError, tf.errors.OpError) as e:
        raise CheckpointUnavailableError(f"{checkpoint_path}: {e.message}") from e


def _stored_variables(checkpoint_path):
    """{name: shape} of the checkpoint's variables; CheckpointUnavailableError when it cannot be
    read."""
    return _reader(checkpoint_path).get_variable_to_shape_map()


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
    return saver_for(var_list, checkpoint_path)


class CastingSaver:
    """Restores {checkpoint name: variable} from checkpoints that store some of them at another
    float precision, cast to each variable's dtype (what tf.train.Saver cannot: it insists on
    the variable's dtype). Only `restore(session, checkpoint_path)`, like a Saver's."""

    def __init__(self, var_list, stored_dtypes):
        names = sorted(var_list)
        # The restore ops are built here, before a monitored session finalizes the graph; the
        # checkpoint is fed at restore time.
        self._prefix = tf.placeholder(tf.string, [], name="casting_restore_prefix")
        tensors = tf.raw_ops.RestoreV2(prefix=self._prefix, tensor_names=names,
                                       shape_and_slices=[""] * len(names),
                                       dtypes=[stored_dtypes[name] for name in names])
        self._restore_op = tf.group(*[
            var_list[name].assign(tf.cast(tensor, var_list[name].dtype.base_dtype))
            for name, tensor in zip(names, tensors, strict=True)])

    def restore(self, sess, checkpoint_path):
        sess.run(self._restore_op, {self._prefix: checkpoint_path})


def saver_for(var_list, checkpoint_path, name=None):
    """What restores {checkpoint name: variable} from `checkpoint_path`: a tf.train.Saver, or a
    CastingSaver where the checkpoint stores a variable at another float dtype (float16 weights
    of a model folder into float32 variables).

    Raises:
      CheckpointUnavailableError: the checkpoint cannot be read.
      ValueError: a variable stored with a dtype that is not a float, or read into one that is not.
    """
    stored = _reader(checkpoint_path).get_variable_to_dtype_map()
    cast = {ckpt: stored[ckpt] for ckpt, v in var_list.items()
            if ckpt in stored and stored[ckpt] != v.dtype.base_dtype}
    if not cast:
        return tf.train.Saver(var_list=var_list, save_relative_paths=True, name=name)
    wrong = [f"{ckpt} ({stored[ckpt].name}, the model's {var_list[ckpt].dtype.base_dtype.name})"
             for ckpt in sorted(cast)
             if not (stored[ckpt].is_floating and var_list[ckpt].dtype.base_dtype.is_floating)]
    if wrong:
        raise ValueError(f"checkpoint {checkpoint_path} stores {len(wrong)} of the model's "
                         f"variables with another dtype: {'; '.join(wrong[:3])}")
    return CastingSaver(var_list, {ckpt: stored.get(ckpt, v.dtype.base_dtype)
                                   for ckpt, v in var_list.items()})


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
