"""Before/after of a code change in one process: the trainer with an old code path patched back in,
alternating with the code as it is.

    .venv/bin/python benchmarks/code_paths.py --config aster_paper --batch_size 64 \
        --patch aster.core.bidirectional_rnn:is_plain_lstm=code_paths:never \
        [--precisions fp32 bf16] [--repeats 3] [--warmup 2] [--steps 6]

A kept optimisation often has no config field to switch it off (the static BiLSTM's input gates,
say), so train_throughput.py's --variants cannot compare it. --patch MODULE:ATTRIBUTE=VALUE
(repeatable; ATTRIBUTE may be Class.name) sets the attribute to VALUE for the "old" runs and
restores the original for the "new" ones. VALUE names an object as MODULE:NAME, e.g.
code_paths:never (a function returning False for any arguments) or the old function kept in a
module of its own; nothing given on the command line is evaluated as code. Each run is
train_throughput's (the real trainer on one in-memory batch, median step time after the warm-up
steps); the runs alternate old/new per precision, --repeats times, and the script prints every
run, then each variant's median and the new/old ratio of the medians. The in-memory batch's
words have at most 9 letters; --longest_word N adds one of N letters, so that the decoders run
as many steps as on a real batch (a change whose cost depends on the word lengths needs both).
"""

import argparse
import importlib
import logging
import os
import statistics
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import common  # noqa: E402 (after the logging setting above)
import train_throughput  # noqa: E402

from aster.utils import cli_logging  # noqa: E402


def never(*args, **kwargs):
    """False for any arguments: the old value of a predicate that now enables a new path."""
    del args, kwargs
    return False


def _resolve(reference, text):
    """(owner, name) of MODULE:NAME.PATH, with MODULE imported; SystemExit naming --patch."""
    module, _, attribute = reference.partition(":")
    try:
        owner = importlib.import_module(module)
    except ImportError as e:
        raise SystemExit(f"--patch {text!r}: cannot import {module}: {e}") from e
    *path, name = attribute.split(".")
    for part in path:
        owner = getattr(owner, part, None)
    if owner is None or not hasattr(owner, name):
        raise SystemExit(f"--patch {text!r}: {module} has no attribute {attribute}")
    return owner, name


class Patch:
    """MODULE:ATTRIBUTE=VALUE; apply(old) sets the old value (old=True) or the original."""

    def __init__(self, text):
        target, sep, value = text.partition("=")
        module, colon, attribute = target.partition(":")
        if not sep or not colon or not module or not attribute or not value.strip():
            raise SystemExit(f"--patch {text!r}: expected MODULE:ATTRIBUTE=VALUE")
        self.owner, self.name = _resolve(target, text)
        self.original = getattr(self.owner, self.name)
        if ":" not in value:
            raise SystemExit(f"--patch {text!r}: VALUE must name an object as MODULE:NAME")
        self.old = getattr(*_resolve(value.strip(), text))

    def apply(self, old):
        setattr(self.owner, self.name, self.old if old else self.original)


def batch_words(longest_word=0):
    """The in-memory batch's labels: train_throughput.WORDS (at most 9 letters), and with
    longest_word > 0 one word of that many letters more, so that a decoder runs that many steps
    (a real batch of 64 words from the demo data has a 15- or 16-letter word 85% of the time)."""
    words = train_throughput.WORDS
    if longest_word <= 0:
        return words
    return (*words, "".join(chr(ord("a") + i % 26) for i in range(longest_word)))


def precision_overrides(precision):
    """The assignment that trains at `precision` ("fp32" or "bf16") whatever the config says:
    train_config.mixed_precision is set both ways (the demo config trains in bfloat16, so "fp32"
    must turn it off)."""
    return [common.bfloat16_assignment(precision == "bf16")]


