import numpy as np
import pytest

from aster.core import bidirectional_rnn
from aster.tf_setup import slim, tf


def _lstm(units=4):
    return tf.nn.rnn_cell.LSTMCell(units)


def _fc_scope(batch_norm=False):
    kwargs = {}
    if batch_norm:
        kwargs = dict(
            normalizer_fn=slim.batch_norm,
            normalizer_params={
                "is_training": True,
                "updates_collections": [tf.GraphKeys.UPDATE_OPS],
            },
        )
    with slim.arg_scope([slim.fully_connected], **kwargs) as scope:
        return scope


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed_dict)


@pytest.mark.parametrize("static", [True, False])
def test_output_concatenates_both_directions(static):
    with tf.Graph().as_default():
        layer = bidirectional_rnn.BidirectionalRnn(_lstm(3), _lstm(5), static=static)
        out = layer.apply(tf.random_normal([2, 6, 7]))
        assert out.shape.as_list() == [2, 6, 8] and layer.output_size == 8
        kernels = [v for v in tf.trainable_variables() if v.op.name.endswith("kernel")]
        assert len(kernels) == 2  # separate forward and backward weights
        assert _run(out).shape == (2, 6, 8)


def test_static_and_dynamic_compute_the_same_function():
    with tf.Graph().as_default():
        inputs = tf.constant(np.random.RandomState(0).normal(size=(2, 5, 3)), tf.float32)
        with tf.variable_scope("rnn"):
            static = bidirectional_rnn.BidirectionalRnn(_lstm(), _lstm(), static=True)
            static_out = static.apply(inputs, scope="layer")
        with tf.variable_scope("rnn", reuse=True):
            dynamic = bidirectional_rnn.BidirectionalRnn(_lstm(), _lstm(), static=False)
            dynamic_out = dynamic.apply(inputs, scope="layer")
        assert len(tf.trainable_variables()) == 4  # the dynamic layer reused the static weights
        a, b = _run([static_out, dynamic_out])
    np.testing.assert_allclose(a, b, atol=1e-5)


def test_backward_half_reads_the_sequence_from_the_end():
    with tf.Graph().as_default():
        inputs = tf.random_normal([1, 4, 2])
        out = bidirectional_rnn.BidirectionalRnn(_lstm(3), _lstm(3)).apply(inputs)
        fw_grad = _run(tf.gradients(out[:, 0, :3], inputs)[0])
        bw_grad = _run(tf.gradients(out[:, 0, 3:], inputs)[0])
    assert np.all(fw_grad[0, 1:] == 0) and np.abs(fw_grad[0, 0]).max() > 0
    assert np.abs(bw_grad[0, 3]).max() > 0  # step 0 of the backward cell has seen the last input


def test_dynamic_variant_accepts_unknown_length():
    with tf.Graph().as_default():
        inputs = tf.placeholder(tf.float32, [2, None, 3])
        out = bidirectional_rnn.BidirectionalRnn(_lstm(), _lstm(), static=False).apply(inputs)
        value = _run(out, {inputs: np.zeros([2, 9, 3])})
    assert value.shape == (2, 9, 8)


def test_static_variant_with_unknown_length_raises():
    with tf.Graph().as_default():
        inputs = tf.placeholder(tf.float32, [2, None, 3])
        layer = bidirectional_rnn.BidirectionalRnn(_lstm(), _lstm(), static=True)
        with pytest.raises(ValueError, match="static sequence length.*set static: false"):
            layer.apply(inputs)


def test_regularizer_applies_to_kernels_once_even_when_reused():
    with tf.Graph().as_default():
        inputs = tf.random_normal([2, 3, 4])
        for reuse in (False, True):
            with tf.variable_scope("clone", reuse=reuse):
                layer = bidirectional_rnn.BidirectionalRnn(
                    tf.nn.rnn_cell.GRUCell(2),
                    tf.nn.rnn_cell.GRUCell(2),
                    rnn_regularizer=lambda w: 0.5 * tf.reduce_sum(tf.abs(w)),
                )
                layer.apply(inputs)
        losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
        kernels = [v for v in tf.trainable_variables() if v.op.name.endswith("kernel")]
        assert len(kernels) == 4 and len(losses) == 4  # gates + candidate, both directions
        total, expected = _run(
            [tf.add_n(losses), tf.add_n([tf.reduce_sum(tf.abs(k)) for k in kernels])]
        )
    assert total == pytest.approx(0.5 * expected, rel=1e-5)


