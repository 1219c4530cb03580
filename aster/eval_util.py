"""Evaluation helpers without TensorFlow: checkpoint discovery, the checkpoint loop, names, reports.

Checkpoints are the files a tf.train.Saver writes, `<prefix>-<step>.index` plus its data shards
`<prefix>-<step>.data-NNNNN-of-MMMMM`. A checkpoint counts as present only when its index and all
of its data shards exist (the Saver writes the index last, so a half-written one is never picked).

The loop (`checkpoint_loop`) evaluates every checkpoint that appears, in step order. Unlike
tf.train.checkpoints_iterator, which jumps to the newest checkpoint, it works through the backlog
one step at a time, so a checkpoint still on disk when its turn comes is always evaluated. A
checkpoint that disappears before its turn (the Saver's max_to_keep) or while it is being
evaluated is logged and skipped.
"""

import dataclasses
import glob
import json
import logging
import os
import re
import time

from aster.utils import recognition_evaluation

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


def dataset_names(input_paths, configured_names=()):
    """One report name per eval reader.

    Args:
      input_paths: each reader's input path: TFRecord files or LMDB directories (a path, glob or
        comma-separated list; "" if none).
      configured_names: eval_config.dataset_name; entry i, when present and non-empty, names
        reader i.

    Returns:
      A list of distinct names usable as folder names: the configured name, else the first input
      path's base name without extensions and shard suffix ("data/svt-00000-of-00004.tfrecord" ->
      "svt", "lmdb/IIIT5k_3000/" -> "IIIT5k_3000"), else (no path) "dataset<i>"; repeated names
      get "_2", "_3", ...
    """
    names, used = [], set()
    for i, path in enumerate(input_paths):
        name = configured_names[i] if i < len(configured_names) else ""
        if not name:
            first = path.split(",")[0].strip().rstrip("/" + os.sep)
            name = os.path.basename(first)
            name = re.sub(r"-\d+-of-\d+", "", name)
            name = re.sub(r"[*?\[\]]", "", name.split(".")[0])
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or f"dataset{i}"
        base, k = name, 2
        while name in used:
            name, k = f"{base}_{k}", k + 1
        used.add(name)
        names.append(name)
    return names


def decoding_settings(model_config):
    """The decoding settings of each predictor of a Model message, for the reports.

    Returns:
      A list of dicts: predictor (name), type (the predictor oneof), beam_width, and for
      attention predictors max_num_steps, reverse and length_penalty. Auxiliary predictors
      (trained, never decoded) are left out.
    """
    which = model_config.WhichOneof("model_oneof")
    if which is None:
        return []
    settings = []
    for predictor in getattr(model_config, which).predictor:
        kind = predictor.WhichOneof("predictor_oneof")
        if kind is None or predictor.auxiliary:
            continue
        sub = getattr(predictor, kind)
        entry = {"predictor": predictor.name, "type": kind, "beam_width": sub.beam_width}
        if kind == "attention_predictor":
            entry.update(max_num_steps=sub.max_num_steps, reverse=sub.reverse,
                         length_penalty=round(sub.length_penalty, 6))
        settings.append(entry)
    return settings


# --------------------------------------------------------------------------- reports


PROTOCOL_NAMES = recognition_evaluation.PROTOCOL_NAMES


def _fmt_ratio(value):
    return "n/a" if value is None else f"{100.0 * value:.2f}%"


def _fmt_dropped(dropped):
    if not dropped:
        return "0"
    total = sum(dropped.values())
    details = ", ".join(f"{k} {v}" for k, v in sorted(dropped.items()) if v)
    return f"{total} ({details})" if details else str(total)


def _fmt_decoding(decoding):
    parts = []
    for d in decoding:
        settings = ", ".join(f"{k} {v}" for k, v in d.items() if k not in ("predictor", "type"))
        parts.append(f"{d.get('predictor')} ({d.get('type')}: {settings})")
    return "; ".join(parts) or "n/a"


def _fmt_gain(value):
    return "n/a" if value is None else f"{100.0 * value:+.2f} pp"


def _fmt_displacement(rectifier):
    mean, worst = rectifier.get("mean_displacement_px"), rectifier.get("max_displacement_px")
    if mean is None:
        return "n/a"
    return f"{mean:.2f}" if worst is None else f"{mean:.2f} (max {worst:.2f})"


