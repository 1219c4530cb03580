"""Evaluates checkpoints on every eval_input_reader, in batches, and writes the reports.

    evaluator = Evaluator(pipeline_config, eval_dir)
    results = evaluator.evaluate("train/model.ckpt-1000")      # one checkpoint
    run(pipeline_config, checkpoint_dir, eval_dir)            # the loop beside training

For each checkpoint and each dataset a fresh graph is built: the one-epoch eval input
(input_reader_builder.build_eval_batches), the model in inference mode
(model_builder.build(model, is_training=False)), and a Saver over the model's variables (their
exponential moving averages when eval_config.use_moving_averages). Outputs (see eval_util):

    eval_dir/<dataset>/events.*                  scalar summaries and the example sheet
    eval_dir/<dataset>/examples-<step>.png       the example sheet
    eval_dir/step-<step>/results.{json,md}       the report of that checkpoint
    eval_dir/step-<step>/predictions-<dataset>.tsv
    eval_dir/results.{json,md}                   the newest report

Protocol: eval_config.protocol, with 0 (auto) resolved by recognition_evaluation.resolve_protocol
against the model's character set (model_charset: the characters of its decoded predictors' label
maps): 36 for an ASCII set, else 1, the character-set protocol. results.json's "protocol" is the
resolved one; "protocols" carries 36, 62, 94 and (when the model config has label maps) 1.

Datasets are named by eval_config.dataset_name, else after their reader's path (TFRecord
input_path, LMDB path); see eval_util.dataset_names.

Rectifier diagnostics (aster/utils/rectifier_eval.py): with a spatial transformer every
dataset's result carries "rectifier" (control-point displacement, normalised and in pixels);
with eval_config.compare_identity_rectification also "identity_rectification" ({"accuracy",
"one_minus_ned", "num_correct"}, primary protocol) and "rectification_gain" (accuracy - identity
accuracy).
"""

import csv
import datetime
import logging
import os
import time

import numpy as np

from aster import eval_util
from aster.core.standard_fields import InputDataFields as Fields
from aster.core.standard_fields import PredictionFields
from aster.tf_setup import tf
from aster.utils import config_checks, recognition_evaluation, rectifier_eval, visualization

logger = logging.getLogger(__name__)


def default_model_fn(model_config):
    """The model of `model_config` in inference mode (model_builder.build)."""
    from aster.builders import model_builder

    return model_builder.build(model_config, is_training=False)


def _default_batches_fn(input_reader_config, eval_config, batch_size):
    from aster.builders import input_reader_builder

    return input_reader_builder.build_eval_batches(input_reader_config, eval_config, batch_size)


# The field of each reader type that says where its data is (what a dataset is named after).
_PATH_FIELDS = {"tf_record_input_reader": "input_path", "lmdb_input_reader": "path"}


def _input_path(reader_config):
    """The reader's data path (TFRecord files, LMDB directories); "" for a reader without one."""
    kind = reader_config.WhichOneof("input_reader")
    if kind not in _PATH_FIELDS:
        return ""
    return getattr(getattr(reader_config, kind), _PATH_FIELDS[kind])


def model_charset(model_config):
    """The characters the model can output: those of its decoded predictors' label maps, in
    order, each once; None when the model config has no such predictor.

    Raises:
      ValueError: a character set that cannot be read (named by its field path).
    """
    from aster.builders import character_set_builder

    which = model_config.WhichOneof("model_oneof")
    if which is None:
        return None
    chars = {}
    for i, predictor in enumerate(getattr(model_config, which).predictor):
        kind = predictor.WhichOneof("predictor_oneof")
        if kind is None or predictor.auxiliary or not getattr(predictor, kind).HasField(
                "label_map"):
            continue
        path = f"model.{which}.predictor[{i}].{kind}.label_map.character_set"
        chars.update(dict.fromkeys(character_set_builder.build(
            getattr(predictor, kind).label_map.character_set, path)))
    return list(chars) or None


