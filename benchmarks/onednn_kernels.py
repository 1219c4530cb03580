"""Which oneDNN kernels one training step runs, and for how long (ONEDNN_VERBOSE).

    .venv/bin/python benchmarks/onednn_kernels.py [--configs aster_paper] [--batch_size 64]
        [--warmup 3] [--steps 2] [--set train_config.mixed_precision=true] [--top 20]

For each config a worker process runs the real trainer on one in-memory batch
(train_throughput.time_training) with ONEDNN_VERBOSE=1, which makes oneDNN print one line per
primitive it executes: its kind (convolution, matmul, inner_product, reorder, ...), the
implementation it chose (e.g. `brg_conv_fwd:avx10_1_512_amx`: AMX tiles; `x64:gemm:jit`: the
AVX-512 gemm; `jit:uni`: a reorder), the pass, the data types and the time. The worker marks the
timed steps (after --warmup) on the same output, so the tables sum only their lines, per step:

* by kind and pass, with the implementations used and whether they ran on AMX;
* by instruction set (amx, avx512, other), to see what share of the kernel time is in AMX;
* the primitives that took the most time (kind, implementation, pass, source type, shape).

"kernel time" is the sum of the primitives' own times; the step's wall time is given beside it,
but printing a line per primitive slows the step, so take step times from train_throughput.py.
The rest of a step is TensorFlow's own (Eigen) ops, casts, the optimizer and scheduling: see
step_profile.py. Shows nothing when TensorFlow runs without oneDNN (TF_ENABLE_ONEDNN_OPTS=0).
"""

import argparse
import collections
import json
import os
import subprocess
import sys
import time

MARK = "ASTER_ONEDNN_STEP"


def parse_line(line):
    """One ONEDNN_VERBOSE exec line -> dict(kind, impl, prop, dtype, shape, ms), else None.

    The line is `onednn_verbose,[timestamp,]v1,primitive,exec,cpu,KIND,IMPL,PROP,MEMORY
    DESCRIPTORS,ATTRIBUTES,AUXILIARY,SHAPE,TIME` (the oneDNN 3.x format); the source data type is
    the first memory descriptor's."""
    if not line.startswith("onednn_verbose") or ",exec," not in line:
        return None
    fields = line.rstrip("\n").split(",")
    start = fields.index("exec")
    if len(fields) < start + 9 or fields[start - 1] != "primitive":
        return None
    try:
        ms = float(fields[-1])
    except ValueError:
        return None
    descriptors = fields[start + 5].split()
    dtype = descriptors[0].split(":")[1] if descriptors and descriptors[0].count(":") else ""
    return {"kind": fields[start + 2], "impl": fields[start + 3], "prop": fields[start + 4],
            "dtype": dtype, "shape": fields[-2], "ms": ms}


def isa(impl):
    """The instruction-set family of an implementation name: amx, avx512 or other."""
    if "amx" in impl:
        return "amx"
    if "avx512" in impl or "avx10" in impl:
        return "avx512"
    return "other"


def step_lines(lines):
    """The exec records printed between the worker's step marks, and the number of steps and
    their total wall seconds: (records, steps, wall_s)."""
    records, inside, steps, wall = [], False, 0, 0.0
    for line in lines:
        if line.startswith(MARK):
            _, event, seconds = line.split()
            inside = event == "begin"
            if event == "end":
                steps += 1
                wall += float(seconds)
        elif inside:
            record = parse_line(line)
            if record is not None:
                records.append(record)
    return records, steps, wall


def summarize(records, steps, wall_s):
    """Per-step totals: {wall_ms, kernel_ms, by_kind, by_isa, top}, largest first."""
    per_step = 1.0 / max(steps, 1)
    by_kind, calls, by_isa, top, top_calls = (collections.Counter() for _ in range(5))
    impls = collections.defaultdict(set)
    for r in records:
        key = (r["kind"], r["prop"])
        by_kind[key] += r["ms"]
        calls[key] += 1
        impls[key].add(r["impl"])
        by_isa[isa(r["impl"])] += r["ms"]
        primitive = (r["kind"], r["impl"], r["prop"], r["dtype"], r["shape"])
        top[primitive] += r["ms"]
        top_calls[primitive] += 1
    return {
        "wall_ms": 1e3 * wall_s * per_step,
        "kernel_ms": sum(by_isa.values()) * per_step,
        "by_kind": [(key, ms * per_step, calls[key] * per_step, sorted(impls[key]))
                    for key, ms in by_kind.most_common()],
        "by_isa": [(name, ms * per_step) for name, ms in by_isa.most_common()],
        "top": [(key, ms * per_step, top_calls[key] * per_step) for key, ms in top.most_common()],
    }


