import numpy as np
import pytest

from aster.core import attention_decoder
from aster.tf_setup import slim, tf

NUM_CLASSES = 8
EOS = 1


def _decoder(sync=True, cell="lstm", lm_cells=0, regularizer=None):
    make = {"lstm": lambda: tf.nn.rnn_cell.LSTMCell(12), "gru": lambda: tf.nn.rnn_cell.GRUCell(12)}
    return attention_decoder.AttentionDecoder(
        make[cell](), NUM_CLASSES, 6, sync=sync, lm_cells=[make[cell]() for _ in range(lm_cells)],
        rnn_regularizer=regularizer)


def _sequence_log_prob(logits, labels, lengths):
    logp = logits - np.log(np.sum(np.exp(logits), axis=-1, keepdims=True))
    return np.array([sum(logp[b, t, labels[b, t]] for t in range(lengths[b]))
                     for b in range(len(labels))])


def _memory(decoder, batch_size=4):
    rng = np.random.RandomState(batch_size)
    return decoder.build_memory(tf.constant(rng.randn(batch_size, 5, 7), tf.float32))


@pytest.mark.parametrize("sync,cell,lm_cells", [
    (True, "lstm", 0), (False, "lstm", 0), (True, "gru", 1), (False, "gru", 0)])
def test_beam_width_one_equals_greedy_and_scores_are_true_log_probs(sync, cell, lm_cells):
    max_steps = 6
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        dec = _decoder(sync, cell, lm_cells)
        with tf.variable_scope("Decoder", initializer=tf.random_normal_initializer(0.0, 1.0)):
            memory = _memory(dec)
            greedy = dec.greedy_decode(memory, max_steps)
            beam1 = dec.beam_search_decode(memory, max_steps, beam_width=1)
            beam3 = dec.beam_search_decode(memory, max_steps, beam_width=3)
            forced = tf.placeholder(tf.int32, [4, max_steps])
            logits = dec.teacher_forced_logits(memory, forced)
        num_vars = len(tf.trainable_variables())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            greedy_np, beam1_np, beam3_np = sess.run([greedy, beam1, beam3])
            results = []
            for out in (greedy_np, beam3_np):
                labels = np.full([4, max_steps], EOS, np.int32)
                labels[:, :out.labels.shape[1]] = out.labels
                inputs = np.concatenate([np.zeros([4, 1], np.int32), labels[:, :-1]], axis=1)
                results.append(sess.run(logits, {forced: inputs}))
    # the attention, one cell per LM layer and the classifier, shared by all four decoding graphs
    cell_vars = {"lstm": 2, "gru": 4}[cell] * (1 + lm_cells)
    assert num_vars == 3 + cell_vars + 2
    np.testing.assert_array_equal(greedy_np.labels, beam1_np.labels)
    np.testing.assert_allclose(greedy_np.log_probs, beam1_np.log_probs, atol=1e-5)
    np.testing.assert_array_equal(greedy_np.lengths, beam1_np.lengths)
    for out, logits_np in zip((greedy_np, beam3_np), results, strict=True):
        expected = _sequence_log_prob(logits_np, np.pad(
            out.labels, [[0, 0], [0, max_steps - out.labels.shape[1]]], constant_values=EOS),
            out.lengths)
        np.testing.assert_allclose(out.log_probs, expected, atol=1e-4)
    assert greedy_np.labels.shape[1] <= max_steps


def test_teacher_forced_logits_shape_and_regularizer_added_once():
    with tf.Graph().as_default():
        dec = _decoder(regularizer=slim.l2_regularizer(0.5))
        memory = _memory(dec, batch_size=2)
        logits = dec.teacher_forced_logits(memory, tf.zeros([2, 3], tf.int32))
        dec.greedy_decode(memory, 3)
        dec.beam_search_decode(memory, 3, 2)
        assert logits.shape.as_list() == [2, 3, NUM_CLASSES]
        assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 1


def test_decoding_stops_early_when_all_sequences_end():
    with tf.Graph().as_default():
        dec = _decoder()
        memory = _memory(dec)
        greedy = dec.greedy_decode(memory, 10)
        beam = dec.beam_search_decode(memory, 10, 3)
        bias = [v for v in tf.global_variables() if v.op.name.endswith("output/bias")][0]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(bias.assign(np.eye(NUM_CLASSES)[EOS] * 50.0))
            greedy_np, beam_np = sess.run([greedy, beam])
    # greedy: one step; beam: the other live beams die after one more step
    assert greedy_np.labels.shape == (4, 1) and beam_np.labels.shape == (4, 2)
    for out in (greedy_np, beam_np):
        assert np.all(out.labels == EOS)
        assert np.all(out.lengths == 1) and np.all(out.log_probs > -1e-3)


def test_variables_reused_under_reuse_true_scope():
    with tf.Graph().as_default():
        memory = None
        for i in range(2):
            with tf.variable_scope(tf.get_variable_scope(), reuse=True if i else None):
                dec = _decoder()
                memory = _memory(dec)
                dec.teacher_forced_logits(memory, tf.zeros([4, 2], tf.int32))
        assert len(tf.trainable_variables()) == 3 + 2 + 2


