"""Images/s of the training step: the real trainer (aster.trainer.train) with and without input.

    .venv/bin/python benchmarks/train_throughput.py [--configs aster_paper demo_cpu crnn_ctc]
        [--clones 1 2] [--warmup 3] [--steps 6] [--set FIELD=VALUE ...]

For each config and clone count one subprocess (the device count and the thread pools are fixed
per process) runs trainer.train twice:

* input included: the config's pipeline (BatchQueue over generated TFRecords of random 32x100 PNG
  word images, the config's augmentations and queue sizes), its optimizer, summaries and hooks;
* input excluded: the same trainer fed one fixed in-memory batch (preprocessed size, no queue).

The step time is taken by a hook around every session.run after --warmup steps; the figure is the
median over --steps steps (robust to a load spike on a shared machine), with the process CPU time
per image as the load-independent companion. Clones are logical CPU devices (they share the thread
pools). Checkpoints and in-training evaluation are off; summaries follow the config.

`--variants name:FIELD=VALUE;FIELD=VALUE ...` compares settings in the same process, alternating
them --repeats times (medians of the repeats), e.g. `--variants
fp32:train_config.mixed_precision=false bf16:train_config.mixed_precision=true` (a variant with no
assignment, `fp32:`, runs the config as it is: bfloat16 for the demo config). One clone runs on
GPU:0 where the machine has a GPU, so there the same variants compare float32 with float16 mixed
precision (loss-scaled; see aster/utils/train_session.py): the prepared GPU check is
`--configs aster_paper --clones 1 --input excluded --variants fp32:
mixed:train_config.mixed_precision=true --repeats 3`.

Each row also gives the achieved training GFLOP/s (3x the model's forward FLOPs per image) and its
fraction of this machine's matmul peak for the precision the run trained at (benchmarks/peaks.py:
float32, or bfloat16 where the CPU has it natively and the run sets train_config.mixed_precision).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import common  # benchmarks/common.py (scripts run as python benchmarks/<name>.py)
import numpy as np
import peaks

DEFAULT_CONFIGS = ("aster_paper", "demo_cpu", "crnn_ctc")
WORDS = ("hello", "world", "text", "scene", "reading", "aster", "robust", "attention", "42",
         "spline", "crnn", "word")


def write_records(path, num_images=256, height=32, width=100, seed=0):
    """A TFRecord of random-noise word images with random lower-case words; returns path."""
    words = [WORDS[i % len(WORDS)] for i in range(num_images)]
    return common.write_random_records(path, words, height, width, seed)


class InMemoryBatches:
    """Stands in for the BatchQueue: every dequeue() gives the same constant batch."""

    def __init__(self, batch_size, height, width, seed=0, num_clones=1, words=WORDS):
        rng = np.random.default_rng(seed)
        self._images = rng.uniform(0, 255, [batch_size, height, width, 3]).astype(np.float32)
        self._words = [words[i % len(words)] for i in range(batch_size)]
        self.images_per_step = batch_size * num_clones  # one dequeue per clone

    def dequeue(self):
        from aster.core.standard_fields import InputDataFields as F
        from aster.tf_setup import tf

        n = len(self._words)
        # A straight word box (top then bottom line, normalised) for keypoint-supervised models.
        box = [[0.0, 0.1, 1.0, 0.1, 0.0, 0.9, 1.0, 0.9]] * n
        return {F.image: tf.constant(self._images), F.groundtruth_text: tf.constant(self._words),
                F.filename: tf.constant([""] * n), F.lexicon: tf.constant([""] * n),
                F.groundtruth_keypoints: tf.constant(box, tf.float32)}


def _step_timer(warmup):
    from aster.tf_setup import tf

    class StepTimer(tf.train.SessionRunHook):
        """Wall and process-CPU seconds of every session.run after `warmup` runs."""

        def __init__(self):
            self.wall, self.cpu, self._runs = [], [], 0

        def before_run(self, run_context):
            self._start = (time.perf_counter(), time.process_time())

        def after_run(self, run_context, run_values):
            self._runs += 1
            if self._runs > warmup:
                self.wall.append(time.perf_counter() - self._start[0])
                self.cpu.append(time.process_time() - self._start[1])

    return StepTimer()


def prepare_config(config, batch_size=0, overrides=(), record=None, steps=10):
    """A copy of `config` for a short timed run (checkpoints, eval and progress lines off).

    batch_size > 0 replaces the total batch (split evenly across the train_input_readers).
    """
    from aster.utils import config_util

    assignments = [f"train_config.num_steps={steps}", "train_config.save_checkpoint_secs=0",
                   "train_config.save_checkpoint_steps=0", "train_config.eval_every_n_steps=0",
                   "train_config.log_every_n_steps=0", *overrides]
    config = config_util.merge_overrides(config, assignments=assignments)
    train_config = config.train_config
    if batch_size > 0:
        readers = len(train_config.batch_size)
        del train_config.batch_size[:]
        train_config.batch_size.extend([batch_size // readers] * readers)
    if record is not None:
        for reader in config.train_input_reader:
            reader.tf_record_input_reader.input_path = record
    return config


def in_memory_queue(config, words=WORDS):
    """A trainer.Seams build_batch_queue giving InMemoryBatches of the config's batch size and
    model input size (split across the clones), labelled with `words` in turn."""
    from aster import inference

    batch_size = sum(config.train_config.batch_size)
    height, width = inference.model_input_size(config.model)

    def build_queue(readers, train_config, clones):
        del readers, train_config
        return InMemoryBatches(batch_size // clones, height, width, num_clones=clones,
                               words=words)

    return build_queue


def time_training(config, num_clones=1, in_memory=True, warmup=3, steps=6, record=None,
                  train_dir=None, hooks=(), words=WORDS):
    """Runs trainer.train on `config` for warmup + steps steps (in train_dir, else a temporary
    folder); `hooks`: more SessionRunHooks beside the step timer; `words`: the in-memory batch's
    labels.

    Returns:
      dict: images_per_sec (batch / median step time), cpu_ms_per_image (median), batch_size,
      step_seconds (all timed steps).
    """
    from aster import trainer

    batch_size = sum(config.train_config.batch_size)
    config = prepare_config(config, record=record, steps=warmup + steps)
    build_queue = in_memory_queue(config, words) if in_memory else None
    timer = _step_timer(warmup)
    deploy = common.deploy_config(num_clones)
    with tempfile.TemporaryDirectory() as folder:
        trainer.train(config, train_dir or folder, deploy, seams=trainer.Seams(
            build_batch_queue=build_queue, extra_hooks=[timer, *hooks]))
    return {"images_per_sec": batch_size / statistics.median(timer.wall),
            "cpu_ms_per_image": 1e3 * statistics.median(timer.cpu) / batch_size,
            "batch_size": batch_size, "step_seconds": timer.wall}


def training_session(config, num_clones=1, words=WORDS):
    """(session, train_op): the trainer's graph for `config` (trainer.build_graph, no hooks) on one
    in-memory batch labelled with `words`, in a graph and a session of its own (the config's
    session options: the bfloat16 rewrite is per session), variables initialised."""
    from aster import trainer
    from aster.tf_setup import tf
    from aster.utils import train_session

    seams = trainer.Seams(build_batch_queue=in_memory_queue(config, words))
    deploy = common.deploy_config(num_clones)
    graph = tf.Graph()
    with graph.as_default(), tempfile.TemporaryDirectory() as train_dir:
        built = trainer.build_graph(config, train_dir, deploy, seams)
        init = [tf.global_variables_initializer(), tf.local_variables_initializer(),
                tf.tables_initializer()]
    session = tf.Session(graph=graph,
                         config=train_session.session_config(deploy, config.train_config))
    session.run(init)
    return session, built.train_op


def interleave_steps(runs, warmup, steps):
    """Single training steps of every run in turn, the order rotating by one each step (no run
    always goes first), so that a machine whose speed drifts from minute to minute slows all
    alike. runs: {name: (session, train_op)}. Returns {name: [(wall s, process CPU s) per step
    after the warm-up]}."""
    names = list(runs)
    seconds = {name: [] for name in names}
    for step in range(warmup + steps):
        shift = step % len(names)
        for name in names[shift:] + names[:shift]:
            session, train_op = runs[name]
            start = (time.perf_counter(), time.process_time())
            session.run(train_op)
            if step >= warmup:
                seconds[name].append((time.perf_counter() - start[0],
                                      time.process_time() - start[1]))
    return seconds


def step_pair_ratios(first, other, first_batch=1, other_batch=1):
    """Speed of `other` over `first` step by step, in images/s when the batches are given
    (first's wall time / other's x other_batch / first_batch, pairs of the same round of
    interleave_steps)."""
    return [a[0] / b[0] * other_batch / first_batch
            for a, b in zip(first, other, strict=True)]


def _parse_variant(text):
    name, _, assignments = text.partition(":")
    return name, [a for a in assignments.split(";") if a]


def _worker(args):
    """One process: one config and clone count; prints one JSON line per measurement."""
    from aster.utils import config_util

    config = config_util.load_pipeline_config(os.path.join(common.ROOT, "configs",
                                                           f"{args.configs[0]}.config"))
    config = prepare_config(config, args.batch_size, args.set)
    forward_flops = peaks.config_stats(config)["forward_flops"]
    variants = [_parse_variant(v) for v in args.variants] or [("", [])]
    if args.interleave:
        _interleaved_worker(args, config, variants, forward_flops)
        return
    with tempfile.TemporaryDirectory() as folder:
        record = write_records(os.path.join(folder, "train.tfrecord"))
        for repeat in range(args.repeats):
            for name, overrides in variants:
                run_config = prepare_config(config, overrides=overrides)
                for in_memory in ((True, False) if args.input == "both" else
                                  (args.input == "excluded",)):
                    load = os.getloadavg()[0]
                    result = time_training(run_config, args.clones[0], in_memory, args.warmup,
                                           args.steps, record)
                    result.update(config=args.configs[0], clones=args.clones[0], variant=name,
                                  input="excluded" if in_memory else "included",
                                  repeat=repeat, load=load, forward_flops=forward_flops,
                                  precision=peaks.precision(run_config, args.clones[0]))
                    print("RESULT " + json.dumps(result), flush=True)


def _interleaved_worker(args, config, variants, forward_flops):
    """--interleave: every variant's graph in a session of its own, single steps alternating
    (interleave_steps, --repeats rounds of --steps); one RESULT line per variant, with the
    median step-pair speed ratio against the first variant."""
    runs, precisions, batches = {}, {}, {}
    for name, overrides in variants:
        run_config = prepare_config(config, overrides=overrides)
        runs[name] = training_session(run_config, args.clones[0])
        precisions[name] = peaks.precision(run_config, args.clones[0])
        batches[name] = sum(run_config.train_config.batch_size)
    seconds = interleave_steps(runs, args.warmup, args.steps * args.repeats)
    first = variants[0][0]
    for name, _ in variants:
        batch_size = batches[name]
        ratios = step_pair_ratios(seconds[first], seconds[name], batches[first], batch_size)
        result = {"images_per_sec": batch_size / statistics.median(s[0] for s in seconds[name]),
                  "cpu_ms_per_image": 1e3 * statistics.median(s[1] for s in seconds[name])
                  / batch_size, "batch_size": batch_size, "config": args.configs[0],
                  "clones": args.clones[0], "variant": name, "input": "excluded (interleaved)",
                  "repeat": 0, "load": os.getloadavg()[0], "forward_flops": forward_flops,
                  "precision": precisions[name], "pair_ratio": statistics.median(ratios),
                  "pair_range": [min(ratios), max(ratios)], "against": first}
        print("RESULT " + json.dumps(result), flush=True)
    for session, _ in runs.values():
        session.close()


def _run_workers(args, argv):
    """Runs one subprocess per (config, clones); returns the parsed results."""
    results, skipped = [], []
    passthrough = []
    for flag in ("warmup", "steps", "repeats", "batch_size", "input"):
        passthrough += [f"--{flag}", str(getattr(args, flag))]
    if args.interleave:
        passthrough.append("--interleave")
    for assignment in args.set:
        passthrough += ["--set", assignment]
    if args.variants:
        passthrough += ["--variants", *args.variants]
    for name in args.configs:
        if not os.path.exists(os.path.join(common.ROOT, "configs", f"{name}.config")):
            skipped.append(name)
            print(f"skipping {name}: configs/{name}.config does not exist", flush=True)
            continue
        for clones in args.clones:
            command = [sys.executable, os.path.abspath(__file__), "--worker", "--configs", name,
                       "--clones", str(clones), *passthrough]
            out = subprocess.run(command, capture_output=True, text=True, check=False)
            lines = [line[7:] for line in out.stdout.splitlines() if line.startswith("RESULT ")]
            if out.returncode or not lines:
                print(out.stderr[-3000:], file=sys.stderr)
                raise SystemExit(f"{name} with {clones} clone(s) failed (rc {out.returncode})")
            for line in lines:
                result = json.loads(line)
                results.append(result)
                print(f"{name} clones={clones} {result['variant'] or '-'} input "
                      f"{result['input']}: {result['images_per_sec']:.1f} images/s, "
                      f"{result['cpu_ms_per_image']:.1f} CPU ms/image (load "
                      f"{result['load']:.1f})", flush=True)
    del argv
    return results, skipped


def summarize(results, machine_peaks=None):
    """Median over repeats per (config, clones, variant, input): list of table rows, each with
    its achieved training GFLOP/s and the fraction of its precision's peak (None if unknown)."""
    groups = {}
    for r in results:
        key = (r["config"], r["clones"], r["variant"], r["input"])
        groups.setdefault(key, []).append(r)
    rows = []
    for (config, clones, variant, input_mode), rs in groups.items():
        rows.append({"config": config, "clones": clones, "variant": variant, "input": input_mode,
                     "batch_size": rs[0]["batch_size"],
                     "images_per_sec": statistics.median(r["images_per_sec"] for r in rs),
                     "cpu_ms_per_image": statistics.median(r["cpu_ms_per_image"] for r in rs),
                     "runs": len(rs), "precision": rs[0]["precision"]})
        rate, flops = rows[-1]["images_per_sec"], rs[0]["forward_flops"]
        rows[-1]["achieved_gflops"] = peaks.achieved_gflops(rate, flops)
        rows[-1]["of_peak"] = peaks.fraction_of_peak(rate, flops, machine_peaks or {},
                                                     rs[0]["precision"])
    return rows


