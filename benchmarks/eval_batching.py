"""Eval throughput of the paper model at batch 1 against batched evaluation, on this CPU.

    .venv/bin/python benchmarks/eval_batching.py [--config configs/aster_paper.config]
        [--batch_size 32] [--images 128] [--batch1_images 32] [--repeats 3]

Two measurements, both with random weights (speed does not depend on them):

* evaluator: what aster-eval reports as images/s. A TFRecord of --images random 48x160 PNG
  word images is written to a temporary folder, a random checkpoint of the config's model is
  saved, and Evaluator.evaluate runs one epoch with eval_config.batch_size 1 (limited to
  --batch1_images by num_examples) and with --batch_size. The figure covers the epoch loop
  (input pipeline, model, metrics), not graph building or the restore.
* model: preprocess -> predict -> postprocess alone, fed random 64x256 arrays, fetching text
  and scores.

Batch-1 and batched passes alternate --repeats times so that both see the same load on a shared
machine; the medians and their ratio are reported, and for the model also the ratio in process
CPU time, which machine load disturbs less. Prints one JSON line at the end.
"""

import argparse
import io
import json
import os
import statistics
import sys
import tempfile
import time

import common  # benchmarks/common.py (scripts run as python benchmarks/<name>.py)
import numpy as np


def _write_data_and_checkpoint(config, folder, num_images):
    """A TFRecord of random word images and a random checkpoint; returns (record, ckpt)."""
    from PIL import Image

    from aster import inference
    from aster.tf_setup import tf
    from aster.tools import tfrecord_utils

    rng = np.random.default_rng(0)
    examples = []
    for i in range(num_images):
        buffer = io.BytesIO()
        Image.fromarray(rng.integers(0, 255, (48, 160, 3), dtype=np.uint8)).save(buffer, "PNG")
        examples.append(tfrecord_utils.make_example(buffer.getvalue(), "word", "png",
                                                    filename=f"{i}.png"))
    record = os.path.join(folder, "bench.tfrecord")
    tfrecord_utils.write_tfrecords(examples, record)
    height, width = inference.model_input_size(config.model)
    with tf.Graph().as_default():
        inference.build_inference_graph(config.model, tf.zeros([1, height, width, 3]))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            ckpt = tf.train.Saver().save(sess, os.path.join(folder, "model.ckpt"),
                                         global_step=1, write_meta_graph=False)
    return record, ckpt


def _measure_evaluator(config, args, folder):
    """Alternating batch-1 / batched Evaluator epochs; returns {batch size: [images/s]}."""
    from aster import evaluator
    from aster.utils import config_util

    record, ckpt = _write_data_and_checkpoint(config, folder, args.images)
    settings = {1: args.batch1_images, args.batch_size: 0}
    rates = {b: [] for b in settings}
    for r in range(args.repeats):
        for b, limit in settings.items():
            run_config = config_util.merge_overrides(config, assignments=[
                "eval_config.num_visualizations=0", f"eval_config.batch_size={b}",
                f"eval_config.num_examples={limit}",
                f"eval_input_reader[0].tf_record_input_reader.input_path={record}"])
            del run_config.eval_input_reader[1:]
            eval_dir = os.path.join(folder, f"eval_b{b}_r{r}")
            results = evaluator.Evaluator(run_config, eval_dir).evaluate(ckpt)
            rates[b].append(results["datasets"][0]["images_per_sec"])
    return rates


def _measure_model(config, args):
    """Alternating batch-1 / batched session runs on fed arrays.

    Returns:
      ({batch size: [wall images/s]}, {batch size: [CPU-time images/s]}).
    """
    from aster import inference
    from aster.core.standard_fields import PredictionFields
    from aster.tf_setup import tf

    height, width = inference.model_input_size(config.model)
    rng = np.random.default_rng(0)
    batches = {b: rng.uniform(0, 255, size=(b, height, width, 3)).astype(np.float32)
               for b in (1, args.batch_size)}
    counts = {1: args.batch1_images, args.batch_size: args.images}
    rates = {b: [] for b in batches}
    cpu_rates = {b: [] for b in batches}
    with tf.Graph().as_default():
        images = tf.placeholder(tf.float32, [None, height, width, 3])
        predictions = inference.build_inference_graph(config.model, images).predictions
        fetches = [predictions[PredictionFields.text], predictions[PredictionFields.scores]]
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
            for batch in batches.values():
                sess.run(fetches, {images: batch})  # warm-up
            for _ in range(args.repeats):
                for b, batch in batches.items():
                    runs = max(1, counts[b] // b)
                    wall, cpu = time.perf_counter(), time.process_time()
                    for _ in range(runs):
                        sess.run(fetches, {images: batch})
                    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                    rates[b].append(runs * b / wall)
                    cpu_rates[b].append(runs * b / cpu if cpu > 0 else float("nan"))
    return rates, cpu_rates


def _summary(rates, batch_size):
    single, batched = statistics.median(rates[1]), statistics.median(rates[batch_size])
    return {
        "batch1_images_per_sec": round(single, 2),
        f"batch{batch_size}_images_per_sec": round(batched, 2),
        "speedup_per_image": round(batched / single, 2),
        "batch1_runs": [round(r, 2) for r in rates[1]],
        "batched_runs": [round(r, 2) for r in rates[batch_size]],
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="configs/aster_paper.config")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--images", type=int, default=128, help="images per batched pass")
    parser.add_argument("--batch1_images", type=int, default=32,
                        help="images per batch-1 pass")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)

    from aster.utils import config_util

    config = config_util.load_pipeline_config(args.config)
    b = args.batch_size
    with tempfile.TemporaryDirectory() as folder:
        evaluator_rates = _measure_evaluator(config, args, folder)
    model_rates, cpu_rates = _measure_model(config, args)
    result = {
        "config": args.config,
        "cpu": common.cpu_model(),
        "cores": os.cpu_count(),
        "evaluator": _summary(evaluator_rates, b),
        "model": _summary(model_rates, b),
        "model_speedup_per_image_cpu_time": round(
            statistics.median(cpu_rates[b]) / statistics.median(cpu_rates[1]), 2),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "command": " ".join([os.path.basename(sys.executable), *sys.argv]),
    }
    for name in ("evaluator", "model"):
        s = result[name]
        print(f"{name}: batch 1 {s['batch1_images_per_sec']:.2f} images/s, batch {b} "
              f"{s[f'batch{b}_images_per_sec']:.2f} images/s: {s['speedup_per_image']:.1f}x "
              f"per image (medians of {args.repeats} alternating passes)")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
