"""Time of the attention decoder alone: teacher-forced training step, greedy and beam search.

    .venv/bin/python benchmarks/decoder_step.py [--repeats 7] [--label NAME] [--cases TEXT ...]

One decoder (LSTM cell, additive attention) over a random encoder sequence of 25 frames, random
weights (no sequence ends early, so decoding runs every step), at the paper config's sizes (memory
depth 512, 256 attention units, 256-unit cell, 97 classes, 30 steps) and the demo config's (256,
128, 128, 38 classes, 14 steps) and the 94-character base config's (256, 128, 128, 96 classes,
26 steps). "train" is a forward and backward pass of the teacher-forced decoder (gradients applied
with a zero learning rate); "train to 22" computes only the first 22 steps (active_steps, as
training does up to the batch's longest label: 22 is the median for 64 labels drawn from
data/base94 and data/base94_lib, whose labels average 7.5 characters). Cases alternate --repeats
times in one process; each figure is the median of the per-call times.

To compare two versions of the decoder, run this script in each checkout (e.g. a `git worktree`
of the older commit with PYTHONPATH pointing at it) one after the other, twice, and give each run
a --label.
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np

# name: (batch, frames, memory depth, attention units, cell units, classes, steps, mode)
CASES = {
    "paper train, batch 64": (64, 25, 512, 256, 256, 97, 30, "train"),
    "paper beam 5, batch 32": (32, 25, 512, 256, 256, 97, 30, "beam"),
    "paper beam 5, batch 1": (1, 25, 512, 256, 256, 97, 30, "beam"),
    "paper greedy, batch 64": (64, 25, 512, 256, 256, 97, 30, "greedy"),
    "demo train, batch 32": (32, 25, 256, 128, 128, 38, 14, "train"),
    "base94 train, batch 64": (64, 25, 256, 128, 128, 96, 26, "train"),
    "base94 train to 22, batch 64": (64, 25, 256, 128, 128, 96, 26, "train to 22"),
}


def _build(batch, frames, depth, units, cell_units, classes, steps, mode):
    """A session and the op that runs one case."""
    from aster.core import attention_decoder
    from aster.tf_setup import tf

    rng = np.random.default_rng(0)
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        features = tf.constant(rng.standard_normal((batch, frames, depth), np.float32))
        decoder = attention_decoder.AttentionDecoder(tf.nn.rnn_cell.LSTMCell(cell_units), classes,
                                                     units)
        memory = decoder.build_memory(features)
        if mode.startswith("train"):
            inputs = tf.constant(rng.integers(2, classes, (batch, steps)), tf.int32)
            active = tf.constant(int(mode.split()[-1]), tf.int32) if " to " in mode else None
            logits = decoder.teacher_forced_logits(memory, inputs, active_steps=active)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=inputs, logits=logits))
            op = tf.train.GradientDescentOptimizer(0.0).minimize(loss)
        elif mode == "greedy":
            op = decoder.greedy_decode(memory, steps).labels
        else:
            op = decoder.beam_search_decode(memory, steps, beam_width=5).labels
        session = tf.Session(graph=graph)
        session.run(tf.global_variables_initializer())
    return session, op


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--label", default="", help="names this checkout in the output")
    parser.add_argument("--cases", nargs="+", default=[],
                        help="only the cases whose name contains one of these (e.g. base94)")
    args = parser.parse_args(argv)
    cases = {name: case for name, case in CASES.items()
             if not args.cases or any(text in name for text in args.cases)}
    if not cases:
        parser.error(f"--cases {' '.join(args.cases)} matches none of: {', '.join(CASES)}")
    load = os.getloadavg()[0]
    runs = {name: _build(*case) for name, case in cases.items()}
    times = {name: [] for name in runs}
    for session, op in runs.values():  # warm-up
        session.run(op)
    for _ in range(args.repeats):
        for name, (session, op) in runs.items():
            start = time.perf_counter()
            session.run(op)
            times[name].append(time.perf_counter() - start)
    label = f" [{args.label}]" if args.label else ""
    rows = [f"| {name} | {1000 * statistics.median(t):.1f} |" for name, t in times.items()]
    table = ["| case | ms per call (median) |", "|---|---:|", *rows]
    print(f"decoder_step{label}, load average {load:.1f}")
    print("\n".join(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
