"""Runs every reliability case and writes the table of docs/RELIABILITY.md (`make reliability`).

    python tests/reliability/report.py [--kills 5] [--soak_minutes 20 | --soak_minutes 0]
    python tests/reliability/report.py --only cluster_worker cluster_ps   # refresh these rows

--soak_minutes 0 reuses the last recorded soak (docs/reliability/soak.json) instead of running
one. --only runs the named cases (CASES) and replaces just their rows of the table. The CI part of
these cases runs in `make test` (tests/reliability/*_test.py).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [HERE, os.path.dirname(HERE)]

import faults_cluster  # noqa: E402
import faults_code  # noqa: E402
import faults_configs  # noqa: E402
import faults_process  # noqa: E402

DOC = os.path.join(ROOT, "docs", "RELIABILITY.md")
SOAK_JSON = os.path.join(ROOT, "docs", "reliability", "soak.json")
Result = faults_configs.Result


def data_case():
    result = subprocess.run([sys.executable, os.path.join(HERE, "faults_data.py")],
                            capture_output=True, text=True, timeout=600, check=False,
                            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    if result.returncode:
        return Result("Bad records", 1, 0, "pipeline run failed", [result.stderr[-2000:]])
    run = json.loads(result.stdout.strip().splitlines()[-1])
    import faults_data

    cases = faults_data.bad_examples()
    expected = run["expected_drops"]
    eval_ok = run["texts"] == run["expected_texts"] and sum(run["eval_drops"].values()) == expected
    train_ok = sum(run["train_drops"].values()) >= expected
    held = len(cases) + 1 if eval_ok and train_ok and faults_data.bombs_refused(run) else 0
    figure = (f"{len(cases)} bad records + 1 file truncated mid-record, between "
              f"{len(run['expected_texts'])} good ones: eval kept all good ones and counted "
              f"{sum(run['eval_drops'].values())}/{expected} drops {run['eval_drops']}; training "
              f"ran {run['train_steps']} batches; peak RSS {run['max_rss_mb']:.0f} MB, "
              f"{faults_data.extra_rss_mb(run):+.0f} MB over the same runs without bombs, with a "
              f"0.4 MB PNG declaring 12000x12000 (432 MB) refused from its header")
    return Result("Bad records (train and eval)", len(cases) + 1, held, figure, [])


def evaluator_case():
    tests = ["test_loop_skips_checkpoint_deleted_before_its_turn_with_log",
             "test_loop_survives_checkpoint_vanishing_during_evaluation"]
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             os.path.join(ROOT, "tests", "evaluator_test.py"), "-k",
                             " or ".join(tests)], capture_output=True, text=True, cwd=ROOT,
                            timeout=600, check=False)
    held = len(tests) if result.returncode == 0 else 0
    return Result("Checkpoints deleted under the evaluator", len(tests), held,
                  "tests/evaluator_test.py: a checkpoint deleted before its turn is skipped with "
                  "a log line; one vanishing during evaluation is reported and the loop goes on",
                  [] if held else [result.stdout[-2000:]])


def soak_case(minutes):
    if minutes > 0:
        subprocess.run([sys.executable, os.path.join(HERE, "soak.py"), "--minutes",
                        str(minutes), "--output", SOAK_JSON], check=False)
    if not os.path.exists(SOAK_JSON):
        return Result("Soak (demo_cpu.config)", 0, 0, "not run", [])
    with open(SOAK_JSON) as f:
        soak = json.load(f)
    flat = soak["rss_growth_mb"] is not None and abs(soak["rss_growth_mb"]) < 100
    steady = soak["rate_ratio"] is not None and 0.8 <= soak["rate_ratio"] <= 1.25
    figure = (f"{soak['minutes']:g} min, {soak['steps']} steps: RSS {soak['rss_mb_after_warmup']}"
              f" MB after warm-up -> {soak['rss_mb_end']} MB (growth {soak['rss_growth_mb']} MB,"
              f" max {soak['rss_max_mb']} MB); images/s {soak['images_per_s_first_half']} -> "
              f"{soak['images_per_s_second_half']} (ratio {soak['rate_ratio']}); load average "
              f"{', '.join(f'{v:.1f}' for v in soak['load_average'])}")
    return Result("Soak (demo_cpu.config)", 2, int(flat) + int(steady), figure, [])


def _in(scratch, name, run):
    directory = os.path.join(scratch, name)
    os.makedirs(directory)
    return run(directory)


def _full_disk(directory):
    return faults_process.full_disk_run(directory) or Result(
        "Full disk during a checkpoint write", 0, 0, "not run: this machine cannot mount a tmpfs",
        [])


def cases(args, scratch):
    """The cases in table order: name -> callable() returning a Result."""
    return {
        "configs": lambda: faults_configs.run_all(os.path.join(scratch, "configs")),
        "data": data_case,
        "kill": lambda: _in(scratch, "kill", lambda d: faults_process.sigkill_run(
            d, kills=args.kills, num_steps=40, seed=7)),
        "disk": lambda: _in(scratch, "disk", _full_disk),
        "cluster_worker": lambda: _in(scratch, "worker", faults_cluster.worker_restart_run),
        "cluster_ps": lambda: _in(scratch, "ps", faults_cluster.ps_kill_run),
        "evaluator": evaluator_case,
        "code": faults_code.run,
        "soak": lambda: soak_case(args.soak_minutes),
    }


def _row(r):
    return f"| {r.case} | {r.tried} | {r.held} | {r.figure.replace('|', '/')} |"


def _machine():
    return f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end"


def table(results, seconds):
    lines = ["| Case | Tried | Held | Figure |", "|---|---|---|---|"]
    lines.extend(_row(r) for r in results)
    return "\n".join(lines) + (f"\n\nGenerated by `make reliability` "
                               f"(tests/reliability/report.py) in {seconds:.0f} s on {_machine()}.\n")


def merge(old_text, results, order, seconds, names):
    """The old table with the rows of `results` replaced (or inserted in `order`) and a note."""
    rows = {line.split("|")[1].strip(): line for line in old_text.splitlines()
            if line.startswith("| ") and not line.startswith("| Case ")}
    rows.update({r.case: _row(r) for r in results})
    ranked = sorted(rows, key=lambda case: order.index(case) if case in order else -1)
    notes = [line for line in old_text.splitlines()
             if line and not line.startswith("|") and f"--only {' '.join(names)}`" not in line]
    notes.append(f"Rows {', '.join(r.case for r in results)} updated by `report.py --only "
                 f"{' '.join(names)}` in {seconds:.0f} s on {_machine()}.")
    return "\n".join(["| Case | Tried | Held | Figure |", "|---|---|---|---|",
                      *(rows[c] for c in ranked), "", "\n\n".join(notes)]) + "\n"


# Row titles in table order (for --only merges).
ORDER = ["Config mutations", "Bad records (train and eval)", "SIGKILL and restart",
         "Full disk during a checkpoint write", "Async worker killed and restarted", "Killed ps",
         "Checkpoints deleted under the evaluator", "No evaluation or unpickling of data",
         "Soak (demo_cpu.config)"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--soak_minutes", type=float, default=20.0)
    parser.add_argument("--only", nargs="+", default=None, metavar="CASE",
                        help="run only these cases and replace their rows")
    parser.add_argument("--output", default=DOC)
    args = parser.parse_args(argv)
    start = time.time()
    with tempfile.TemporaryDirectory() as scratch:
        runs = cases(args, scratch)
        unknown = sorted(set(args.only or ()) - set(runs))
        if unknown:
            parser.error(f"unknown --only cases {unknown}; expected some of {sorted(runs)}")
        results = [run() for name, run in runs.items() if not args.only or name in args.only]
    with open(args.output, encoding="utf-8") as f:
        doc = f.read()
    begin, end = "<!-- table:begin -->", "<!-- table:end -->"
    old = doc[doc.index(begin) + len(begin):doc.index(end)]
    seconds = time.time() - start
    text = (merge(old, results, ORDER, seconds, args.only) if args.only
            else table(results, seconds))
    print(text)
    for r in results:
        for failure in r.failures[:10]:
            print(f"  {r.case}: {failure}", file=sys.stderr)
    doc = doc[: doc.index(begin) + len(begin)] + "\n" + text + doc[doc.index(end):]
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(doc)
    return 0 if all(r.held == r.tried for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
