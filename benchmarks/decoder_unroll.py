"""The training step with the decoders' teacher-forced unroll cut at the batch's longest label
(what training does since 6594403) against the full max_num_steps unroll.

    .venv/bin/python benchmarks/decoder_unroll.py [--config base_cpu_stage8] [--rounds 30]
        [--warmup 3]

Both variants are the real trainer graph (train_throughput.training_session: the config's
precision, optimizer and batch size, one in-memory batch) in one process, single steps
alternating (train_throughput.interleave_steps). The batch's labels have the lengths of the
94-character training data: 64 labels drawn from data/base94 and data/base94_lib average 7.5
characters and the longest of them needs 22 decoder steps (median), so the batch here is words
of 3-12 characters and one of 21. "full" patches the decoder to ignore active_steps. Prints the
median images/s of each and the median step-pair ratio.
"""

import argparse
import os
import statistics
import sys
from unittest import mock

import common  # benchmarks/common.py (scripts run as python benchmarks/<name>.py)
import train_throughput

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _words(batch_size):
    """batch_size - 1 words of 3..12 letters in turn (mean ~7.5) and one of 21 characters (22
    decoder steps with EOS)."""
    return [LETTERS[i % 7:][:3 + i % 10] for i in range(batch_size - 1)] + ["Intercartilaginous-21"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="base_cpu_stage8")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args(argv)
    from aster.core import attention_decoder
    from aster.utils import config_util

    config = config_util.load_pipeline_config(
        os.path.join(common.ROOT, "configs", f"{args.config}.config"))
    config = train_throughput.prepare_config(config)
    batch_size = sum(config.train_config.batch_size)
    words = _words(batch_size)
    full_unroll = attention_decoder.AttentionDecoder.teacher_forced_logits

    def ignore_active_steps(self, memory, decoder_inputs, active_steps=None):
        del active_steps
        return full_unroll(self, memory, decoder_inputs)

    runs = {"cut": train_throughput.training_session(config, words=words)}
    with mock.patch.object(attention_decoder.AttentionDecoder, "teacher_forced_logits",
                           ignore_active_steps):
        runs["full"] = train_throughput.training_session(config, words=words)
    description, load = common.machine()
    seconds = train_throughput.interleave_steps(runs, args.warmup, args.rounds)
    ratios = train_throughput.step_pair_ratios(seconds["full"], seconds["cut"])
    longest = max(len(w) for w in words)
    print(f"{description}, load average {load:.1f}; configs/{args.config}.config, batch "
          f"{batch_size}, labels of mean length {sum(map(len, words)) / len(words):.1f}, "
          f"longest {longest}; {args.rounds} rounds")
    print("| variant | images/s (median) |\n|---|---:|")
    for name in ("full", "cut"):
        median = statistics.median(s[0] for s in seconds[name])
        print(f"| {name} | {batch_size / median:.1f} |")
    print(f"cut / full per step pair: {statistics.median(ratios):.3f} "
          f"(range {min(ratios):.3f}-{max(ratios):.3f})")
    for session, _ in runs.values():
        session.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
