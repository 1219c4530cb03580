"""What an evaluation writes: the reports, predictions, summaries and the example sheet.

    eval_dir/<dataset>/events.*                  scalar summaries and the example sheet
    eval_dir/<dataset>/examples-<step>.png       the example sheet (write_example_sheet)
    eval_dir/step-<step>/results.{json,md}       the report of that checkpoint (write_reports)
    eval_dir/step-<step>/predictions-<dataset>.tsv   one row per example (write_predictions)
    eval_dir/results.{json,md}                   the newest report

ExampleCollector keeps the examples the sheet shows while the evaluator runs an epoch;
format_markdown is the report aster-eval prints.
"""

import csv
import json
import os

from aster.core.standard_fields import PredictionFields
from aster.tf_setup import tf
from aster.utils import recognition_evaluation, visualization

PROTOCOL_NAMES = recognition_evaluation.PROTOCOL_NAMES


# --------------------------------------------------------------------------- the example sheet


class ExampleCollector:
    """Keeps the images of the first examples, and of the first wrong ones when asked."""

    def __init__(self, num, incorrect_first):
        self._num = num
        self._incorrect_first = incorrect_first
        self._first, self._wrong = [], []

    @property
    def wants_more(self):
        if len(self._first) < self._num:
            return True
        return self._incorrect_first and len(self._wrong) < self._num

    def add(self, out, examples):
        if "image" not in out:
            return
        for i, example in enumerate(examples):
            visual = {
                "index": example.index, "filename": example.filename,
                "prediction": example.prediction, "groundtruth": example.groundtruth,
                "correct": example.correct, "score": example.score, "image": out["image"][i],
                "control_points": _get(out, PredictionFields.control_points, i),
                "rectified_image": _get(out, PredictionFields.rectified_images, i),
            }
            if len(self._first) < self._num:
                self._first.append(visual)
            if example.correct is False and len(self._wrong) < self._num:
                self._wrong.append(visual)

    def select(self):
        merged = {v["index"]: v for v in self._wrong + self._first}
        ordered = [merged[k] for k in sorted(merged)]
        return visualization.select_examples(ordered, self._num, self._incorrect_first)


def _get(out, key, i):
    return out[key][i] if key in out else None


def write_example_sheet(visuals, path, title):
    """Writes the example sheet of `visuals` (ExampleCollector.select) as a PNG; returns it."""
    png = visualization.to_png_bytes(visualization.make_example_sheet(visuals, title=title))
    with open(path, "wb") as f:
        f.write(png)
    return png


# --------------------------------------------------------------------------- predictions, summaries


def write_predictions(path, examples):
    """Writes one TSV row per evaluated example (recognition_evaluation examples); returns path."""
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, delimiter="\t", lineterminator="\n")
        writer.writerow(["index", "filename", "groundtruth", "prediction", "score", "correct",
                         "lexicon_prediction"])
        for e in examples:
            writer.writerow([e.index, e.filename, e.groundtruth, e.prediction,
                             "" if e.score is None else f"{e.score:.6f}",
                             "" if e.correct is None else int(e.correct),
                             e.lexicon_prediction or ""])
    return path


def write_summaries(dataset_dir, step, result, sheet_png):
    """Writes a dataset's eval/* scalars and the example sheet as TensorBoard summaries."""
    values = [
        tf.Summary.Value(tag=f"eval/{key}", simple_value=float(result[key]))
        for key in ("accuracy", "one_minus_ned", "lexicon_accuracy", "images_per_sec",
                    "num_empty_groundtruth", "num_dropped")
        if result.get(key) is not None
    ]
    extra = {
        "rectifier/mean_displacement_px": (result.get("rectifier") or {}).get(
            "mean_displacement_px"),
        "rectifier/max_displacement_px": (result.get("rectifier") or {}).get(
            "max_displacement_px"),
        "identity_rectification/accuracy": (result.get("identity_rectification") or {}).get(
            "accuracy"),
        "rectification_gain": result.get("rectification_gain"),
    }
    values += [tf.Summary.Value(tag=f"eval/{k}", simple_value=float(v))
               for k, v in extra.items() if v is not None]
    values += [tf.Summary.Value(tag=f"eval/dropped_{k}", simple_value=float(v))
               for k, v in result["dropped"].items()]
    height, width = visualization.png_size(sheet_png)
    image = tf.Summary.Image(encoded_image_string=sheet_png, height=height, width=width,
                             colorspace=3)
    values.append(tf.Summary.Value(tag="eval/examples", image=image))
    writer = tf.summary.FileWriter(dataset_dir)
    writer.add_summary(tf.Summary(value=values), step)
    writer.close()