@pytest.mark.parametrize("kwargs,match", [(dict(num_classes=1), "num_classes"),
                                          (dict(num_attention_units=0), "num_attention_units")])
def test_constructor_rejects_bad_arguments(kwargs, match):
    args = dict(num_classes=NUM_CLASSES, num_attention_units=4)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        attention_decoder.AttentionDecoder(None, **args)


def test_teacher_forcing_needs_static_steps():
    with tf.Graph().as_default():
        dec = _decoder()
        memory = _memory(dec)
        with pytest.raises(ValueError, match="static number of steps"):
            dec.teacher_forced_logits(memory, tf.placeholder(tf.int32, [4, None]))


def test_memory_needs_static_depth():
    with tf.Graph().as_default():
        dec = _decoder()
        with pytest.raises(ValueError, match="static depth"):
            dec.build_memory(tf.placeholder(tf.float32, [2, 3, None]))


@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_additive_attention_matches_numpy_reference(cell):
    """glimpse = sum_i softmax_i(v . tanh(W_m m_i + W_q q)) m_i; for an LSTM cell the attention
    returns the glimpse times the cell kernel's glimpse rows."""
    rng = np.random.RandomState(3)
    with tf.Graph().as_default():
        decoder = _decoder(cell=cell)
        memory = decoder._decoding_memory(_memory(decoder, batch_size=3))
        assert (memory.lstm is None) == (cell == "gru")
        query = tf.constant(rng.randn(3, 12), tf.float32)
        with decoder._var_scope():
            glimpse = decoder._attend(query, memory)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            glimpse_np, m, q = sess.run([glimpse, memory.values, query])
            weights = {v.op.name.split("/", 1)[1]: sess.run(v) for v in tf.global_variables()}
    hidden = np.tanh(m @ weights["attention_0/memory_kernel"]
                     + (q @ weights["attention_0/query_kernel"])[:, None, :])
    energy = hidden @ weights["attention_0/attention_v"]
    alpha = np.exp(energy - energy.max(1, keepdims=True))
    alpha /= alpha.sum(1, keepdims=True)
    expected = np.einsum("nt,ntd->nd", alpha, m)
    if cell == "lstm":  # kernel rows: one-hot label (8), glimpse (7), previous output (12)
        expected = expected @ weights["lstm_cell/kernel"][NUM_CLASSES:NUM_CLASSES + 7]
    np.testing.assert_allclose(glimpse_np, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("sync,peepholes", [
    (True, False), (False, False), (True, True), (False, True)])
def test_lstm_fast_path_equals_the_cell(sync, peepholes):
    """The split-kernel LSTM step (LstmWeights, used when decoding) gives the LSTMCell's own
    results (used by teacher forcing)."""
    with tf.Graph().as_default():
        cell = tf.nn.rnn_cell.LSTMCell(12, use_peepholes=peepholes, forget_bias=0.5)
        dec = attention_decoder.AttentionDecoder(cell, NUM_CLASSES, 6, sync=sync)
        with tf.variable_scope("Decoder", initializer=tf.random_normal_initializer(0.0, 0.5)):
            cell_path = _memory(dec)
            fast = dec._decoding_memory(cell_path)
            assert cell_path.lstm is None and fast.lstm is not None
            forced = tf.constant(np.random.RandomState(0).randint(2, NUM_CLASSES, [4, 5]))
            outputs = [(dec.teacher_forced_logits(m, forced),
                        dec.beam_search_decode(m, 5, beam_width=3)) for m in (fast, cell_path)]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            (fast_logits, fast_beam), (cell_logits, cell_beam) = sess.run(outputs)
    np.testing.assert_allclose(fast_logits, cell_logits, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(fast_beam.labels, cell_beam.labels)
    np.testing.assert_allclose(fast_beam.log_probs, cell_beam.log_probs, rtol=1e-5, atol=1e-5)


def test_lstm_fast_path_keeps_the_cell_variable_names(monkeypatch):
    """Checkpoints do not depend on whether the fast path built the cell."""
    def names():
        with tf.Graph().as_default():
            dec = _decoder()
            with tf.variable_scope("Forward"):
                dec.greedy_decode(_memory(dec), 3)
            return sorted(v.op.name for v in tf.global_variables())

    fast = names()
    monkeypatch.setattr(attention_decoder, "is_plain_lstm", lambda cell: False)
    assert names() == fast
    assert "Forward/AttentionDecoder/lstm_cell/kernel" in fast
    # the attention keeps the scope of the first memory of multi-memory decoders (checkpoints)
    assert [n for n in fast if "/attention_0/" in n] == [
        f"Forward/AttentionDecoder/attention_0/{name}"
        for name in ("attention_v", "memory_kernel", "query_kernel")]


def _ops_behind(tensor):
    """The ops `tensor` depends on (the build-time throwaway call of a cell is not among them)."""
    seen, stack = set(), [tensor.op]
    while stack:
        op = stack.pop()
        if op not in seen:
            seen.add(op)
            stack.extend(t.op for t in op.inputs)
    return seen


@pytest.mark.parametrize("sync,peepholes", [(True, False), (False, True)])
def test_split_teacher_forced_step_equals_the_cell_call(monkeypatch, sync, peepholes):
    """Teacher forcing of a plain LSTM (label rows gathered, bias after the product) gives the
    cell's own call: the same variables, logits and gradients."""
    def run():
        with tf.Graph().as_default():
            tf.set_random_seed(7)
            cell = tf.nn.rnn_cell.LSTMCell(12, use_peepholes=peepholes, forget_bias=0.5)
            dec = attention_decoder.AttentionDecoder(cell, NUM_CLASSES, 6, sync=sync)
            with tf.variable_scope("Decoder", initializer=tf.random_normal_initializer(0.0, 0.5)):
                memory = _memory(dec)
                forced = tf.constant(np.random.RandomState(0).randint(2, NUM_CLASSES, [4, 5]))
                logits = dec.teacher_forced_logits(memory, forced)
            loss = tf.reduce_sum(tf.sin(logits))
            variables = tf.trainable_variables()
            grads = tf.gradients(loss, [memory.values] + variables)
            fused = [op.name for op in _ops_behind(logits)
                     if op.type == "BiasAdd" and op.inputs[0].op.type == "MatMul"
                     and op.inputs[0].shape[-1] == 4 * 12]  # the gates, not the logits
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                rng = np.random.RandomState(1)  # the same values whatever the creation order
                for v in sorted(variables, key=lambda v: v.op.name):
                    v.load(rng.normal(0.0, 0.5, v.shape.as_list()).astype(np.float32), sess)
                return [v.op.name for v in variables], sess.run([logits] + grads), fused

    split_names, split_values, split_fusable = run()
    monkeypatch.setattr(attention_decoder, "split_lstm_step", lambda cell: False)
    cell_names, cell_values, cell_fusable = run()
    assert sorted(split_names) == sorted(cell_names)
    assert "Decoder/AttentionDecoder/lstm_cell/kernel" in split_names
    order = np.argsort(split_names), np.argsort(cell_names)
    split_grads = [split_values[2 + i] for i in order[0]]
    cell_grads = [cell_values[2 + i] for i in order[1]]
    for split, call in zip(split_values[:2] + split_grads, cell_values[:2] + cell_grads,
                           strict=True):
        np.testing.assert_allclose(split, call, rtol=1e-5, atol=1e-5)
    # The cell's call is MatMul -> BiasAdd (fused by Grappler); the split step has no such pair.
    assert cell_fusable and not split_fusable


@pytest.mark.parametrize("sync,cell,lm_cells", [(True, "lstm", 0), (False, "gru", 1)])
def test_active_steps_keep_the_masked_loss_and_its_gradients(sync, cell, lm_cells):
    """Steps after the batch's longest target are skipped (zero logits): a loss masked beyond each
    target's end has the full unroll's value and gradients, and the earlier logits are the same."""
    lengths = np.array([2, 4, 1, 3], np.int32)  # longest 4 of 7 steps
    rng = np.random.RandomState(3)
    inputs = rng.randint(2, NUM_CLASSES, [4, 7]).astype(np.int32)
    targets = rng.randint(1, NUM_CLASSES, [4, 7]).astype(np.int32)

    def run(active):
        with tf.Graph().as_default():
            tf.set_random_seed(5)
            dec = _decoder(sync, cell, lm_cells)
            with tf.variable_scope("Decoder", initializer=tf.random_normal_initializer(0.0, 0.5)):
                memory = _memory(dec)
                logits = dec.teacher_forced_logits(
                    memory, tf.constant(inputs),
                    active_steps=tf.reduce_max(lengths) if active else None)
            step_losses = tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=targets, logits=logits)
            loss = tf.reduce_sum(step_losses * tf.sequence_mask(lengths, 7, tf.float32))
            variables = sorted(tf.trainable_variables(), key=lambda v: v.op.name)
            grads = tf.gradients(loss, [memory.values] + variables)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                return ([v.op.name for v in variables], len(tf.trainable_variables()),
                        sess.run([logits, loss] + grads))

    full_names, full_count, (full_logits, full_loss, *full_grads) = run(False)
    names, count, (logits, loss, *grads) = run(True)
    assert names == full_names and count == full_count
    np.testing.assert_allclose(logits[:, :4], full_logits[:, :4], rtol=1e-5, atol=1e-6)
    assert not logits[:, 4:].any()
    np.testing.assert_allclose(loss, full_loss, rtol=1e-5)
    for grad, full_grad in zip(grads, full_grads, strict=True):
        np.testing.assert_allclose(grad, full_grad, rtol=1e-4, atol=1e-6)
