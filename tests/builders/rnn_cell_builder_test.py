import numpy as np
import pytest
from google.protobuf import text_format

from aster.builders import rnn_cell_builder
from aster.protos import hyperparams_pb2, rnn_cell_pb2
from aster.tf_setup import tf


def _build(text):
    return rnn_cell_builder.build(text_format.Parse(text, rnn_cell_pb2.RnnCell()))


def test_lstm_cell_translates_fields():
    cell = _build(
        "lstm_cell { num_units: 7 use_peepholes: true forget_bias: 0.5 "
        "initializer { orthogonal_initializer { } } }"
    )
    assert isinstance(cell, tf.nn.rnn_cell.LSTMCell)
    assert cell.output_size == 7
    assert cell._use_peepholes is True
    assert cell._forget_bias == pytest.approx(0.5)
    assert isinstance(cell._initializer, tf.orthogonal_initializer)


def test_lstm_cell_defaults():
    cell = _build("lstm_cell { }")
    assert cell.output_size == 128
    assert cell._use_peepholes is False
    assert cell._forget_bias == pytest.approx(1.0)
    assert cell._initializer is None


def test_gru_cell_translates_fields():
    cell = _build("gru_cell { num_units: 5 initializer { uniform_initializer { } } }")
    assert isinstance(cell, tf.nn.rnn_cell.GRUCell)
    assert cell.output_size == 5
    assert isinstance(cell._kernel_initializer, tf.random_uniform_initializer)


def test_initializer_is_applied_to_lstm_kernel():
    cell = _build(
        "lstm_cell { num_units: 4 initializer { uniform_initializer { minval: 2 maxval: 3 } } }"
    )
    with tf.Graph().as_default():
        outputs, _ = tf.nn.dynamic_rnn(cell, tf.ones([2, 3, 5]), dtype=tf.float32)
        kernel = [v for v in tf.global_variables() if "kernel" in v.op.name][0]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            values, out = sess.run([kernel, outputs])
    assert values.min() >= 2.0 and out.shape == (2, 3, 4) and np.all(np.isfinite(out))


def test_empty_oneof_raises():
    with pytest.raises(ValueError, match="rnn_cell: rnn_cell_oneof is not set"):
        rnn_cell_builder.build(rnn_cell_pb2.RnnCell())


def test_zero_units_raises_with_field_path():
    with pytest.raises(ValueError, match=r"rnn_cell\.gru_cell\.num_units: must be > 0, got 0"):
        _build("gru_cell { num_units: 0 }")


def test_bad_initializer_raises_with_field_path():
    with pytest.raises(ValueError, match=r"lstm_cell\.initializer: initializer_oneof is not set"):
        _build("lstm_cell { initializer { } }")


def test_wrong_message_type_raises():
    with pytest.raises(ValueError, match="expected an RnnCell message"):
        rnn_cell_builder.build(hyperparams_pb2.Hyperparams())
