"""Inference speed: batch-1 latency and batch-64 throughput, greedy and beam search, from a
checkpoint (aster.inference.CheckpointPredictor), from the exported SavedModel, and from the
TFLite and ONNX exports run with ai-edge-litert and onnxruntime (aster.exporters.lite_runtime,
aster.exporters.onnx_runtime).

    .venv/bin/python benchmarks/inference.py [--config aster_paper] [--beam_widths 1 5]
        [--batch_size 64] [--repeats 5] [--skip_saved_model] [--skip tflite onnx]

Inputs are encoded PNG bytes of random 64x256 images (decode and resize included, as in serving).
The TFLite and ONNX models take uint8 pixels at the model's size, so their rows time a Pillow
decode and bilinear resize of the same PNG bytes too (PixelPredictor); their runtimes use
os.cpu_count() threads. --skip leaves those rows out (they need the tflite / onnx extras).
Two checkpoints of the config's model, both with random weights:

* worst case: random decoders rarely emit EOS, so every sequence runs all max_num_steps steps;
* early EOS: the same weights with each decoder's EOS output bias raised by +30, so every
  sequence ends at its first step. Its much lower latency shows that decoding stops as soon as
  every sequence has ended (greedy and beam search while loops check it each step).

--bfloat16 runs the sessions with oneDNN bfloat16 auto mixed precision (session_options).
Batch 1: median latency of --repeats single-image calls after one warm-up call. Batch N: median
images/s of --repeats calls. The decoders' beam_width is overridden for both predictors (1 =
greedy). Prints a table (`make bench BENCH_FLAGS=--record` puts it in benchmarks/RESULTS.md).

Like aster-demo, this process only serves models whose weights do not change, so it sets
TF_ONEDNN_ASSUME_FROZEN_WEIGHTS=1 unless set (oneDNN's convolutions keep their reordered filters;
without it they reorder them per call, 4x the batch-1 latency; see aster/demo.py).
"""

import argparse
import io
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("TF_ONEDNN_ASSUME_FROZEN_WEIGHTS", "1")  # before TensorFlow's import

import common  # noqa: E402 (benchmarks/common.py; scripts run as python benchmarks/<name>.py)

EOS_LABEL = 1
EOS_BIAS = 30.0


def random_checkpoints(config, folder):
    """Saves random weights as `worst` and the same with EOS-favouring decoders as `early_eos`."""
    from aster import inference
    from aster.tf_setup import tf

    height, width = inference.model_input_size(config.model)
    paths = {}
    with tf.Graph().as_default():
        inference.build_inference_graph(config.model, tf.zeros([1, height, width, 3]))
        biases = [v for v in tf.global_variables() if v.op.name.endswith("output/bias")]
        eos = [tf.compat.v1.assign(v, v + EOS_BIAS * tf.one_hot(EOS_LABEL, v.shape[0]))
               for v in biases]
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            paths["worst case"] = saver.save(sess, os.path.join(folder, "worst", "model.ckpt"),
                                             global_step=1, write_meta_graph=False)
            sess.run(eos)
            paths["early EOS"] = saver.save(sess, os.path.join(folder, "eos", "model.ckpt"),
                                            global_step=1, write_meta_graph=False)
    return paths


