"""Where one training step's time goes: op-type and name-scope totals of a traced step.

    .venv/bin/python benchmarks/step_profile.py [--configs demo_cpu] [--batch_size 0]
        [--warmup 3] [--set FIELD=VALUE ...] [--top 15]

For each config, the real trainer runs on one in-memory batch (train_throughput.time_training:
the config's optimizer, summaries and hooks, input pipeline excluded) for --warmup steps and
then traces one step with train_config.profile_at_step (a Chrome trace, timeline-<step>.json).
The trace's op times are summed by op type and by name scope (the first two scope levels, with
gradient ops under the scope they differentiate, marked "backward"). "op time" is the sum over
ops, which run on several threads at once, so it exceeds the step's wall time.

Each config's step runs at the config's precision, named on its first line (the demo config trains
in bfloat16 where the CPU has it natively); `--set train_config.mixed_precision=true` or `=false`
chooses it. TF_ENABLE_ONEDNN_OPTS=0 in the environment profiles TensorFlow's Eigen kernels instead
of oneDNN's (aster/__init__.py).
"""

import argparse
import collections
import glob
import json
import logging
import os
import sys
import tempfile

# Only the tables on the terminal: TensorFlow's C++ warnings (soft placement of the lookup tables,
# the tracer's "GPU trace was not collected") are held back; its deprecation notices too (main).
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import common  # noqa: E402 (after the logging setting above)
import peaks  # noqa: E402
import train_throughput  # noqa: E402

from aster.utils import cli_logging  # noqa: E402


def complete_events(trace):
    """The complete ("X") events, one per op run, of a Chrome trace (a parsed JSON dict)."""
    return [e for e in trace["traceEvents"] if e.get("ph") == "X"]


def scope_of(node_name):
    """(scope, pass): the first two levels of the op's name scope, forward or backward."""
    parts = node_name.split("/")
    backward = parts[0] == "gradients"
    if backward:
        parts = parts[1:]
    scope = "/".join(parts[:2]) if len(parts) > 2 else parts[0]
    return scope, "backward" if backward else "forward"


def summarize(events):
    """Totals of a traced step: {wall_ms, op_ms, by_op: [(op, ms, count)], by_scope: [((scope,
    pass), ms)]}, largest first."""
    by_op, counts, by_scope = collections.Counter(), collections.Counter(), collections.Counter()
    for e in events:
        args = e.get("args", {})
        op = args.get("op", e["name"])
        by_op[op] += e["dur"]
        counts[op] += 1
        by_scope[scope_of(args.get("name", e["name"]))] += e["dur"]
    wall = (max(e["ts"] + e["dur"] for e in events) - min(e["ts"] for e in events)) if events else 0
    return {"wall_ms": wall / 1e3, "op_ms": sum(by_op.values()) / 1e3,
            "by_op": [(op, us / 1e3, counts[op]) for op, us in by_op.most_common()],
            "by_scope": [(key, us / 1e3) for key, us in by_scope.most_common()]}


def table(summary, top):
    """Markdown lines: the top op types, then the top scopes, each with its share of op time."""
    total = summary["op_ms"] or 1.0
    precision = f", {summary['precision']}" if summary.get("precision") else ""
    lines = [f"step wall time {summary['wall_ms']:.1f} ms, op time {summary['op_ms']:.1f} ms"
             f"{precision}", "",
             "| op type | op time (ms) | share | ops |", "|---|---:|---:|---:|"]
    for op, ms, count in summary["by_op"][:top]:
        lines.append(f"| {op} | {ms:.1f} | {ms / total:.1%} | {count} |")
    lines += ["", "| scope | pass | op time (ms) | share |", "|---|---|---:|---:|"]
    for (scope, direction), ms in summary["by_scope"][:top]:
        lines.append(f"| {scope} | {direction} | {ms:.1f} | {ms / total:.1%} |")
    return lines


def profile(config_name, batch_size, warmup, overrides):
    """Traces step warmup + 1 of the config; returns summarize()'s dict with the precision it
    trained at (peaks.precision: "float32", or "bfloat16" where the config asks for it and the
    CPU has it; "(GPU)" after the precision when the clone runs on a GPU)."""
    from aster.utils import config_util

    config = config_util.load_pipeline_config(os.path.join(common.ROOT, "configs",
                                                           f"{config_name}.config"))
    config = train_throughput.prepare_config(config, batch_size, overrides)
    config.train_config.profile_at_step = warmup + 1
    with tempfile.TemporaryDirectory() as train_dir:
        train_throughput.time_training(config, in_memory=True, warmup=warmup, steps=2,
                                       train_dir=train_dir)
        traces = glob.glob(os.path.join(train_dir, "timeline-*.json"))
        if not traces:
            raise SystemExit(f"{config_name}: the trainer wrote no timeline-*.json")
        with open(traces[0], encoding="utf-8") as f:
            summary = summarize(complete_events(json.load(f)))
    summary["precision"] = peaks.precision(config)
    return summary


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--configs", nargs="+", default=["demo_cpu"],
                        help="config names under configs/ (without .config)")
    parser.add_argument("--batch_size", type=int, default=0, help="0: the config's")
    parser.add_argument("--warmup", type=int, default=3, help="steps before the traced one")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        help="config assignment (config_util syntax)")
    parser.add_argument("--top", type=int, default=15, help="rows per table")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    cli_logging.configure(level=logging.WARNING)
    description, load = common.machine()
    print(f"{description}; load average {load:.1f}", flush=True)
    for name in args.configs:
        summary = profile(name, args.batch_size, args.warmup, args.set)
        print(f"\n{name}: " + "\n".join(table(summary, args.top)), flush=True)


if __name__ == "__main__":
    main()
