"""Images/s of the training input pipeline of configs/aster_paper.config, TFRecord against LMDB.

Generates small PNG word images (PIL, default font) once and writes the same records to a
temporary directory twice: as sharded TFRecords and as LMDB databases in the STR layout
(`num-samples`, `image-%09d`, `label-%09d`), one per train_input_reader. The config's two readers
point at one format, then the other (everything else as in the config: num_readers, shuffle,
decode, random-method resize to 64x256, string filtering, 32 + 32 per batch), and
BatchQueue.dequeue() is timed in windows that alternate between the formats, so that a change in
the load of a shared machine hits both; each window has a session of its own (a session left open
would fill its prefetch buffers during the other format's window). Prints a table and the
medians, LMDB's as a percentage of TFRecord's (`make bench BENCH_FLAGS=--record` puts them in
benchmarks/RESULTS.md).

    .venv/bin/python benchmarks/input_pipeline.py [--images 20000] [--runs 5] [--steps 60]
"""

import argparse
import io
import os
import random
import statistics
import tempfile
import time

import common
import numpy as np
from google.protobuf import text_format
from PIL import Image, ImageDraw, ImageFont

from aster.builders import input_reader_builder
from aster.protos import pipeline_pb2
from aster.tf_setup import tf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = os.path.join(ROOT, "configs", "aster_paper.config")
DATASETS = ("synth90k_train", "synthtext_crop_train")
FORMATS = ("TFRecord", "LMDB")
WORDS = (
    "street hotel coffee PARKING exit 2024 Open sale Bank of the city NEWS road bar Cafe "
    "taxi STOP pizza 24h market Royal"
).split()


def _word_png(rng, word):
    font = ImageFont.load_default()
    width = max(24, 7 * len(word) + rng.randint(4, 16))
    height = rng.randint(24, 40)
    background = tuple(rng.randint(120, 255) for _ in range(3))
    image = Image.new("RGB", (width, height), background)
    ImageDraw.Draw(image).text((rng.randint(1, 4), height // 3), word, fill=(0, 0, 0), font=font)
    noise = np.asarray(image, np.int16) + np.random.default_rng(rng.randint(0, 1 << 30)).integers(
        -12, 12, (height, width, 3)
    )
    buffer = io.BytesIO()
    Image.fromarray(np.clip(noise, 0, 255).astype(np.uint8)).save(buffer, format="PNG")
    return buffer.getvalue()


def _bytes(value):
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))


def _write_tfrecords(directory, dataset, samples, num_shards):
    writers = [
        tf.io.TFRecordWriter(os.path.join(directory, f"{dataset}_{s:05d}.tfrecord"))
        for s in range(num_shards)
    ]
    for i, (image, word) in enumerate(samples):
        feature = {
            "image/encoded": _bytes(image),
            "image/format": _bytes(b"png"),
            "image/filename": _bytes(f"{dataset}/{i}.png".encode()),
            "image/transcript": _bytes(word.encode()),
        }
        example = tf.train.Example(features=tf.train.Features(feature=feature))
        writers[i % num_shards].write(example.SerializeToString())
    for w in writers:
        w.close()
    return os.path.join(directory, f"{dataset}_*.tfrecord")


def _write_lmdb(path, samples):
    import lmdb

    size = sum(len(image) + 64 for image, _ in samples) * 2 + (1 << 20)
    with lmdb.open(path, map_size=size) as env, env.begin(write=True) as txn:
        txn.put(b"num-samples", str(len(samples)).encode())
        for i, (image, word) in enumerate(samples, start=1):
            txn.put(b"image-%09d" % i, image)
            txn.put(b"label-%09d" % i, word.encode())
    return path