def measure(predictor, images, batch_size, repeats):
    """(batch-1 median latency in ms, batch-N median images/s)."""
    predictor.predict(images[:1])
    latencies = []
    for i in range(repeats):
        start = time.perf_counter()
        predictor.predict(images[i % len(images):i % len(images) + 1])
        latencies.append(time.perf_counter() - start)
    batch = images[:batch_size]
    predictor.predict(batch)
    rates = []
    for _ in range(max(1, repeats // 2)):
        start = time.perf_counter()
        predictor.predict(batch)
        rates.append(len(batch) / (time.perf_counter() - start))
    return 1e3 * statistics.median(latencies), statistics.median(rates)


# The TensorFlow-free exports timed beside the checkpoint and the SavedModel: row label, format.
RUNTIMES = (("TFLite (LiteRT)", "tflite"), ("ONNX Runtime", "onnx"))


class PixelPredictor:
    """A TFLite or ONNX export (aster.exporters.lite_runtime / aster.exporters.onnx_runtime
    Recognizer) on PNG bytes: each call decodes them with Pillow and resizes them (bilinear) to the
    model's size before running the model."""

    def __init__(self, model_dir, export_format):
        from aster import lite_runtime, onnx_runtime

        runtime = lite_runtime if export_format == "tflite" else onnx_runtime
        self.recognizer = runtime.Recognizer(model_dir, num_threads=os.cpu_count())

    def predict(self, pngs):
        import numpy as np
        from PIL import Image

        height, width = self.recognizer.input_size
        pixels = [np.asarray(Image.open(io.BytesIO(png)).convert("RGB")
                             .resize((width, height), Image.BILINEAR)) for png in pngs]
        return self.recognizer.predict(np.stack(pixels))


def _export_measure(beam, checkpoint, beam_width, export_format, model_dir, images, args):
    """(latency ms, images/s) of the `export_format` export of `beam` (greedy for width 1)."""
    from aster import lite_export, onnx_export

    export = lite_export.export_tflite if export_format == "tflite" else onnx_export.export_onnx
    export(beam, checkpoint, model_dir, decoding="greedy" if beam_width == 1 else "beam")
    return measure(PixelPredictor(model_dir, export_format), images, args.batch_size,
                   args.repeats)


def _beam_config(config, beam_width):
    from aster.utils import config_util

    model = config.model.multi_predictors_recognition_model
    assignments = [f"model.multi_predictors_recognition_model.predictor[{i}]."
                   f"attention_predictor.beam_width={beam_width}"
                   for i, p in enumerate(model.predictor)
                   if p.WhichOneof("predictor_oneof") == "attention_predictor"]
    return config_util.merge_overrides(config, assignments=assignments)


def run(config, args, folder):
    """Returns table rows (weights, decoder, source, latency ms, images/s)."""
    from aster import inference, saved_model_export
    from aster.core import session_options
    from aster.tf_setup import tf

    session_config = session_options.configure(tf.ConfigProto(), bfloat16=args.bfloat16)
    images = common.random_pngs(max(args.batch_size, args.repeats), 64, 256)
    checkpoints = random_checkpoints(config, folder)
    rows = []
    for weights, checkpoint in checkpoints.items():
        for beam_width in args.beam_widths:
            beam = _beam_config(config, beam_width)
            decoder = "greedy" if beam_width == 1 else f"beam {beam_width}"
            with inference.CheckpointPredictor(beam, checkpoint,
                                               session_config=session_config) as predictor:
                rows.append((weights, decoder, "checkpoint",
                             *measure(predictor, images, args.batch_size, args.repeats)))
            print(rows[-1], flush=True)
            if not args.skip_saved_model:
                export_dir = os.path.join(folder, f"saved_{len(rows)}")
                saved_model_export.export_saved_model(beam, checkpoint, export_dir)
                with inference.SavedModelPredictor(export_dir, session_config) as predictor:
                    rows.append((weights, decoder, "SavedModel",
                                 *measure(predictor, images, args.batch_size, args.repeats)))
                print(rows[-1], flush=True)
            for label, export_format in RUNTIMES:
                if export_format in args.skip:
                    continue
                model_dir = os.path.join(folder, f"{export_format}_{len(rows)}")
                rows.append((weights, decoder, label, *_export_measure(
                    beam, checkpoint, beam_width, export_format, model_dir, images, args)))
                print(rows[-1], flush=True)
    return rows


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="aster_paper", help="config name under configs/")
    parser.add_argument("--beam_widths", nargs="+", type=int, default=[1, 5])
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip_saved_model", action="store_true")
    parser.add_argument("--skip", nargs="+", choices=[f for _, f in RUNTIMES], default=[],
                        help="leave out the rows of these exports (they need the tflite or "
                             "onnx extra)")
    parser.add_argument("--bfloat16", action="store_true",
                        help="bfloat16 mixed precision sessions (aster.core.session_options)")
    args = parser.parse_args(argv)

    from aster.utils import config_util

    config = config_util.load_pipeline_config(
        os.path.join(common.ROOT, "configs", f"{args.config}.config"))
    description, load = common.machine()
    print(f"{description}; load average {load:.1f}", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        rows = run(config, args, folder)
    lines = ["| weights | decoding | from | batch-1 latency (ms) | "
             f"batch-{args.batch_size} images/s |", "|---|---|---|---:|---:|"]
    lines += [f"| {w} | {d} | {s} | {lat:.1f} | {rate:.1f} |" for w, d, s, lat, rate in rows]
    print("\n".join(lines))
    if len(args.skip) < len(RUNTIMES):
        print("\nTFLite and ONNX Runtime rows: the same PNG bytes decoded and resized with Pillow "
              "inside the timed call (the other rows decode and resize in the TensorFlow graph); "
              f"{os.cpu_count()} runtime threads.")


if __name__ == "__main__":
    main()