def run(config, patches, precisions, repeats, warmup, steps, report=print,
        words=train_throughput.WORDS):
    """Alternates old/new runs; returns {(precision, "old"|"new"): [images/s per run]}."""
    rates = {}
    for _ in range(repeats):
        for precision in precisions:
            overrides = precision_overrides(precision)
            for variant in ("old", "new"):
                for patch in patches:
                    patch.apply(old=variant == "old")
                try:
                    result = train_throughput.time_training(
                        train_throughput.prepare_config(config, overrides=overrides),
                        warmup=warmup, steps=steps, words=words)
                finally:
                    for patch in patches:
                        patch.apply(old=False)
                rates.setdefault((precision, variant), []).append(result["images_per_sec"])
                report(f"{precision} {variant}: {result['images_per_sec']:.1f} images/s, "
                       f"{result['cpu_ms_per_image']:.2f} CPU ms/image (load "
                       f"{os.getloadavg()[0]:.1f})")
    return rates


def interleave(config, patches, precision, warmup, steps, report=print,
               words=train_throughput.WORDS):
    """The old graph (built with the patches) and the new one in two sessions of one process,
    their training steps alternating (train_throughput.interleave_steps), so that a machine whose
    speed drifts from minute to minute slows both alike. Returns (old step seconds, new step
    seconds)."""
    overrides = precision_overrides(precision)
    config = train_throughput.prepare_config(config, overrides=overrides)
    runs = {}
    for variant in ("old", "new"):
        for patch in patches:
            patch.apply(old=variant == "old")
        try:
            runs[variant] = train_throughput.training_session(config, words=words)
        finally:
            for patch in patches:
                patch.apply(old=False)
    timed = train_throughput.interleave_steps(runs, warmup, steps)
    for session, _ in runs.values():
        session.close()
    seconds = {variant: [wall for wall, _ in timed[variant]] for variant in timed}
    batch_size = sum(config.train_config.batch_size)
    pairs = train_throughput.step_pair_ratios(timed["old"], timed["new"])
    report(f"{precision} interleaved, {steps} steps each: old "
           f"{batch_size / statistics.median(seconds['old']):.1f}, new "
           f"{batch_size / statistics.median(seconds['new']):.1f} images/s; new/old per step "
           f"pair: median {statistics.median(pairs):.2f}x (range {min(pairs):.2f}-"
           f"{max(pairs):.2f})")
    return seconds["old"], seconds["new"]


def summary(rates):
    """Lines: each precision's old and new medians (with the runs) and new/old."""
    lines = []
    for precision in dict.fromkeys(p for p, _ in rates):
        old, new = rates[(precision, "old")], rates[(precision, "new")]
        ratio = statistics.median(new) / statistics.median(old)
        lines.append(f"{precision}: old {statistics.median(old):.1f} "
                     f"({', '.join(f'{r:.1f}' for r in old)}), new {statistics.median(new):.1f} "
                     f"({', '.join(f'{r:.1f}' for r in new)}) images/s: new/old {ratio:.2f}x")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="demo_cpu", help="config name under configs/")
    parser.add_argument("--patch", action="append", required=True,
                        metavar="MODULE:ATTRIBUTE=VALUE", help="the old code path")
    parser.add_argument("--precisions", nargs="+", choices=("fp32", "bf16"), default=["fp32"])
    parser.add_argument("--batch_size", type=int, default=0, help="0: the config's")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--interleave", action="store_true",
                        help="alternate single steps of the two graphs in two sessions "
                             "(--steps each, after --warmup) instead of whole runs")
    parser.add_argument("--longest_word", type=int, default=0,
                        help="add a word of this many letters to the in-memory batch (0: its "
                             "words have at most 9)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    from aster.utils import config_util

    cli_logging.configure(level=logging.WARNING)
    patches = [Patch(text) for text in args.patch]
    description, load = common.machine()
    print(f"{description}; load average {load:.1f}", flush=True)
    config = config_util.load_pipeline_config(os.path.join(common.ROOT, "configs",
                                                           f"{args.config}.config"))
    config = train_throughput.prepare_config(config, args.batch_size)
    if args.interleave:
        for precision in args.precisions:
            interleave(config, patches, precision, args.warmup, args.steps,
                       report=lambda line: print(line, flush=True),
                       words=batch_words(args.longest_word))
        return
    rates = run(config, patches, args.precisions, args.repeats, args.warmup, args.steps,
                report=lambda line: print(line, flush=True), words=batch_words(args.longest_word))
    print("\n".join(summary(rates)), flush=True)


if __name__ == "__main__":
    main()