def _check_config(pipeline_config):
    """Raises ValueError (with the field path) for eval settings the evaluator cannot honour."""
    if not pipeline_config.eval_input_reader:
        raise config_checks.ConfigError(
            "eval_input_reader: the pipeline config has none; evaluation needs one")
    config_checks.check_eval(pipeline_config)  # the rules aster-config validate applies


class Evaluator:
    """Evaluates checkpoints of one pipeline config; see the module docstring."""

    def __init__(self, pipeline_config, eval_dir, model_fn=None, batches_fn=None):
        """Args:
          pipeline_config: pipeline_pb2.TrainEvalPipelineConfig.
          eval_dir: output folder (created).
          model_fn: () -> RecognitionModel in inference mode; default model_builder.build.
          batches_fn: (input_reader_config, eval_config, batch_size) -> (batch dict,
            drop_counts dict of int64 scalars cumulative up to each batch, fetched with it);
            default input_reader_builder.build_eval_batches.

        Raises:
          ValueError: no eval reader, bad protocol, batch size or dataset names.
        """
        _check_config(pipeline_config)
        self._config = pipeline_config
        self._eval_config = pipeline_config.eval_config
        self._charset = model_charset(pipeline_config.model)
        self._protocol = recognition_evaluation.resolve_protocol(self._eval_config.protocol,
                                                                 self._charset)
        self._eval_dir = eval_dir
        self._model_fn = model_fn or (lambda: default_model_fn(pipeline_config.model))
        self._batches_fn = batches_fn or _default_batches_fn
        readers = list(pipeline_config.eval_input_reader)
        paths = [_input_path(r) for r in readers]
        names = eval_util.dataset_names(paths, list(self._eval_config.dataset_name))
        self._datasets = list(zip(names, readers, paths, strict=True))
        self._warned_no_rectifier = False
        os.makedirs(eval_dir, exist_ok=True)

    @property
    def dataset_names(self):
        return [name for name, _, _ in self._datasets]

    @property
    def protocol(self):
        """The primary protocol: eval_config.protocol, with 0 (auto) resolved for the model."""
        return self._protocol

    def _evaluation(self, protocol):
        return recognition_evaluation.RecognitionEvaluation(
            protocol, self._charset, self._eval_config.charset_fold_case)

    def evaluate(self, checkpoint_path):
        """Evaluates one checkpoint on every dataset and writes the reports.

        Returns:
          The results dict (see eval_util.write_reports).

        Raises:
          eval_util.CheckpointUnavailableError: the checkpoint vanished or cannot be read.
          ValueError: the checkpoint does not hold the model's variables.
        """
        step = eval_util.checkpoint_step(checkpoint_path)
        results = {
            "checkpoint": checkpoint_path,
            "step": step,
            "protocol": self._protocol,
            "protocol_name": recognition_evaluation.describe(
                self._protocol, self._eval_config.charset_fold_case),
            "use_moving_averages": self._eval_config.use_moving_averages,
            "decoding": eval_util.decoding_settings(self._config.model),
            "evaluated_at": datetime.datetime.now().isoformat(timespec="seconds"),
            "datasets": [],
        }
        step_dir = os.path.join(self._eval_dir, f"step-{step}")
        os.makedirs(step_dir, exist_ok=True)
        for name, reader, path in self._datasets:
            logger.info("evaluating %s on %s", checkpoint_path, name)
            dataset = self._evaluate_dataset(name, reader, checkpoint_path, step, step_dir)
            dataset["input_path"] = path
            results["datasets"].append(dataset)
        eval_util.write_reports(results, self._eval_dir)
        return results

    # ------------------------------------------------------------------------ one dataset

    def _evaluate_dataset(self, name, reader, checkpoint_path, step, step_dir):
        dataset_dir = os.path.join(self._eval_dir, name)
        os.makedirs(dataset_dir, exist_ok=True)
        with tf.Graph().as_default() as graph:
            fetches, saver, init_op = self._build_graph(reader, checkpoint_path)
            with tf.Session(self._eval_config.eval_master, graph=graph) as sess:
                sess.run(init_op)
                restore(sess, saver, checkpoint_path)
                epoch = self._run_epoch(sess, fetches)
            if self._eval_config.save_graph:
                tf.summary.FileWriter(dataset_dir, graph=graph).close()
        evaluations, dropped = epoch["evaluations"], epoch["dropped"]
        primary = evaluations[self._protocol].result()
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
            "batch_size": self._eval_config.batch_size,
            "ignore_groundtruth": self._eval_config.ignore_groundtruth,
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
        sheet_path = os.path.join(dataset_dir, f"examples-{step}.png")
        result["examples_shown"] = [v["index"] for v in epoch["visuals"]]
        sheet = visualization.make_example_sheet(
            epoch["visuals"], title=f"{name}  step {step}  protocol {self._protocol}")
        png = visualization.to_png_bytes(sheet)
        with open(sheet_path, "wb") as f:
            f.write(png)
        result["examples_sheet"] = sheet_path
        result["predictions"] = _write_predictions(
            os.path.join(step_dir, f"predictions-{name}.tsv"),
            evaluations[self._protocol].examples)
        _write_summaries(dataset_dir, step, result, png)
        if self._eval_config.eval_with_lexicon and not result["num_with_lexicon"]:
            logger.warning("eval_config.eval_with_lexicon is set but no record of %s carries a "
                           "lexicon", name)
        return result

    def _build_graph(self, reader, checkpoint_path):
        """Builds input, model and restore ops in the current graph."""
        batch, drop_counts = self._batches_fn(reader, self._eval_config,
                                              self._eval_config.batch_size)
        before = set(tf.global_variables())
        model = self._model_fn()
        images = model.preprocess(batch[Fields.image])
        predictions = model.postprocess(model.predict(images))
        model_vars = [v for v in tf.global_variables() if v not in before]
        stn = rectifier_eval.spatial_transformer(model)
        identity_text = None
        if self._eval_config.compare_identity_rectification:
            if stn is None:
                if not self._warned_no_rectifier:
                    logger.warning("eval_config.compare_identity_rectification is set but the "
                                   "model has no spatial transformer; skipping the comparison")
                    self._warned_no_rectifier = True
            else:
                identity_text = rectifier_eval.identity_rectification_text(model, images)
        saver = make_saver(model_vars, checkpoint_path, self._eval_config.use_moving_averages)
        others = [v for v in tf.global_variables() if v not in set(model_vars)]
        init_op = tf.group(tf.variables_initializer(others), tf.local_variables_initializer(),
                           tf.tables_initializer())
        light = {
            "text": predictions[PredictionFields.text],
            "scores": predictions[PredictionFields.scores],
            "groundtruth": batch[Fields.groundtruth_text],
            "filename": batch[Fields.filename],
            "lexicon": batch[Fields.lexicon],
            # Cumulative counts up to this batch: fetched with it, the last value is the total.
            "dropped": dict(drop_counts or {}),
        }
        if stn is not None:
            light["rectifier"] = rectifier_eval.control_point_displacement(
                predictions[PredictionFields.control_points], stn.init_control_points,
                tf.shape(images)[1], tf.shape(images)[2])
        if identity_text is not None:
            light["identity_text"] = identity_text
        heavy = dict(light, image=batch[Fields.image])
        for key in (PredictionFields.control_points, PredictionFields.rectified_images):
            if predictions.get(key) is not None:
                heavy[key] = predictions[key]
        fetches = {"light": light, "heavy": heavy}
        if stn is not None:
            fetches["num_control_points"] = int(np.shape(stn.init_control_points)[0])
        return fetches, saver, init_op

    def _run_epoch(self, sess, fetches):
        """Runs the eval epoch; returns evaluations per protocol, visual examples and timing."""
        config = self._eval_config
        limit = config.num_examples
        protocols = recognition_evaluation.PROTOCOLS if self._charset else \
            recognition_evaluation.ASCII_PROTOCOLS
        evaluations = {p: self._evaluation(p) for p in protocols}
        identity = (self._evaluation(self._protocol)
                    if "identity_text" in fetches["light"] else None)
        displacement = {k: 0.0 for k in fetches["light"].get("rectifier", {})}
        collector = _VisualCollector(config.num_visualizations, config.only_visualize_incorrect)
        count, dropped = 0, {k: 0 for k in fetches["light"]["dropped"]}
        start = time.perf_counter()
        warm = None  # (time, images) after the first batch, which pays the one-time warm-up
        while not limit or count < limit:
            try:
                out = sess.run(fetches["heavy"] if collector.wants_more else fetches["light"])
            except tf.errors.OutOfRangeError:
                break
            dropped = {k: int(v) for k, v in out["dropped"].items()}
            n = len(out["text"]) if not limit else min(len(out["text"]), limit - count)
            gts = [b""] * n if config.ignore_groundtruth else out["groundtruth"][:n]
            for protocol, evaluation in evaluations.items():
                added = evaluation.add_batch(out["text"][:n], gts, lexicons=out["lexicon"][:n],
                                             filenames=out["filename"][:n],
                                             scores=out["scores"][:n])
                if protocol == self._protocol:
                    collector.add(out, added)
            if identity is not None:
                identity.add_batch(out["identity_text"][:n], gts)
            for key in displacement:
                displacement[key] += float(np.sum(out["rectifier"][key][:n], dtype=np.float64))
            count += n
            if warm is None:
                warm = (time.perf_counter(), count)
        end = time.perf_counter()
        return {
            "evaluations": evaluations,
            "dropped": dropped,
            "visuals": collector.select(),
            "seconds": end - start,
            "first_batch_seconds": (warm[0] - start) if warm else 0.0,
            "images_per_sec": _throughput(start, warm, end, count),
            "rectifier": rectifier_eval.displacement_report(displacement, count,
                                              fetches.get("num_control_points")),
            "identity": identity,
        }


