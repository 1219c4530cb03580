import itertools

import numpy as np
import pytest

from aster.core import beam_search
from aster.tf_setup import tf

GO, EOS, A, B = 0, 1, 2, 3


def _log_softmax(x):
    x = np.asarray(x, np.float64)
    return x - np.log(np.sum(np.exp(x - x.max(-1, keepdims=True)), -1, keepdims=True)) - x.max(
        -1, keepdims=True)


def _markov_logits(rows):
    """rows: {prev_label: {label: prob}} -> [C, C] logits whose softmax is those probabilities."""
    table = np.full([4, 4], -30.0)
    for prev, probs in rows.items():
        for label, p in probs.items():
            table[prev, label] = np.log(p)
    return table


def _run_first_order(table, batch_size, beam_width, max_num_steps, length_penalty=0.0):
    """Markov chain decoder: the next label's logits depend on the previous label only."""
    with tf.Graph().as_default():
        logits_table = tf.constant(table, tf.float32)

        def step_fn(prev, state):
            return tf.gather(logits_table, prev), state

        state = tf.zeros([batch_size * beam_width, 1])
        out = beam_search.beam_search(step_fn, state, tf.constant(batch_size), beam_width,
                                      max_num_steps, GO, EOS, length_penalty=length_penalty)
        with tf.Session() as sess:
            return sess.run(out)


GREEDY_TRAP = _markov_logits({
    GO: {A: 0.6, B: 0.4},
    A: {EOS: 0.4, A: 0.3, B: 0.3},
    B: {EOS: 0.95, A: 0.025, B: 0.025},
    EOS: {EOS: 1.0},
})


def test_beam_search_beats_greedy_with_exact_log_probability():
    out = _run_first_order(GREEDY_TRAP, batch_size=2, beam_width=2, max_num_steps=6)
    # greedy picks A (0.6) then EOS (0.4): 0.24; the best sequence is B EOS: 0.4 * 0.95 = 0.38
    assert out.labels.shape[:2] == (2, 2)
    for b in range(2):
        assert out.labels[b, 0, :2].tolist() == [B, EOS]
        assert out.log_probs[b, 0] == pytest.approx(np.log(0.38), abs=1e-5)
        assert out.labels[b, 1, :2].tolist() == [A, EOS]
        assert out.log_probs[b, 1] == pytest.approx(np.log(0.24), abs=1e-5)
        assert out.lengths[b].tolist() == [2, 2]
    # every hypothesis finished after 2 steps: the search stopped early
    assert out.labels.shape[2] == 2


def test_beam_width_one_follows_greedy_path():
    out = _run_first_order(GREEDY_TRAP, batch_size=1, beam_width=1, max_num_steps=6)
    assert out.labels[0, 0].tolist() == [A, EOS]
    assert out.log_probs[0, 0] == pytest.approx(np.log(0.24), abs=1e-5)


EARLY_END = _markov_logits({
    GO: {EOS: 0.5, A: 0.5},
    A: {A: 0.99, EOS: 0.01},
    EOS: {EOS: 1.0},
})


def test_finished_beam_extends_with_eos_at_zero_cost():
    out = _run_first_order(EARLY_END, batch_size=1, beam_width=2, max_num_steps=4)
    assert out.labels[0, 0].tolist() == [EOS, EOS, EOS, EOS]
    assert out.lengths[0, 0] == 1
    assert out.log_probs[0, 0] == pytest.approx(np.log(0.5), abs=1e-5)
    # the second beam ran out of steps without EOS
    assert out.labels[0, 1].tolist() == [A, A, A, A]
    assert out.lengths[0, 1] == 4
    assert out.log_probs[0, 1] == pytest.approx(np.log(0.5 * 0.99 ** 3), abs=1e-5)


def test_length_penalty_prefers_longer_and_keeps_true_log_probability():
    out = _run_first_order(EARLY_END, batch_size=1, beam_width=2, max_num_steps=4,
                           length_penalty=2.0)
    assert out.labels[0, 0].tolist() == [A, A, A, A]
    assert out.log_probs[0, 0] == pytest.approx(np.log(0.5 * 0.99 ** 3), abs=1e-5)
    assert out.scores[0, 0] == pytest.approx(np.log(0.5 * 0.99 ** 3) / (9 / 6) ** 2, abs=1e-5)
    assert out.scores[0, 0] > out.scores[0, 1]


def _brute_force(table2, num_classes, max_num_steps):
    """All sequences (ending at the first EOS or at max_num_steps) with their log-probabilities
    under the second-order chain logits = table2[label two back, previous label]."""
    results = []
    logp = _log_softmax(table2)
    for n in range(1, max_num_steps + 1):
        for seq in itertools.product(range(num_classes), repeat=n):
            if EOS in seq[:-1] or (n < max_num_steps and seq[-1] != EOS):
                continue
            hist, total = [GO, GO], 0.0
            for label in seq:
                total += logp[hist[-2], hist[-1], label]
                hist.append(label)
            results.append((total, list(seq)))
    return sorted(results, key=lambda r: -r[0])


def test_beam_search_exhaustive_matches_brute_force_with_state_reordering():
    num_classes, max_steps, beam_width = 5, 4, 125
    rng = np.random.RandomState(3)
    table2 = rng.randn(num_classes, num_classes, num_classes) * 2.0
    with tf.Graph().as_default():
        table = tf.constant(table2, tf.float32)

        def step_fn(prev, state):
            # state = the label before `prev`: correct results need the state to follow its beam
            logits = tf.gather_nd(table, tf.stack([state, prev], axis=1))
            return logits, prev

        state = tf.fill([2 * beam_width], GO)
        out = beam_search.beam_search(step_fn, state, tf.constant(2), beam_width, max_steps, GO,
                                      EOS)
        with tf.Session() as sess:
            out = sess.run(out)
    expected = _brute_force(table2, num_classes, max_steps)
    for b in range(2):
        for rank in range(10):
            logp, seq = expected[rank]
            n = len(seq)
            assert out.labels[b, rank, :n].tolist() == seq
            assert np.all(out.labels[b, rank, n:] == EOS)
            assert out.lengths[b, rank] == n
            assert out.log_probs[b, rank] == pytest.approx(logp, abs=1e-4)
    assert np.all(np.diff(out.scores, axis=1) <= 1e-6)  # sorted best first


def test_tile_batch_repeats_each_entry():
    with tf.Graph().as_default():
        out = beam_search.tile_batch(tf.constant([[1, 2], [3, 4]]), 3)
        assert out.shape.as_list() == [6, 2]
        with tf.Session() as sess:
            assert sess.run(out)[:, 0].tolist() == [1, 1, 1, 3, 3, 3]


@pytest.mark.parametrize("kwargs,match", [(dict(beam_width=0), "beam_width"),
                                          (dict(max_num_steps=0), "max_num_steps"),
                                          (dict(length_penalty=-1.0), "length_penalty")])
def test_beam_search_rejects_bad_arguments(kwargs, match):
    args = dict(beam_width=2, max_num_steps=3, length_penalty=0.0)
    args.update(kwargs)
    with tf.Graph().as_default(), pytest.raises(ValueError, match=match):
        beam_search.beam_search(lambda p, s: (None, s), tf.zeros([2]), tf.constant(1),
                                args["beam_width"], args["max_num_steps"], GO, EOS,
                                length_penalty=args["length_penalty"])
