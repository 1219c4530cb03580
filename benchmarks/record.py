"""Rewrites the current-figures tables of benchmarks/RESULTS.md from a benchmark run.

    python benchmarks/record.py run LOG -- python benchmarks/flops.py ...  # run it, keep a log
    python benchmarks/record.py write LOG... [--results benchmarks/RESULTS.md]

`make bench BENCH_FLAGS=--record` runs every benchmark through `run` (its output prints as usual
and also goes to build/bench/<script>.log, after one JSON line with the command, date, machine and
load average) and then `write`s the logs into RESULTS.md. Each log replaces the block between
`<!-- bench:<script>:begin -->` and `<!-- bench:<script>:end -->` (the marker convention of the
table in docs/RELIABILITY.md, which tests/reliability/report.py rewrites): a header line (date,
machine, load, command) and the figures the script printed, i.e. its Markdown tables, the lines
FIGURE_LINES names, and for eval_batching.py the table made from its JSON line. Everything outside
the markers is left as it is (the history is in docs/history/, which this does not touch).
"""

import argparse
import datetime
import json
import os
import re
import shlex
import subprocess
import sys

import common

# Per script: the printed lines (besides Markdown table rows) that are figures; the regex's group
# is the part kept ("; machine: ..." is left out: the header names the machine).
FIGURE_LINES = {
    "flops": r"(matmul peak [^;]*)",
    "input_pipeline": r"(batch \(.*|median [^;]*)",
    "step_profile": r"(\S+: step wall time .*)",
    "synth_speed": r"(aster-synth-words, .*)",
    "train_throughput": r"(matmul peak .*|skipping .*)",
}


def run(log_path, argv):
    """Runs `argv`, copying its stdout to the terminal and to `log_path`; returns its exit code.

    The log's first line is JSON: {"command", "date", "machine", "load"} (load average at the
    start). stderr (TensorFlow's messages) goes to the terminal only.
    """
    description, load = common.machine()
    shown = ["python", *argv[1:]] if os.path.basename(argv[0]).startswith("python") else argv
    header = {"command": shlex.join(shown), "date": str(datetime.date.today()),
              "machine": description, "load": round(load, 2)}
    os.makedirs(os.path.dirname(os.path.abspath(log_path)), exist_ok=True)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    with open(log_path, "w", encoding="utf-8") as log, subprocess.Popen(
            argv, stdout=subprocess.PIPE, text=True, env=env) as child:
        log.write(json.dumps(header) + "\n")
        for line in child.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            log.write(line)
    return child.returncode


def read_log(path):
    """(header dict, output lines) of a log written by `run`."""
    with open(path, encoding="utf-8") as f:
        first, *lines = f.read().splitlines() or [""]
    try:
        header = json.loads(first)
    except json.JSONDecodeError:
        header = None
    if not isinstance(header, dict) or {"command", "date", "machine", "load"} - set(header):
        raise ValueError(f"{path}: the first line is not record.py's JSON header "
                         f"(command, date, machine, load): {first[:80]!r}")
    return header, lines


def eval_batching_table(result):
    """The table of eval_batching.py's JSON line: images/s at batch 1 and batched, the ratio."""
    size = max(int(m.group(1)) for k in result["model"]
               if (m := re.fullmatch(r"batch(\d+)_images_per_sec", k)))
    batched = f"batch{size}_images_per_sec"
    rows = [f"| {name} | {result[name]['batch1_images_per_sec']:.2f} | "
            f"{result[name][batched]:.2f} | {result[name]['speedup_per_image']:.1f}x |"
            for name in ("evaluator", "model")]
    cpu = result["model_speedup_per_image_cpu_time"]
    return [f"| measured | batch 1 images/s | batch {size} images/s | per-image speed-up |",
            "|---|---:|---:|---:|", *rows,
            f"| model, process CPU time | - | - | {cpu:.1f}x |"]


def figures(name, lines):
    """The figure lines of a script's output: tables whole, a blank line between the parts."""
    pattern = re.compile(FIGURE_LINES[name]) if name in FIGURE_LINES else None
    kept = []
    for line in lines:
        if name == "eval_batching" and line.startswith("{"):
            new = eval_batching_table(json.loads(line))
        elif line.startswith("|"):
            new = [line]
        elif pattern and (match := pattern.match(line)):
            new = [match.group(1)]
        else:
            continue
        if kept and not (kept[-1].startswith("|") and new[0].startswith("|")):
            kept.append("")
        kept.extend(new)
    return kept


def block(name, header, lines):
    """The text between a benchmark's markers: header line, blank line, figures."""
    found = figures(name, lines)
    if not found:
        raise ValueError(f"benchmarks/{name}.py printed no figures (no Markdown table)")
    return "\n".join([
        f"Recorded by benchmarks/record.py from the run of {header['date']}: "
        f"{header['machine']}, load average {header['load']:.1f} at the start; "
        f"`{header['command']}`", "", *found])


def replace_block(text, name, body, where="RESULTS.md"):
    """`text` with the block between `name`'s markers replaced by `body`."""
    begin, end = f"<!-- bench:{name}:begin -->", f"<!-- bench:{name}:end -->"
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        raise ValueError(f"{where}: needs one {begin} ... {end} block for benchmarks/{name}.py")
    return text[: text.index(begin) + len(begin)] + "\n" + body + "\n" + text[text.index(end):]


def write(log_paths, results=common.RESULTS):
    """Replaces the block of each log's script in `results`; writes nothing if one fails."""
    with open(results, encoding="utf-8") as f:
        text = f.read()
    for path in log_paths:
        name = os.path.splitext(os.path.basename(path))[0]
        header, lines = read_log(path)
        text = replace_block(text, name, block(name, header, lines), results)
    with open(results, "w", encoding="utf-8") as f:
        f.write(text)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    run_parser = sub.add_parser("run", help="run a benchmark, copying its output to LOG")
    run_parser.add_argument("log")
    run_parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ...")
    write_parser = sub.add_parser("write", help="rewrite the blocks of RESULTS.md from logs")
    write_parser.add_argument("logs", nargs="+")
    write_parser.add_argument("--results", default=common.RESULTS)
    args = parser.parse_args(argv)
    if args.mode == "run":
        command = args.command[1:] if args.command[:1] == ["--"] else args.command
        if not command:
            parser.error("run: give the command after --")
        return run(args.log, command)
    try:
        write(args.logs, args.results)
    except (OSError, ValueError) as err:
        print(f"record.py: {err}", file=sys.stderr)
        return 2
    print(f"record.py: {len(args.logs)} tables rewritten in {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
