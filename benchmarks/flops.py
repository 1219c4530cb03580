"""Parameters and forward FLOPs per image of each config, this machine's matmul peaks (float32,
and bfloat16 where the CPU has it natively) and each config's achieved training FLOP/s as a
fraction of the peak of the precision it trained at (benchmarks/peaks.py).

The training step is the real trainer's (benchmarks/train_throughput.py timing) on an in-memory
batch of --batch_size images (input pipeline excluded): the median of --steps steps after --warmup
steps. Each config is timed in float32 and, where the CPU computes bfloat16 natively, with
train_config.mixed_precision (a row per precision).

    .venv/bin/python benchmarks/flops.py [--configs aster_paper tiny] [--precisions float32]
"""

import argparse

import common
import peaks as peaks_lib
import train_throughput

from aster.utils import config_util


def train_step_rate(config, warmup, steps):
    """Median images/s of the trainer's step on in-memory batches (train_throughput's timing:
    the config's optimizer, summaries and hooks, input pipeline excluded)."""
    return train_throughput.time_training(config, num_clones=1, in_memory=True, warmup=warmup,
                                          steps=steps)["images_per_sec"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--configs", nargs="+", default=["aster_paper", "tiny"],
                        help="config names under configs/ (without .config)")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--precisions", nargs="+", choices=("float32", "bfloat16"),
                        default=["float32", "bfloat16"],
                        help="bfloat16 is timed only where the CPU has it natively")
    args = parser.parse_args(argv)

    peaks = peaks_lib.measure_peaks()
    description, load = common.machine()
    print(f"{peaks_lib.describe(peaks)}; {description}, load {load:.1f}")
    precisions = [p for p in args.precisions if peaks[p] is not None]
    table = [f"| config | parameters | forward GFLOP/image | precision | train images/s (batch "
             f"{args.batch_size}, input excluded) | achieved GFLOP/s | of its peak |",
             "|---|---:|---:|---|---:|---:|---:|"]
    for name in args.configs:
        config = config_util.load_pipeline_config(f"{common.ROOT}/configs/{name}.config")
        stats = peaks_lib.config_stats(config)
        for precision in precisions:
            run_config = train_throughput.prepare_config(
                config, batch_size=args.batch_size,
                overrides=[common.bfloat16_assignment(precision == "bfloat16")])
            rate = train_step_rate(run_config, args.warmup, args.steps)
            ran_at = peaks_lib.precision(run_config)
            achieved = peaks_lib.achieved_gflops(rate, stats["forward_flops"])
            fraction = peaks_lib.fraction_of_peak(rate, stats["forward_flops"], peaks, ran_at)
            table.append(f"| {name} | {stats['parameters']:,} | "
                         f"{stats['forward_flops'] / 1e9:.3f} | {ran_at} | {rate:.1f} | "
                         f"{achieved:.1f} | {'-' if fraction is None else f'{fraction:.1%}'} |")
    print("\n".join(table))


if __name__ == "__main__":
    main()
