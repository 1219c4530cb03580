"""Evaluates checkpoints on every eval_input_reader, in batches, and writes the reports.

    evaluator = Evaluator(pipeline_config, eval_dir)
    results = evaluator.evaluate("train/model.ckpt-1000")      # one checkpoint
    run(pipeline_config, checkpoint_dir, eval_dir)            # the loop beside training

For each checkpoint and each dataset a fresh graph is built: the one-epoch eval input
(input_reader_builder.build_eval_batches), the model in inference mode
(inference.build_inference_graph), and a Saver over the model's variables (their exponential
moving averages when eval_config.use_moving_averages; utils/checkpoints.make_saver). The
outputs (results.{json,md} per checkpoint and newest, predictions, summaries, the example sheet)
are described in aster/eval_reports.py.

Protocol: eval_config.protocol, with 0 (auto) resolved by recognition_evaluation.resolve_protocol
against the model's character set (eval_util.model_charset: the characters of its decoded
predictors' label maps): 36 for an ASCII set, else 1, the character-set protocol. results.json's
"protocol" is the resolved one; "protocols" carries 36, 62, 94 and (when the model config has
label maps) 1.

Datasets are named by eval_config.dataset_name, else after their reader's path (TFRecord
input_path, LMDB path); see eval_util.dataset_names.

Rectifier diagnostics (aster/utils/rectifier_eval.py): with a spatial transformer every
dataset's result carries "rectifier" (control-point displacement, normalised and in pixels);
with eval_config.compare_identity_rectification also "identity_rectification" ({"accuracy",
"one_minus_ned", "num_correct"}, primary protocol) and "rectification_gain" (accuracy - identity
accuracy).
"""

import datetime
import logging
import os
import time

import numpy as np

from aster import eval_reports, eval_util, inference
from aster.core.standard_fields import InputDataFields as Fields
from aster.core.standard_fields import PredictionFields
from aster.tf_setup import tf
from aster.utils import checkpoints, config_checks, recognition_evaluation, rectifier_eval

logger = logging.getLogger(__name__)


def _default_batches_fn(input_reader_config, eval_config, batch_size):
    from aster.builders import input_reader_builder

    return input_reader_builder.build_eval_batches(input_reader_config, eval_config, batch_size)


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
          model_fn: () -> RecognitionModel in inference mode; default
            inference.default_model_fn.
          batches_fn: (input_reader_config, eval_config, batch_size) -> (batch dict,
            drop_counts dict of int64 scalars cumulative up to each batch, fetched with it);
            default input_reader_builder.build_eval_batches.

        Raises:
          ValueError: no eval reader, bad protocol, batch size or dataset names.
        """
        _check_config(pipeline_config)
        self._config = pipeline_config
        self._eval_config = pipeline_config.eval_config
        self._charset = eval_util.model_charset(pipeline_config.model)
        self._protocol = recognition_evaluation.resolve_protocol(self._eval_config.protocol,
                                                                 self._charset)
        self._eval_dir = eval_dir
        self._model_fn = model_fn
        self._batches_fn = batches_fn or _default_batches_fn
        readers = list(pipeline_config.eval_input_reader)
        paths = [eval_util.input_path(r) for r in readers]
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
          The results dict (see eval_reports.write_reports).

        Raises:
          checkpoints.CheckpointUnavailableError: the checkpoint vanished or cannot be read.
          ValueError: the checkpoint does not hold the model's variables.
        """
        step = checkpoints.checkpoint_step(checkpoint_path)
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
        eval_reports.write_reports(results, self._eval_dir)
        return results

    # ------------------------------------------------------------------------ one dataset

    def _evaluate_dataset(self, name, reader, checkpoint_path, step, step_dir):
        dataset_dir = os.path.join(self._eval_dir, name)
        os.makedirs(dataset_dir, exist_ok=True)
        with tf.Graph().as_default() as graph:
            fetches, saver, init_op = self._build_graph(reader, checkpoint_path)
            with tf.Session(self._eval_config.eval_master, graph=graph) as sess:
                sess.run(init_op)
                checkpoints.restore(sess, saver, checkpoint_path)
                epoch = self._run_epoch(sess, fetches)
            if self._eval_config.save_graph:
                tf.summary.FileWriter(dataset_dir, graph=graph).close()
        result = eval_reports.dataset_result(name, epoch, self._protocol, self._eval_config)
        result["examples_shown"] = [v["index"] for v in epoch["visuals"]]
        result["examples_sheet"] = os.path.join(dataset_dir, f"examples-{step}.png")
        png = eval_reports.write_example_sheet(
            epoch["visuals"], result["examples_sheet"],
            title=f"{name}  step {step}  protocol {self._protocol}")
        result["predictions"] = eval_reports.write_predictions(
            os.path.join(step_dir, f"predictions-{name}.tsv"),
            epoch["evaluations"][self._protocol].examples)
        eval_reports.write_summaries(dataset_dir, step, result, png)
        if self._eval_config.eval_with_lexicon and not result["num_with_lexicon"]:
            logger.warning("eval_config.eval_with_lexicon is set but no record of %s carries a "
                           "lexicon", name)
        return result

    def _identity_text(self, graph):
        """The identity-rectification texts when asked for and possible, else None."""
        if not self._eval_config.compare_identity_rectification:
            return None
        if rectifier_eval.spatial_transformer(graph.model) is None:
            if not self._warned_no_rectifier:
                logger.warning("eval_config.compare_identity_rectification is set but the "
                               "model has no spatial transformer; skipping the comparison")
                self._warned_no_rectifier = True
            return None
        return rectifier_eval.identity_rectification_text(graph.model, graph.images)

    def _build_graph(self, reader, checkpoint_path):
        """Builds input, model and restore ops in the current graph."""
        batch, drop_counts = self._batches_fn(reader, self._eval_config,
                                              self._eval_config.batch_size)
        graph = inference.build_inference_graph(self._config.model, batch[Fields.image],
                                                self._model_fn)
        predictions, stn = graph.predictions, rectifier_eval.spatial_transformer(graph.model)
        identity_text = self._identity_text(graph)
        saver = checkpoints.make_saver(graph.variables, checkpoint_path,
                                       self._eval_config.use_moving_averages)
        others = [v for v in tf.global_variables() if v not in set(graph.variables)]
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
                tf.shape(graph.images)[1], tf.shape(graph.images)[2])
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
        # The character-set protocol for a script the ASCII ones cannot score (or when it is the
        # headline): for an ASCII model it would only drop the labels' other case.
        charset_protocol = self._charset and (
            not recognition_evaluation.is_ascii_charset(self._charset)
            or self._protocol == recognition_evaluation.CHARSET)
        protocols = recognition_evaluation.PROTOCOLS if charset_protocol else \
            recognition_evaluation.ASCII_PROTOCOLS
        evaluations = {p: self._evaluation(p) for p in protocols}
        identity = (self._evaluation(self._protocol)
                    if "identity_text" in fetches["light"] else None)
        displacement = {k: 0.0 for k in fetches["light"].get("rectifier", {})}
        collector = eval_reports.ExampleCollector(config.num_visualizations,
                                                  config.only_visualize_incorrect)
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


