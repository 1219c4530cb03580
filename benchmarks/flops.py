"""Parameters and forward FLOPs per image of each config, this machine's float32 matmul peak, and
each config's achieved training FLOP/s as a fraction of that peak.

Training FLOPs per image are taken as 3x the forward FLOPs (forward + two backward passes), the
usual estimate. The training step is the real trainer's (benchmarks/train_throughput.py timing) on
an in-memory batch of --batch_size images (input pipeline excluded): the median of --steps steps
after --warmup steps.

    .venv/bin/python benchmarks/flops.py [--configs aster_paper tiny]
"""

import argparse
import functools
import statistics
import time

import common
import train_throughput

from aster import inference
from aster.builders import model_builder
from aster.tf_setup import tf
from aster.utils import config_util, model_stats

TRAIN_FLOPS_PER_FORWARD = 3.0


def matmul_peak(size=2048, runs=5, iterations=10):
    """Median float32 GFLOP/s of a size x size matmul chain in TensorFlow on this machine."""
    with tf.Graph().as_default():
        a = tf.Variable(tf.random.normal([size, size], stddev=0.01))
        b = tf.Variable(tf.random.normal([size, size], stddev=0.01))
        product = a
        for _ in range(iterations):
            product = tf.matmul(product, b)
        result = tf.reduce_sum(product)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(result)
            rates = []
            for _ in range(runs):
                start = time.perf_counter()
                sess.run(result)
                rates.append(2.0 * size**3 * iterations / (time.perf_counter() - start) / 1e9)
    return statistics.median(rates)


def train_step_rate(config, batch_size, warmup, steps):
    """Median images/s of the trainer's step on in-memory batches (train_throughput's timing:
    the config's optimizer, summaries and hooks, input pipeline excluded)."""
    config = train_throughput.prepare_config(config, batch_size=batch_size)
    return train_throughput.time_training(config, num_clones=1, in_memory=True, warmup=warmup,
                                          steps=steps)["images_per_sec"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--configs", nargs="+", default=["aster_paper", "tiny"],
                        help="config names under configs/ (without .config)")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args(argv)

    peak = matmul_peak()
    description, load = common.machine()
    print(f"float32 matmul peak (TF, 2048x2048): {peak:,.0f} GFLOP/s; {description}, "
          f"load {load:.1f}")
    rows = []
    for name in args.configs:
        config = config_util.load_pipeline_config(f"{common.ROOT}/configs/{name}.config")
        height, width = inference.model_input_size(config.model)
        stats = model_stats.model_stats(functools.partial(model_builder.build, config.model),
                                        height, width)
        rate = train_step_rate(config, args.batch_size, args.warmup, args.steps)
        achieved = rate * TRAIN_FLOPS_PER_FORWARD * stats["forward_flops"] / 1e9
        rows.append((name, stats, rate, achieved, achieved / peak))
    header = ("| config | parameters | forward GFLOP/image | train images/s (batch "
              f"{args.batch_size}, input excluded) | achieved GFLOP/s | of peak |")
    table = [header, "|---|---:|---:|---:|---:|---:|"]
    for name, stats, rate, achieved, fraction in rows:
        table.append(f"| {name} | {stats['parameters']:,} | {stats['forward_flops'] / 1e9:.3f} | "
                     f"{rate:.1f} | {achieved:.1f} | {fraction:.1%} |")
    print("\n".join(table))


if __name__ == "__main__":
    main()