# --------------------------------------------------------------------------- reports


def dataset_result(name, epoch, protocol, eval_config):
    """One dataset's entry of the results (see write_reports) from its evaluated epoch.

    Args:
      name: the dataset's name.
      epoch: the evaluator's epoch dict: evaluations ({protocol: RecognitionEvaluation}),
        dropped, seconds, first_batch_seconds, images_per_sec, rectifier (or None) and
        identity (the identity-rectification RecognitionEvaluation, or None).
      protocol: the primary protocol.
      eval_config: eval_pb2.EvalConfig.
    """
    evaluations, dropped = epoch["evaluations"], epoch["dropped"]
    primary = evaluations[protocol].result()
    result = {
        "name": name,
        "size": primary["num_examples"],
        **{k: v for k, v in primary.items() if k not in ("num_examples", "protocol")},
        "protocols": {
            str(p): {k: e.result()[k] for k in ("accuracy", "one_minus_ned",
                                                 "lexicon_accuracy")}
            for p, e in evaluations.items()
        },
        "dropped": dropped,
        "num_dropped": int(sum(dropped.values())),
        "seconds": epoch["seconds"],
        "first_batch_seconds": epoch["first_batch_seconds"],
        "images_per_sec": epoch["images_per_sec"],
        "batch_size": eval_config.batch_size,
        "ignore_groundtruth": eval_config.ignore_groundtruth,
    }
    if epoch["rectifier"] is not None:
        result["rectifier"] = epoch["rectifier"]
    if epoch["identity"] is not None:
        identity = epoch["identity"].result()
        result["identity_rectification"] = {
            k: identity[k] for k in ("accuracy", "one_minus_ned", "num_correct")}
        result["rectification_gain"] = (
            None if result["accuracy"] is None or identity["accuracy"] is None
            else result["accuracy"] - identity["accuracy"])
    return result


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


def _header(results):
    protocol = results.get("protocol")
    return [
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
    ]


def _table(datasets, show_identity, show_displacement):
    extra_header = (" identity-rect. accuracy | rectification gain |" if show_identity else "") \
        + (" control-point displacement (px) |" if show_displacement else "")
    extra_rule = "---:|---:|" * show_identity + "---:|" * show_displacement
    lines = [
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
    return lines


def _notes(show_identity, show_displacement):
    lines = ["", "images/s: steady-state throughput after the first batch (which pays the "
             "one-time graph warm-up); dropped/corrupt: records skipped by the input reader."]
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
    return lines


def _protocol_table(datasets, protocol):
    """Word accuracy (1 - NED) of every dataset under every protocol scored, side by side: each
    against the record's transcript as written (36 ignores case and punctuation, 94 keeps both)."""
    scored = [p for p in recognition_evaluation.PROTOCOLS
              if any(str(p) in d.get("protocols", {}) for d in datasets)]
    if not datasets or not scored:
        return []
    names = [f"protocol {p}{' (headline)' if p == protocol else ''}" for p in scored]
    lines = ["Accuracy (1 - NED) by protocol, each against the transcript as written:", "",
             "| dataset | " + " | ".join(names) + " |", "|---|" + "---:|" * len(scored)]
    for d in datasets:
        cells = []
        for p in scored:
            entry = d.get("protocols", {}).get(str(p))
            cells.append("-" if entry is None else f"{_fmt_ratio(entry['accuracy'])} "
                         f"({_fmt_ratio(entry['one_minus_ned'])})")
        lines.append(f"| {d['name']} | " + " | ".join(cells) + " |")
    return lines + [""]


def format_markdown(results):
    """A Markdown report of one checkpoint's results (see write_reports for the dict).

    The table has a control-point displacement column when some dataset has "rectifier", and
    identity-rectification accuracy and gain columns when some dataset has
    "identity_rectification"; a dataset without the value shows "-".
    """
    datasets = results["datasets"]
    show_identity = any(d.get("identity_rectification") is not None for d in datasets)
    show_displacement = any(d.get("rectifier") is not None for d in datasets)
    lines = (_header(results) + _table(datasets, show_identity, show_displacement)
             + _notes(show_identity, show_displacement)
             + _protocol_table(datasets, results.get("protocol")))
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