def _throughput(start, warm, end, count):
    """Images/s after the first batch (steady state); over the whole epoch if it had one batch."""
    if warm is not None and count > warm[1] and end > warm[0]:
        return (count - warm[1]) / (end - warm[0])
    return count / (end - start) if end > start else 0.0


class _VisualCollector:
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


# --------------------------------------------------------------------------- restore


def make_saver(model_vars, checkpoint_path, use_moving_averages):
    """A Saver restoring `model_vars` (or their moving averages) from `checkpoint_path`.

    With use_moving_averages each trainable variable is restored from its
    ExponentialMovingAverage shadow (`<name>/ExponentialMovingAverage`); non-trainable ones
    (batch-norm statistics) from themselves. Returns None when there is nothing to restore.

    Raises:
      eval_util.CheckpointUnavailableError: the checkpoint cannot be read.
      ValueError: variables missing from the checkpoint, or no moving averages in it.
    """
    try:
        reader = tf.train.NewCheckpointReader(checkpoint_path)
    except (tf.errors.NotFoundError, tf.errors.DataLossError, tf.errors.OpError) as e:
        raise eval_util.CheckpointUnavailableError(f"{checkpoint_path}: {e.message}") from e
    stored = set(reader.get_variable_to_shape_map())
    var_list = {v.op.name: v for v in model_vars}
    if use_moving_averages:
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
    missing = sorted(name for name in var_list if name not in stored)
    if missing:
        raise ValueError(
            f"checkpoint {checkpoint_path} lacks {len(missing)} of the model's "
            f"{len(var_list)} variables (does the model config match the training run?): "
            f"{missing[:5]}")
    if not var_list:
        return None
    return tf.train.Saver(var_list=var_list, save_relative_paths=True)