def test_projection_maps_to_output_units_with_batch_norm():
    with tf.Graph().as_default():
        layer = bidirectional_rnn.BidirectionalRnn(
            _lstm(),
            _lstm(),
            num_output_units=6,
            fc_hyperparams=_fc_scope(batch_norm=True),
            summarize_activations=True,
        )
        out = layer.apply(tf.random_normal([3, 5, 2]))
        assert out.shape.as_list() == [3, 5, 6] and layer.output_size == 6
        assert len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)) == 2
        assert len(tf.get_collection(tf.GraphKeys.SUMMARIES)) == 1
        assert tf.trainable_variables("BidirectionalRnn/Projection/weights")[0].shape == (8, 6)
        assert _run(out).shape == (3, 5, 6)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (
            dict(num_output_units=4),
            r"fc_hyperparams: required \(op: FC\) when num_output_units > 0",
        ),
        (dict(num_output_units=-1), "num_output_units: must be >= 0, got -1"),
    ],
)
def test_bad_projection_arguments_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        bidirectional_rnn.BidirectionalRnn(_lstm(), _lstm(), **kwargs)


def test_shared_cell_raises():
    cell = _lstm()
    with pytest.raises(ValueError, match="must be distinct cells"):
        bidirectional_rnn.BidirectionalRnn(cell, cell)


def _static_outputs_and_gradients(cell_fn, use_cells_call):
    """Outputs, gradients (inputs and every variable), variable names of a static layer in a fresh
    graph, through the LSTM fast path or (use_cells_call) the cells' own call, and whether the
    fast path was taken."""
    with tf.Graph().as_default():
        inputs = tf.constant(np.random.RandomState(0).normal(size=(3, 5, 4)), tf.float32)
        layer = bidirectional_rnn.BidirectionalRnn(cell_fn(), cell_fn())
        if use_cells_call:
            layer._run_cells = lambda x: tf.stack(tf.nn.static_bidirectional_rnn(
                layer._fw_cell, layer._bw_cell, tf.unstack(x, axis=1), dtype=x.dtype)[0], 1)
        out = layer.apply(inputs)
        weights = tf.constant(np.random.RandomState(1).normal(size=(3, 5, 12)), tf.float32)
        variables = tf.trainable_variables()
        grads = tf.gradients(tf.reduce_sum(out * weights), [inputs] + variables)
        rng = np.random.RandomState(2)  # the same weights in both graphs (variables in name order)
        with tf.Session() as sess:
            for v in variables:
                sess.run(v.initializer)
                v.load(rng.normal(scale=0.5, size=v.shape.as_list()), sess)
            values = sess.run([out] + grads)
        # The fast path unstacks each direction's precomputed input gates, [B, 4H] per step.
        fast = any(op.type == "Unpack" and op.outputs[0].shape.as_list() == [3, 24]
                   for op in tf.get_default_graph().get_operations())
        return values, [v.op.name for v in variables], fast


@pytest.mark.parametrize("peepholes", [False, True])
def test_lstm_fast_path_matches_the_cells_own_call(peepholes):
    # The static layer computes each LSTM's input gates for all steps at once; outputs, gradients
    # and variable names (checkpoints) must be those of tf.nn.static_bidirectional_rnn.
    def cell_fn():
        return tf.nn.rnn_cell.LSTMCell(6, use_peepholes=peepholes, forget_bias=0.5)

    fast, fast_names, took_fast_path = _static_outputs_and_gradients(cell_fn, False)
    slow, slow_names, _ = _static_outputs_and_gradients(cell_fn, use_cells_call=True)
    assert took_fast_path and fast_names == slow_names
    assert "bidirectional_rnn/fw/lstm_cell/kernel" in "\n".join(fast_names)
    for a, b in zip(fast, slow, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_lstm_fast_path_skips_other_cells():
    # GRUs (and LSTMs with a projection) take tf.nn.static_bidirectional_rnn.
    gru = lambda: tf.nn.rnn_cell.GRUCell(6)  # noqa: E731
    projected = lambda: tf.nn.rnn_cell.LSTMCell(6, num_proj=6)  # noqa: E731
    for cell_fn in (gru, projected):
        assert not bidirectional_rnn.is_plain_lstm(cell_fn())
        fast, _, took_fast_path = _static_outputs_and_gradients(cell_fn, use_cells_call=False)
        slow, _, _ = _static_outputs_and_gradients(cell_fn, use_cells_call=True)
        assert not took_fast_path
        for a, b in zip(fast, slow, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