def table(summary, top):
    """Markdown lines of summarize()'s dict."""
    total = summary["kernel_ms"] or 1.0
    lines = [f"oneDNN kernel time {summary['kernel_ms']:.1f} ms per step (step wall time "
             f"{summary['wall_ms']:.1f} ms with the verbose printing)", "",
             "| kind | pass | ms/step | share | calls/step | implementations |",
             "|---|---|---:|---:|---:|---|"]
    for (kind, prop), ms, calls, impls in summary["by_kind"]:
        lines.append(f"| {kind} | {prop} | {ms:.1f} | {ms / total:.1%} | {calls:g} | "
                     f"{' '.join(impls)} |")
    lines += ["", "| instruction set | ms/step | share |", "|---|---:|---:|"]
    for name, ms in summary["by_isa"]:
        lines.append(f"| {name} | {ms:.1f} | {ms / total:.1%} |")
    lines += ["", "| kind | implementation | pass | type | shape | ms/step | calls/step |",
              "|---|---|---|---|---|---:|---:|"]
    for (kind, impl, prop, dtype, shape), ms, calls in summary["top"][:top]:
        lines.append(f"| {kind} | {impl} | {prop} | {dtype} | {shape} | {ms:.2f} | {calls:g} |")
    return lines


def _step_marks(warmup):
    from aster.tf_setup import tf

    class StepMarks(tf.train.SessionRunHook):
        """Prints MARK begin/end around every session.run after `warmup` runs."""

        def __init__(self):
            self._runs = 0

        def before_run(self, run_context):
            if self._runs >= warmup:
                print(f"{MARK} begin 0", flush=True)
            self._start = time.perf_counter()

        def after_run(self, run_context, run_values):
            self._runs += 1
            if self._runs > warmup:
                print(f"{MARK} end {time.perf_counter() - self._start:.6f}", flush=True)

    return StepMarks()


def _worker(args):
    """Runs the config's training steps with the marks (ONEDNN_VERBOSE set by the parent)."""
    import common
    import train_throughput

    from aster.utils import config_util

    config = config_util.load_pipeline_config(os.path.join(common.ROOT, "configs",
                                                           f"{args.configs[0]}.config"))
    config = train_throughput.prepare_config(config, args.batch_size, args.set)
    train_throughput.time_training(config, in_memory=True, warmup=args.warmup, steps=args.steps,
                                   hooks=[_step_marks(args.warmup)])


def run(config_name, args):
    """One worker process for `config_name`; returns summarize()'s dict of its timed steps."""
    command = [sys.executable, os.path.abspath(__file__), "--worker", "--configs", config_name,
               "--batch_size", str(args.batch_size), "--warmup", str(args.warmup),
               "--steps", str(args.steps)] + [f"--set={s}" for s in args.set]
    env = dict(os.environ, ONEDNN_VERBOSE="1", TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"{config_name}: the worker failed (exit {result.returncode}):\n"
                         f"{result.stderr[-3000:]}")
    records, steps, wall = step_lines(result.stdout.splitlines())
    if not steps:
        raise SystemExit(f"{config_name}: no timed step was marked in the worker's output")
    return summarize(records, steps, wall)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--configs", nargs="+", default=["aster_paper"],
                        help="config names under configs/ (without .config)")
    parser.add_argument("--batch_size", type=int, default=0, help="0: the config's")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    parser.add_argument("--steps", type=int, default=2, help="steps summed (then per step)")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        help="config assignment (config_util syntax)")
    parser.add_argument("--top", type=int, default=20, help="rows of the primitives table")
    parser.add_argument("--json", action="store_true", help="print the summaries as JSON")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.worker:
        _worker(args)
        return
    import common

    description, load = common.machine()
    print(f"{description}; load average {load:.1f}", flush=True)
    for name in args.configs:
        summary = run(name, args)
        if args.json:
            print(json.dumps({"config": name, **summary}), flush=True)
        else:
            print(f"\n{name} ({' '.join(args.set) or 'as configured'}): "
                  + "\n".join(table(summary, args.top)), flush=True)


if __name__ == "__main__":
    main()