def format_markdown(results):
    """A Markdown report of one checkpoint's results (see write_reports for the dict).

    The table has a control-point displacement column when some dataset has "rectifier", and
    identity-rectification accuracy and gain columns when some dataset has
    "identity_rectification"; a dataset without the value shows "-".
    """
    protocol = results.get("protocol")
    datasets = results["datasets"]
    show_identity = any(d.get("identity_rectification") is not None for d in datasets)
    show_displacement = any(d.get("rectifier") is not None for d in datasets)
    extra_header = (" identity-rect. accuracy | rectification gain |" if show_identity else "") \
        + (" control-point displacement (px) |" if show_displacement else "")
    extra_rule = "---:|---:|" * show_identity + "---:|" * show_displacement
    lines = [
        f"# Evaluation of {os.path.basename(results['checkpoint'])}",
        "",
        f"- checkpoint: `{results['checkpoint']}`",
        f"- step: {results['step']}",
        f"- protocol: {protocol} "
        f"({results.get('protocol_name') or PROTOCOL_NAMES.get(protocol, '?')})",
        f"- weights: {'moving averages' if results.get('use_moving_averages') else 'raw'}",
        f"- decoding: {_fmt_decoding(results.get('decoding', []))}",
        f"- evaluated at: {results.get('evaluated_at', '')}",
        "",
        "| dataset | size | accuracy | 1 - NED | lexicon accuracy |" + extra_header
        + " empty ground truth | dropped/corrupt | images/s |",
        "|---|---:|---:|---:|---:|" + extra_rule + "---:|---:|---:|",
    ]
    for d in datasets:
        lexicon = _fmt_ratio(d.get("lexicon_accuracy"))
        if d.get("num_with_lexicon"):
            lexicon += f" (of {d['num_with_lexicon']})"
        extra = ""
        if show_identity:
            identity = d.get("identity_rectification")
            extra += (" - | - |" if identity is None else
                      f" {_fmt_ratio(identity.get('accuracy'))} "
                      f"| {_fmt_gain(d.get('rectification_gain'))} |")
        if show_displacement:
            rectifier = d.get("rectifier")
            extra += " - |" if rectifier is None else f" {_fmt_displacement(rectifier)} |"
        lines.append(
            f"| {d['name']} | {d['size']} | {_fmt_ratio(d.get('accuracy'))} "
            f"| {_fmt_ratio(d.get('one_minus_ned'))} | {lexicon} |{extra}"
            f" {d.get('num_empty_groundtruth', 0)} | {_fmt_dropped(d.get('dropped'))} "
            f"| {d.get('images_per_sec', 0.0):.1f} |"
        )
    lines.append("")
    lines.append("images/s: steady-state throughput after the first batch (which pays the "
                 "one-time graph warm-up); dropped/corrupt: records skipped by the input reader.")
    if show_identity:
        lines.append("identity-rect. accuracy: the same images decoded with the rectifier forced "
                     "to the identity (control points at the TPS target pattern, a plain "
                     "resize); rectification gain: accuracy minus it, in percentage points.")
    if show_displacement:
        lines.append("control-point displacement: distance of the predicted control points "
                     "from the rectifier's initial ones in pixels of the model input, mean over "
                     "the points, then over the images (max: the per-image maximum, averaged); "
                     "about 0 means the rectifier has not moved from its initialisation.")
    lines.append("")
    others = [p for p in recognition_evaluation.PROTOCOLS if p != protocol]
    if datasets and others:
        lines.append("Other protocols (accuracy / 1 - NED): " + "; ".join(
            f"{d['name']}: " + ", ".join(
                f"{p}: {_fmt_ratio(d['protocols'][str(p)]['accuracy'])} / "
                f"{_fmt_ratio(d['protocols'][str(p)]['one_minus_ned'])}"
                for p in others if str(p) in d.get("protocols", {})
            )
            for d in results["datasets"]
        ))
        lines.append("")
    return "\n".join(lines)


def _write_atomic(path, text):
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def write_reports(results, eval_dir):
    """Writes results.json and results.md for one checkpoint.

    Both go to `eval_dir/step-<step>/` (kept per checkpoint) and to `eval_dir/` (the newest
    evaluation, overwritten), each written atomically.

    Args:
      results: dict with checkpoint, step, protocol (the resolved one: 36, 62, 94 or 1),
        protocol_name (optional, its description), use_moving_averages, decoding (list of
        dicts), evaluated_at, and datasets: a list of dicts with name, size, accuracy,
        one_minus_ned, lexicon_accuracy, num_with_lexicon, num_empty_groundtruth, dropped
        (dict reason -> count), images_per_sec (after the first batch), protocols
        ({"36": {...}, ..., "1": {...} when the model's character set is known}); optionally
        rectifier ({"mean_displacement", "mean_displacement_px", "max_displacement",
        "max_displacement_px", "num_control_points"}), identity_rectification ({"accuracy",
        "one_minus_ned", "num_correct"}) and rectification_gain (see evaluator).
      eval_dir: the evaluation folder.

    Returns:
      The per-checkpoint folder.
    """
    step_dir = os.path.join(eval_dir, f"step-{results['step']}")
    os.makedirs(step_dir, exist_ok=True)
    text_json = json.dumps(results, indent=2, sort_keys=True) + "\n"
    text_md = format_markdown(results)
    for folder in (step_dir, eval_dir):
        _write_atomic(os.path.join(folder, "results.json"), text_json)
        _write_atomic(os.path.join(folder, "results.md"), text_md)
    return step_dir
