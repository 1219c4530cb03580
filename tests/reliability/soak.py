"""Soak: trains configs/demo_cpu.config for N minutes and records resident memory and step rate.

    python tests/reliability/soak.py --minutes 20 [--output docs/reliability/soak.json]

Generates a small synthetic training set (or reuses data/synth when present), runs aster-train
with num_steps 0 (no end), samples the process's VmRSS every few seconds and its logged
images/s, then stops it. "Flat" memory: the growth from the end of warm-up (the first quarter,
at least 1 minute) to the end. "Steady" rate: the median images/s of the second half of the
post-warm-up period over that of the first half. Not run in CI (`make reliability` runs it).
"""

import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
_RATE = re.compile(r"step (\d+)(?:/\d+)?, loss \S+, ([\d.]+) images/s")


def _rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _data(scratch):
    existing = glob.glob(os.path.join(ROOT, "data", "synth", "train-*.tfrecord"))
    if existing:
        return os.path.join(ROOT, "data", "synth", "train-*.tfrecord")
    out = os.path.join(scratch, "synth")
    subprocess.run([os.path.join(BIN, "aster-synth-words"), "--output_dir", out, "--split",
                    "train", "--num_train", "2000", "--num_shards", "2"], check=True,
                   capture_output=True)
    return os.path.join(out, "train-*.tfrecord")


def soak(minutes, sample_secs=5.0):
    """Runs the soak; returns a dict of figures."""
    with tempfile.TemporaryDirectory() as scratch:
        pattern = _data(scratch)
        log_path = os.path.join(scratch, "train.log")
        args = [os.path.join(BIN, "aster-train"), "--pipeline_config_path",
                os.path.join(ROOT, "configs", "demo_cpu.config"), "--train_dir",
                os.path.join(scratch, "train"),
                "--set", f"train_input_reader[0].tf_record_input_reader.input_path={pattern}",
                "--set", "train_config.num_steps=0", "--set", "train_config.log_every_n_steps=10",
                "--set", "train_config.save_checkpoint_secs=120"]
        samples = []
        with open(log_path, "w") as log:
            process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
                                       env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
        start = time.time()
        try:
            while time.time() - start < minutes * 60 and process.poll() is None:
                time.sleep(sample_secs)
                rss = _rss_mb(process.pid)
                if rss is not None:
                    samples.append((time.time() - start, rss))
        finally:
            process.kill()
            process.wait()
        with open(log_path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    rates = [(int(m.group(1)), float(m.group(2))) for m in _RATE.finditer(text)]
    warmup = max(60.0, minutes * 60 / 4)
    after = [s for s in samples if s[0] >= warmup] or samples[-1:]
    rss_start, rss_end = after[0][1], after[-1][1]
    late = rates[len(rates) // 4:] if len(rates) > 4 else rates
    half = len(late) // 2
    first, second = late[:half], late[half:]
    ratio = (statistics.median(r for _, r in second) / statistics.median(r for _, r in first)
             if first and second else None)
    return {
        "minutes": minutes,
        "steps": rates[-1][0] if rates else 0,
        "rss_mb_after_warmup": round(rss_start, 1),
        "rss_mb_end": round(rss_end, 1),
        "rss_growth_mb": round(rss_end - rss_start, 1),
        "rss_max_mb": round(max(r for _, r in samples), 1) if samples else None,
        "images_per_s_first_half": round(statistics.median(r for _, r in first), 2)
        if first else None,
        "images_per_s_second_half": round(statistics.median(r for _, r in second), 2)
        if second else None,
        "rate_ratio": round(ratio, 3) if ratio else None,
        "load_average": os.getloadavg(),
        "exit_before_end": process.returncode if process.returncode not in (-9, None) else None,
        "log_tail": text[-1500:] if not rates else "",
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=20.0)
    parser.add_argument("--output", default=os.path.join(ROOT, "docs", "reliability",
                                                         "soak.json"))
    args = parser.parse_args(argv)
    result = soak(args.minutes)
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, "w") as f:
        json.dump(result, f, indent=1)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
