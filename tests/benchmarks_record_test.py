"""benchmarks/record.py: the current-figures blocks of RESULTS.md rewritten from benchmark logs."""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys

import bench_scripts
import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
BENCHMARKS = os.path.join(ROOT, "benchmarks")

DOC = """# Benchmark results

Written by hand.

<!-- bench:flops:begin -->
old flops figures
<!-- bench:flops:end -->

<!-- bench:eval_batching:begin -->
old eval figures
<!-- bench:eval_batching:end -->

<!-- bench:input_pipeline:begin -->
old input figures
<!-- bench:input_pipeline:end -->

## History

Kept as it is.
"""
# What the scripts print today (shortened), noise lines included.
FLOPS = ["matmul peak (TF, 2048x2048): float32 164 GFLOP/s, bfloat16 not measured; Test CPU, 2 cores, Python 3.11.7, "
         "load 0.7",
         "| config | parameters | forward GFLOP/image |", "|---|---:|---:|",
         "| tiny | 516,732 | 0.020 |"]
EVAL = ["evaluator: batch 1 13.99 images/s, batch 32 82.41 images/s: 5.9x per image",
        json.dumps({"config": "configs/aster_paper.config",
                    "evaluator": {"batch1_images_per_sec": 13.99, "batch32_images_per_sec": 82.41,
                                  "speedup_per_image": 5.89, "batch1_runs": [13.99],
                                  "batched_runs": [82.41]},
                    "model": {"batch1_images_per_sec": 13.9, "batch32_images_per_sec": 79.49,
                              "speedup_per_image": 5.72, "batch1_runs": [13.9],
                              "batched_runs": [79.49]},
                    "model_speedup_per_image_cpu_time": 5.4})]
INPUT = ["wrote 4000 PNG word images in 3.1s", "batch (64, 64, 256, 3) (readers [32, 32])",
         "| run | images/s | CPU us/image |", "|---:|---:|---:|", "| 1 | 2,330 | 472 |",
         "median 2,330 images/s, 472 CPU us/image (all 2 cores on it: 4,239 images/s); machine: "
         "Test CPU, 2 cores, Python 3.11.7; load average 6.6 -> 7.4"]


@pytest.fixture
def record(monkeypatch):
    return bench_scripts.load("record", monkeypatch)  # record.py imports common by name


def _log(path, lines, command="python benchmarks/x.py --steps 3"):
    header = {"command": command, "date": "2026-12-02", "machine": "Test CPU, 2 cores",
              "load": 1.25}
    path.write_text("\n".join([json.dumps(header), *lines]) + "\n")
    return str(path)


def _block(text, name):
    return re.search(f"<!-- bench:{name}:begin -->\n(.*)\n<!-- bench:{name}:end -->", text,
                     re.S).group(1).splitlines()


def test_write_replaces_the_logged_blocks_with_their_figures(record, tmp_path):
    results = tmp_path / "RESULTS.md"
    results.write_text(DOC)
    logs = [_log(tmp_path / "flops.log", FLOPS, "python benchmarks/flops.py --steps 3"),
            _log(tmp_path / "eval_batching.log", EVAL)]
    record.write(logs, str(results))
    text = results.read_text()
    flops = _block(text, "flops")
    assert flops[0] == ("Recorded by benchmarks/record.py from the run of 2026-12-02: Test CPU, "
                        "2 cores, load average 1.2 at the start; "
                        "`python benchmarks/flops.py --steps 3`")
    assert flops[1:] == ["", "matmul peak (TF, 2048x2048): float32 164 GFLOP/s, bfloat16 not measured",
                         "", *FLOPS[1:]]
    assert _block(text, "eval_batching")[2:] == [
        "| measured | batch 1 images/s | batch 32 images/s | per-image speed-up |",
        "|---|---:|---:|---:|", "| evaluator | 13.99 | 82.41 | 5.9x |",
        "| model | 13.90 | 79.49 | 5.7x |", "| model, process CPU time | - | - | 5.4x |"]
    assert _block(text, "input_pipeline") == ["old input figures"]  # not logged: left alone
    assert text.startswith("# Benchmark results\n\nWritten by hand.\n")
    assert text.endswith("## History\n\nKept as it is.\n")


def test_summary_lines_keep_their_figures_apart_from_the_tables(record, tmp_path):
    results = tmp_path / "RESULTS.md"
    results.write_text(DOC)
    record.write([_log(tmp_path / "input_pipeline.log", INPUT)], str(results))
    assert _block(results.read_text(), "input_pipeline")[2:] == [
        "batch (64, 64, 256, 3) (readers [32, 32])", "", *INPUT[2:5], "",
        "median 2,330 images/s, 472 CPU us/image (all 2 cores on it: 4,239 images/s)"]


def test_step_profile_keeps_each_configs_step_time_line_with_its_tables(record):
    lines = ["AMD EPYC, 2 cores; load average 1.0", "", "demo_cpu: step wall time 228.0 ms, "
             "op time 356.6 ms", "", "| op type | op time (ms) | share | ops |", "|---|---:|---:|---:|",
             "| MatMul | 51.6 | 14.5% | 472 |"]
    assert record.figures("step_profile", lines) == [
        "demo_cpu: step wall time 228.0 ms, op time 356.6 ms", "", *lines[4:]]


def test_a_log_without_its_block_fails_naming_both_and_writes_nothing(record, tmp_path, capsys):
    results = tmp_path / "RESULTS.md"
    results.write_text(DOC)
    logs = [_log(tmp_path / "flops.log", FLOPS), _log(tmp_path / "synth_speed.log", FLOPS)]
    assert record.main(["write", *logs, "--results", str(results)]) == 2
    error = capsys.readouterr().err
    assert str(results) in error and "<!-- bench:synth_speed:begin -->" in error
    assert results.read_text() == DOC
    with pytest.raises(ValueError, match="printed no figures"):
        record.write([_log(tmp_path / "flops.log", ["no table here"])], str(results))
    (tmp_path / "eval_batching.log").write_text("| a |\n")
    with pytest.raises(ValueError, match=re.escape(str(tmp_path / "eval_batching.log"))):
        record.write([str(tmp_path / "eval_batching.log")], str(results))


def test_run_copies_stdout_to_the_log_and_returns_the_exit_code(record, tmp_path, capsys):
    log = tmp_path / "logs" / "x.log"
    code = "import sys; print('| a | b |'); sys.exit(3)"
    assert record.main(["run", str(log), "--", sys.executable, "-c", code]) == 3
    assert capsys.readouterr().out == "| a | b |\n"
    header, lines = record.read_log(str(log))
    assert header["command"] == "python -c " + shlex.quote(code) and "cores" in header["machine"]
    assert lines == ["| a | b |"]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_bench_record_logs_every_script_and_rewrites_its_block():
    def dry_run(*flags):
        return subprocess.run(["make", "-n", "bench", *flags], cwd=ROOT, capture_output=True,
                              text=True, check=True, timeout=60).stdout.splitlines()

    recorded = [line for line in dry_run("BENCH_FLAGS=--record") if "benchmarks/" in line]
    names = re.findall(r"record\.py run build/bench/(\w+)\.log -- \S+ benchmarks/\1\.py",
                       "\n".join(recorded))
    assert len(names) == 7 and recorded[-1].endswith("record.py write build/bench/*.log")
    assert not any("--record" in line for line in recorded)
    with open(os.path.join(BENCHMARKS, "RESULTS.md"), encoding="utf-8") as f:
        text = f.read()
    assert all(text.count(f"<!-- bench:{n}:begin -->") == 1 for n in names)
    assert not any("record.py" in line for line in dry_run())
