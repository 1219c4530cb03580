"""Images/s of the training input pipeline of configs/aster_paper.config on generated data.

Writes a few thousand small PNG word images (PIL, default font) into sharded TFRecords in a
temporary directory, points the config's two train_input_readers at them (everything else as in
the config: decode, random-method resize to 64x256, string filtering, 32 + 32 per batch) and times
BatchQueue.dequeue(). Prints a table and the median over runs (`make bench BENCH_FLAGS=--record`
puts them in benchmarks/RESULTS.md).

    .venv/bin/python benchmarks/input_pipeline.py [--images 4000] [--runs 5] [--steps 60]
"""

import argparse
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
    import io

    buffer = io.BytesIO()
    Image.fromarray(np.clip(noise, 0, 255).astype(np.uint8)).save(buffer, format="PNG")
    return buffer.getvalue()


def write_data(directory, num_images, num_shards=4, seed=0):
    """Writes num_images / 2 examples per dataset (synth90k_train_*, synthtext_crop_train_*)."""
    rng = random.Random(seed)
    per_dataset = num_images // 2
    for dataset in ("synth90k_train", "synthtext_crop_train"):
        writers = [
            tf.io.TFRecordWriter(os.path.join(directory, f"{dataset}_{s:05d}.tfrecord"))
            for s in range(num_shards)
        ]
        for i in range(per_dataset):
            word = rng.choice(WORDS)
            feature = {
                "image/encoded": _bytes(_word_png(rng, word)),
                "image/format": _bytes(b"png"),
                "image/filename": _bytes(f"{dataset}/{i}.png".encode()),
                "image/transcript": _bytes(word.encode()),
            }
            example = tf.train.Example(features=tf.train.Features(feature=feature))
            writers[i % num_shards].write(example.SerializeToString())
        for w in writers:
            w.close()
    names = ("synth90k_train", "synthtext_crop_train")
    return [os.path.join(directory, f"{name}_*.tfrecord") for name in names]


def _bytes(value):
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))


def load_config(patterns):
    config = pipeline_pb2.TrainEvalPipelineConfig()
    with open(CONFIG, encoding="utf-8") as f:
        text_format.Merge(f.read(), config)
    for reader, pattern in zip(config.train_input_reader, patterns, strict=True):
        reader.tf_record_input_reader.input_path = pattern
    return config


def time_pipeline(config, warmup, steps, runs):
    """Times consecutive windows of `steps` batches in one graph and session.

    Returns:
      (images/s of each window, CPU microseconds of this process per image in each window,
      the batch's image shape).
    """
    rates, cpu_per_image = [], []
    with tf.Graph().as_default():
        queue = input_reader_builder.build_batch_queue(
            config.train_input_reader, config.train_config, num_clones=1
        )
        batch = queue.dequeue()
        batch_size = sum(queue.batch_sizes)
        fetch = [batch["image"].op, batch["groundtruth_text"].op]
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            for _ in range(warmup):
                sess.run(fetch)
            for _ in range(runs):
                start, cpu = time.perf_counter(), time.process_time()
                for _ in range(steps):
                    sess.run(fetch)
                rates.append(batch_size * steps / (time.perf_counter() - start))
                cpu_per_image.append((time.process_time() - cpu) * 1e6 / (batch_size * steps))
            shape = sess.run(batch["image"]).shape
    return rates, cpu_per_image, shape


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--images", type=int, default=4000, help="images generated in total")
    parser.add_argument("--runs", type=int, default=5, help="timed windows (median reported)")
    parser.add_argument("--steps", type=int, default=60, help="batches per timed window")
    parser.add_argument("--warmup", type=int, default=20, help="batches before timing")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as directory:
        start = time.perf_counter()
        patterns = write_data(directory, args.images)
        print(f"wrote {args.images} PNG word images in {time.perf_counter() - start:.1f}s")
        config = load_config(patterns)
        _, load_before = common.machine()
        rates, cpu, shape = time_pipeline(config, args.warmup, args.steps, args.runs)
    description, load_after = common.machine()
    median, median_cpu = statistics.median(rates), statistics.median(cpu)
    # What the measured CPU cost per image allows when every core works for this pipeline.
    ceiling = os.cpu_count() * 1e6 / median_cpu
    print(f"batch {shape} (readers {list(config.train_config.batch_size)})")
    print("| run | images/s | CPU us/image |\n|---:|---:|---:|")
    for i, (rate, us) in enumerate(zip(rates, cpu, strict=True)):
        print(f"| {i + 1} | {rate:,.0f} | {us:,.0f} |")
    print(
        f"median {median:,.0f} images/s, {median_cpu:,.0f} CPU us/image (all "
        f"{os.cpu_count()} cores on it: {ceiling:,.0f} images/s); machine: {description}; "
        f"load average {load_before:.1f} -> {load_after:.1f}"
    )
    return median


if __name__ == "__main__":
    main()
