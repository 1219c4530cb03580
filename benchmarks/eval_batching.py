"""Eval throughput of the paper model at batch 1 against batched evaluation, on this CPU.

    .venv/bin/python benchmarks/eval_batching.py [--config configs/aster_paper.config]
        [--batch_size 32] [--images 64] [--repeats 3] [--threads 0]

Builds the model of the config in inference mode (random weights: speed does not depend on
them), feeds random 64x256 images and times preprocess -> predict -> postprocess, the work
aster-eval does per batch, fetching text and scores. Reports images/s at batch 1 and at
--batch_size (median of --repeats timed passes over --images images, after one warm-up run) and
their ratio. Prints one JSON line at the end.
"""

import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _time_batches(sess, images_ph, fetches, batch_size, num_images, repeats, size):
    rng = np.random.default_rng(0)
    batch = rng.uniform(0, 255, size=(batch_size, *size, 3)).astype(np.float32)
    sess.run(fetches, {images_ph: batch})  # warm-up
    runs = max(1, num_images // batch_size)
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(runs):
            sess.run(fetches, {images_ph: batch})
        rates.append(runs * batch_size / (time.perf_counter() - start))
    return statistics.median(rates), rates


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="configs/aster_paper.config")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--images", type=int, default=64, help="images per timed pass")
    parser.add_argument("--batch1_images", type=int, default=16,
                        help="images per timed pass at batch 1")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0, help="intra-op threads; 0 = TF default")
    args = parser.parse_args(argv)

    from aster import evaluator, export
    from aster.core.standard_fields import PredictionFields
    from aster.tf_setup import tf
    from aster.utils import config_util

    config = config_util.load_pipeline_config(args.config)
    height, width = export.model_input_size(config.model)
    session_config = tf.ConfigProto(intra_op_parallelism_threads=args.threads,
                                    inter_op_parallelism_threads=args.threads)
    with tf.Graph().as_default():
        images = tf.placeholder(tf.float32, [None, height, width, 3])
        model = evaluator.default_model_fn(config.model)
        predictions = model.postprocess(model.predict(model.preprocess(images)))
        fetches = [predictions[PredictionFields.text], predictions[PredictionFields.scores]]
        with tf.Session(config=session_config) as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer(),
                      tf.tables_initializer()])
            single, single_runs = _time_batches(sess, images, fetches, 1, args.batch1_images,
                                                args.repeats, (height, width))
            batched, batched_runs = _time_batches(sess, images, fetches, args.batch_size,
                                                  args.images, args.repeats, (height, width))
    result = {
        "config": args.config,
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "batch1_images_per_sec": round(single, 2),
        f"batch{args.batch_size}_images_per_sec": round(batched, 2),
        "speedup_per_image": round(batched / single, 2),
        "batch1_runs": [round(r, 2) for r in single_runs],
        "batched_runs": [round(r, 2) for r in batched_runs],
        "command": " ".join([os.path.basename(sys.executable), *sys.argv]),
    }
    print(f"batch 1: {single:.2f} images/s; batch {args.batch_size}: {batched:.2f} images/s; "
          f"{batched / single:.1f}x per image")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