# --------------------------------------------------------------------------- the loop


def run(pipeline_config, eval_dir, checkpoint_dir=None, run_once=False, checkpoint_path=None,
        model_fn=None, batches_fn=None, on_result=None, sleep=time.sleep):
    """Evaluates one checkpoint, the newest one, or every checkpoint as training writes them.

    Args:
      pipeline_config: pipeline_pb2.TrainEvalPipelineConfig.
      eval_dir: output folder.
      checkpoint_dir: the training folder to watch (not needed with checkpoint_path).
      run_once: evaluate only the newest checkpoint in checkpoint_dir (checkpoints.newest; also
        implied by eval_config.ignore_groundtruth, as in the original).
      checkpoint_path: evaluate this one checkpoint: what checkpoints.resolve takes (a prefix like
        dir/model.ckpt-100, a training or model folder, a shipped model's name).
      model_fn, batches_fn: see Evaluator.
      on_result: called with each checkpoint's results dict as soon as it is written.
      sleep: injectable for tests.

    Otherwise the loop (checkpoints.checkpoint_loop) polls every eval_config.eval_interval_secs
    (0 means 1 s) and stops after eval_config.max_evals evaluations, after eval_timeout_secs
    without a new checkpoint, or after the final step (eval_config.stop_at_final_step).

    Returns:
      The list of results dicts, in evaluation order.

    Raises:
      ValueError: missing checkpoint or checkpoint_dir (from checkpoints.resolve for
        checkpoint_path), or a bad eval config.
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
        evaluate(checkpoints.resolve(checkpoint_path, "--checkpoint_path"))
        return results
    if not checkpoint_dir:
        raise ValueError("--checkpoint_dir is required unless --checkpoint_path is given")
    if run_once or eval_config.ignore_groundtruth:
        newest = checkpoints.newest(checkpoint_dir)
        if newest is None:
            raise ValueError(f"--checkpoint_dir {checkpoint_dir!r}: no complete checkpoint found")
        evaluate(newest.path)
        return results
    final_step = eval_util.final_step(pipeline_config, checkpoint_dir) \
        if eval_config.stop_at_final_step else 0
    checkpoints.checkpoint_loop(
        checkpoint_dir, lambda ckpt: evaluate(ckpt.path),
        poll_secs=eval_config.eval_interval_secs or 1.0, max_evals=eval_config.max_evals,
        timeout_secs=eval_config.eval_timeout_secs, final_step=final_step, sleep=sleep)
    return results
