"""Speed of the synthetic-word renderer: CPU time per image and images/s of aster-synth-words.

For each style preset (train: the default training mix; ood: val_ood's), renders --images images
in this process over the machine's fonts and reports the median CPU milliseconds per image over
--runs runs (time.process_time, so other load on the machine does not count), and the images/s
that many worker processes would reach on idle cores. With --end_to_end it also times
`aster-synth-words` itself (2 workers by default, TFRecord writing included) on 10 x --images
training images, as its manifest reports it. With --without_legibility_check each preset also
gets a row with the renderer's legibility check off (RenderStyle.min_legibility 0), its runs
alternating with the preset's on the same image indices: what the check and its redraws cost.
`make bench BENCH_FLAGS=--record` records the table.

    .venv/bin/python benchmarks/synth_speed.py [--images 2000] [--runs 3] [--end_to_end]
"""

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import common

from aster.synth import fonts, generator


def cpu_ms_per_image(plan, count, offset):
    start = time.process_time()
    for index in range(offset, offset + count):
        generator.render_one(plan, index)
    return (time.process_time() - start) / count * 1000.0


def end_to_end(count, workers):
    """images/s of `aster-synth-words` rendering and writing `count` training images, as its
    manifest reports it (process start-up, the TensorFlow import and the font scan excluded)."""
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([sys.executable, "-m", "aster.synth.generator", "--output_dir", out,
                        "--split", "train", "--num_train", str(count), "--num_shards", "2",
                        "--num_workers", str(workers)], check=True, capture_output=True)
        with open(os.path.join(out, "train_manifest.json")) as f:
            return json.load(f)["images_per_second"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--images", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--end_to_end", action="store_true")
    parser.add_argument("--without_legibility_check", action="store_true",
                        help="also each preset with the legibility check off, alternating")
    args = parser.parse_args(argv)
    found = fonts.find_fonts()
    plans, _ = generator.make_plans(found)
    description, load = common.machine()
    rows = ["| style | CPU ms / image (median; runs) | images/s on idle cores |", "|---|---:|---:|"]
    for name, plan in (("train", plans["train"]), ("ood", plans["val_ood_curved"]),
                       ("ood straight", plans["val_ood_straight"])):
        variants = {name: plan}
        if args.without_legibility_check:
            variants[f"{name}, no legibility check"] = dataclasses.replace(
                plan, style=plan.style.replace(min_legibility=0.0))
        per_run = {label: [] for label in variants}
        for r in range(args.runs):
            for label, variant in variants.items():
                per_run[label].append(cpu_ms_per_image(variant, args.images, r * args.images))
        for label, times in per_run.items():
            median = statistics.median(times)
            runs = ", ".join(f"{v:.2f}" for v in times)
            rows.append(f"| {label} | {median:.2f} ({runs}) | "
                        f"{args.workers * 1000 / median:.0f} |")
    flags = (" --end_to_end" if args.end_to_end else "") + (
        " --without_legibility_check" if args.without_legibility_check else "")
    lines = [f"Machine: {description}; load average {load:.1f} at start; "
             f"{len(found)} fonts in {len(fonts.group_by_family(found))} families.",
             f"Command: `python benchmarks/synth_speed.py --images {args.images} --runs "
             f"{args.runs}{flags}`", "", *rows, ""]
    if args.end_to_end:
        rates = [end_to_end(args.images * 10, args.workers) for _ in range(args.runs)]
        each = ", ".join(f"{r:.0f}" for r in rates)
        lines.append(f"aster-synth-words, {args.images * 10} training images, {args.workers} "
                     f"workers, rendering and TFRecord writing (start-up excluded): median "
                     f"{statistics.median(rates):.0f} images/s ({each})")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