def restore(sess, saver, checkpoint_path):
    """Restores `saver` (from make_saver; None restores nothing) into `sess`.

    Raises:
      eval_util.CheckpointUnavailableError: the checkpoint vanished or is truncated.
    """
    if saver is None:
        return
    try:
        saver.restore(sess, checkpoint_path)
    except (tf.errors.NotFoundError, tf.errors.DataLossError) as e:
        raise eval_util.CheckpointUnavailableError(f"{checkpoint_path}: {e.message}") from e
    except ValueError as e:
        if eval_util.checkpoint_exists(checkpoint_path):
            raise
        raise eval_util.CheckpointUnavailableError(f"{checkpoint_path}: {e}") from e


# --------------------------------------------------------------------------- outputs


def _write_predictions(path, examples):
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


def _write_summaries(dataset_dir, step, result, sheet_png):
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


# --------------------------------------------------------------------------- the loop


def _final_step(pipeline_config, checkpoint_dir):
    """train_config.num_steps of the training run (its pipeline.config when present)."""
    from aster.utils import config_util

    path = os.path.join(checkpoint_dir, config_util.PIPELINE_FILENAME)
    if os.path.isfile(path):
        try:
            return config_util.load_pipeline_config(path).train_config.num_steps
        except ValueError as e:
            logger.warning("cannot read %s (%s); using this config's num_steps", path, e)
    return pipeline_config.train_config.num_steps