def pair_lines(results):
    """--interleave: each variant's speed over the first one's, step pair by step pair."""
    return [f"{r['config']} clones={r['clones']}: {r['variant']} / {r['against']} per step pair: "
            f"median {r['pair_ratio']:.2f}x (range {r['pair_range'][0]:.2f}-"
            f"{r['pair_range'][1]:.2f})" for r in results
            if "pair_ratio" in r and r["variant"] != r["against"]]


def table(rows):
    lines = ["| config | clones | variant | input | batch | images/s (median) | "
             "CPU ms/image | runs | precision | achieved GFLOP/s | of its peak |",
             "|---|---:|---|---|---:|---:|---:|---:|---|---:|---:|"]
    for r in rows:
        of_peak = "-" if r["of_peak"] is None else f"{r['of_peak']:.1%}"
        lines.append(f"| {r['config']} | {r['clones']} | {r['variant'] or '-'} | {r['input']} | "
                     f"{r['batch_size']} | {r['images_per_sec']:.1f} | "
                     f"{r['cpu_ms_per_image']:.1f} | {r['runs']} | {r['precision']} | "
                     f"{r['achieved_gflops']:.1f} | {of_peak} |")
    return lines


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--configs", nargs="+", default=list(DEFAULT_CONFIGS),
                        help="config names under configs/ (without .config)")
    parser.add_argument("--clones", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    parser.add_argument("--steps", type=int, default=6, help="timed steps (median)")
    parser.add_argument("--repeats", type=int, default=1, help="alternations of the variants")
    parser.add_argument("--batch_size", type=int, default=0,
                        help="total batch per step; 0: the config's")
    parser.add_argument("--input", choices=("both", "included", "excluded"), default="both")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        help="config assignment for every run (config_util syntax)")
    parser.add_argument("--variants", nargs="+", default=[],
                        help="name:FIELD=VALUE;... settings compared in the same process")
    parser.add_argument("--interleave", action="store_true",
                        help="build every variant's graph in one process and alternate single "
                             "steps (--steps x --repeats each, after --warmup; input excluded, "
                             "no hooks): ratios that hold on a machine whose speed drifts")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.interleave and (len(args.variants) < 2 or args.input != "excluded"):
        parser.error("--interleave compares --variants (two or more) with --input excluded")
    if args.worker:
        _worker(args)
        return
    description, load = common.machine()
    print(f"{description}; load average {load:.1f}", flush=True)
    machine_peaks = peaks.measure_peaks()
    print(peaks.describe(machine_peaks), flush=True)
    results, skipped = _run_workers(args, argv)
    lines = table(summarize(results, machine_peaks)) + pair_lines(results)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
