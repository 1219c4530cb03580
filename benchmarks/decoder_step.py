"""Time of the attention decoder alone: teacher-forced training step, greedy and beam search.

    .venv/bin/python benchmarks/decoder_step.py [--repeats 7] [--label NAME]

One decoder (LSTM cell, additive attention) over a random encoder sequence of 25 frames, random
weights (no sequence ends early, so decoding runs every step), at the paper config's sizes (memory
depth 512, 256 attention units, 256-unit cell, 97 classes, 30 steps) and the demo config's (256,
128, 128, 38 classes, 14 steps). "train" is a forward and backward pass of the teacher-forced
decoder (gradients applied with a zero learning rate). Cases alternate --repeats times in one
process; each figure is the median of the per-call times.

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
        if mode == "train":
            inputs = tf.constant(rng.integers(2, classes, (batch, steps)), tf.int32)
            logits = decoder.teacher_forced_logits(memory, inputs)
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
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    runs = {name: _build(*case) for name, case in CASES.items()}
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