def run(pipeline_config, eval_dir, checkpoint_dir=None, run_once=False, checkpoint_path=None,
        model_fn=None, batches_fn=None, on_result=None, sleep=time.sleep):
    """Evaluates one checkpoint, the newest one, or every checkpoint as training writes them.

    Args:
      pipeline_config: pipeline_pb2.TrainEvalPipelineConfig.
      eval_dir: output folder.
      checkpoint_dir: the training folder to watch (not needed with checkpoint_path).
      run_once: evaluate only the newest checkpoint in checkpoint_dir (also implied by
        eval_config.ignore_groundtruth, as in the original).
      checkpoint_path: evaluate exactly this checkpoint (a path prefix like dir/model.ckpt-100).
      model_fn, batches_fn: see Evaluator.
      on_result: called with each checkpoint's results dict as soon as it is written.
      sleep: injectable for tests.

    Otherwise the loop (eval_util.checkpoint_loop) polls every eval_config.eval_interval_secs
    (0 means 1 s) and stops after eval_config.max_evals evaluations, after eval_timeout_secs
    without a new checkpoint, or after the final step (eval_config.stop_at_final_step).

    Returns:
      The list of results dicts, in evaluation order.

    Raises:
      ValueError: missing checkpoint or checkpoint_dir, or a bad eval config.
    """
    evaluator = Evaluator(pipeline_config, eval_dir, model_fn=model_fn, batches_fn=batches_fn)
    eval_config = pipeline_config.eval_config
    results = []

    def evaluate(path):
        result = evaluator.evaluate(path)
        results.append(result)
        if on_result is not None:
            on_result(result)

    if checkpoint_path:
        if not eval_util.checkpoint_exists(checkpoint_path):
            raise ValueError(f"--checkpoint_path {checkpoint_path!r}: no complete checkpoint there "
                             "(expected its .index and .data-* files)")
        evaluate(checkpoint_path)
        return results
    if not checkpoint_dir:
        raise ValueError("--checkpoint_dir is required unless --checkpoint_path is given")
    if run_once or eval_config.ignore_groundtruth:
        newest = eval_util.newest_checkpoint(checkpoint_dir)
        if newest is None:
            raise ValueError(f"--checkpoint_dir {checkpoint_dir!r}: no complete checkpoint found")
        evaluate(newest.path)
        return results
    final_step = _final_step(pipeline_config, checkpoint_dir) if eval_config.stop_at_final_step \
        else 0
    eval_util.checkpoint_loop(
        checkpoint_dir, lambda ckpt: evaluate(ckpt.path),
        poll_secs=eval_config.eval_interval_secs or 1.0, max_evals=eval_config.max_evals,
        timeout_secs=eval_config.eval_timeout_secs, final_step=final_step, sleep=sleep)
    return results