def write_data(directory, num_images, num_shards=4, seed=0):
    """Writes num_images / 2 word images per dataset (DATASETS) in both formats.

    Returns:
      {format: [input path per dataset]}: TFRecord shard patterns and LMDB directories.
    """
    rng = random.Random(seed)
    paths = {f: [] for f in FORMATS}
    for dataset in DATASETS:
        words = [rng.choice(WORDS) for _ in range(num_images // 2)]
        samples = [(_word_png(rng, word), word) for word in words]
        paths["TFRecord"].append(_write_tfrecords(directory, dataset, samples, num_shards))
        paths["LMDB"].append(_write_lmdb(os.path.join(directory, f"{dataset}_lmdb"), samples))
    return paths


def load_config(paths, data_format):
    """configs/aster_paper.config with its train_input_readers reading `paths` in data_format."""
    config = pipeline_pb2.TrainEvalPipelineConfig()
    with open(CONFIG, encoding="utf-8") as f:
        text_format.Merge(f.read(), config)
    for reader, path in zip(config.train_input_reader, paths, strict=True):
        if data_format == "LMDB":
            reader.lmdb_input_reader.path = path
        else:
            reader.tf_record_input_reader.input_path = path
    return config


class _Pipeline:
    """One format's BatchQueue, in a graph of its own."""

    def __init__(self, config):
        self.graph = tf.Graph()
        with self.graph.as_default():
            queue = input_reader_builder.build_batch_queue(
                config.train_input_reader, config.train_config, num_clones=1
            )
            self.batch = queue.dequeue()
            self.batch_size = sum(queue.batch_sizes)
            self.init = tf.local_variables_initializer()
        self.fetch = [self.batch["image"].op, self.batch["groundtruth_text"].op]
        self.shape = None

    def run(self, warmup, steps):
        """In a new session: `warmup` batches, then `steps` timed ones.

        Returns:
          (images/s, CPU microseconds of this process per image) of the timed batches.
        """
        with tf.Session(graph=self.graph) as session:
            session.run(self.init)
            self.shape = session.run(self.batch["image"]).shape
            for _ in range(warmup):
                session.run(self.fetch)
            start, cpu = time.perf_counter(), time.process_time()
            for _ in range(steps):
                session.run(self.fetch)
            seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        images = self.batch_size * steps
        return images / seconds, cpu * 1e6 / images


def time_pipelines(configs, warmup, steps, runs):
    """Times windows of `steps` batches, the formats taking turns, each after `warmup` batches.

    Args:
      configs: {format: pipeline config}.

    Returns:
      ({format: [(images/s, CPU us/image) per window]}, the batch's image shape).
    """
    pipelines = {name: _Pipeline(config) for name, config in configs.items()}
    results = {name: [] for name in configs}
    for _ in range(runs):
        for name, pipeline in pipelines.items():
            results[name].append(pipeline.run(warmup, steps))
    return results, next(iter(pipelines.values())).shape


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--images", type=int, default=20000, help="records in total, per format")
    parser.add_argument("--runs", type=int, default=5, help="timed windows per format (median)")
    parser.add_argument("--steps", type=int, default=60, help="batches per timed window")
    parser.add_argument("--warmup", type=int, default=20, help="batches before each window")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as directory:
        start = time.perf_counter()
        paths = write_data(directory, args.images)
        print(f"wrote {args.images} PNG word images as TFRecord and as LMDB in "
              f"{time.perf_counter() - start:.1f}s")
        configs = {f: load_config(paths[f], f) for f in FORMATS}
        _, load_before = common.machine()
        results, shape = time_pipelines(configs, args.warmup, args.steps, args.runs)
    description, load_after = common.machine()
    config = configs["TFRecord"]
    print(f"batch {shape} (readers {list(config.train_config.batch_size)}, num_readers "
          f"{[r.num_readers for r in config.train_input_reader]})")
    print("| run | TFRecord images/s | TFRecord CPU us/image | LMDB images/s | LMDB CPU us/image |")
    print("|---:|---:|---:|---:|---:|")
    for i, (tfrecord, lmdb) in enumerate(zip(results["TFRecord"], results["LMDB"], strict=True)):
        print(f"| {i + 1} | {tfrecord[0]:,.0f} | {tfrecord[1]:,.0f} | {lmdb[0]:,.0f} | "
              f"{lmdb[1]:,.0f} |")
    medians = {name: statistics.median(r for r, _ in results[name]) for name in FORMATS}
    cpu = {name: statistics.median(us for _, us in results[name]) for name in FORMATS}
    print("median " + ", ".join(
        f"{name} {medians[name]:,.0f} images/s ({cpu[name]:,.0f} CPU us/image)" for name in FORMATS)
        + f": LMDB at {100 * medians['LMDB'] / medians['TFRecord']:.0f}% of TFRecord (target "
        f">= 80%); machine: {description}; load average {load_before:.1f} -> {load_after:.1f}")
    return medians


if __name__ == "__main__":
    main()
