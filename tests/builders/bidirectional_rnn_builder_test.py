import pytest
from google.protobuf import text_format

from aster.builders import bidirectional_rnn_builder
from aster.core import bidirectional_rnn
from aster.protos import bidirectional_rnn_pb2, hyperparams_pb2
from aster.tf_setup import slim, tf

_PAPER_LAYER = """
fw_bw_rnn_cell { lstm_cell { num_units: 256 forget_bias: 1.0
                             initializer { orthogonal_initializer { } } } }
rnn_regularizer { l2_regularizer { weight: 0 } }
num_output_units: 256
fc_hyperparams { op: FC activation: RELU initializer { variance_scaling_initializer { } }
                 regularizer { l2_regularizer { weight: 0 } } }
"""


def _build(text, is_training=True):
    config = text_format.Parse(text, bidirectional_rnn_pb2.BidirectionalRnn())
    return bidirectional_rnn_builder.build(config, is_training)


def test_paper_layer_translates():
    layer = _build(_PAPER_LAYER)
    assert isinstance(layer, bidirectional_rnn.BidirectionalRnn)
    assert isinstance(layer._fw_cell, tf.nn.rnn_cell.LSTMCell)
    assert isinstance(layer._bw_cell, tf.nn.rnn_cell.LSTMCell)
    assert layer._fw_cell is not layer._bw_cell
    assert layer._fw_cell.output_size == 256 and layer.output_size == 256
    assert layer._static is True
    assert layer._rnn_regularizer is None  # weight 0 adds nothing
    assert layer._num_output_units == 256
    fc_kwargs = layer._fc_hyperparams[slim.arg_scope_func_key(slim.fully_connected)]
    assert fc_kwargs["activation_fn"] is tf.nn.relu


def test_dynamic_gru_without_projection_translates():
    layer = _build(
        "static: false summarize_activations: true fw_bw_rnn_cell { gru_cell { num_units: 3 } } "
        "rnn_regularizer { l1_regularizer { weight: 0.1 } }"
    )
    assert layer._static is False and layer._summarize_activations is True
    assert isinstance(layer._fw_cell, tf.nn.rnn_cell.GRUCell)
    assert layer._num_output_units == 0 and layer._fc_hyperparams is None
    assert layer.output_size == 6
    with tf.Graph().as_default():
        assert layer._rnn_regularizer(tf.constant([-2.0, 3.0])) is not None


def test_regularizer_weight_reaches_the_losses():
    layer = _build(
        "fw_bw_rnn_cell { lstm_cell { num_units: 2 } } rnn_regularizer { l2_regularizer { } }"
    )
    with tf.Graph().as_default():
        layer.apply(tf.zeros([1, 2, 3]))
        assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 2


def test_empty_cell_oneof_raises_with_path():
    with pytest.raises(
        ValueError, match=r"bidirectional_rnn\.fw_bw_rnn_cell: is not set"
    ):
        _build("num_output_units: 0")


def test_empty_regularizer_oneof_raises_with_path():
    with pytest.raises(
        ValueError, match=r"bidirectional_rnn\.rnn_regularizer: regularizer_oneof is not set"
    ):
        _build("fw_bw_rnn_cell { lstm_cell { } } rnn_regularizer { }")


def test_projection_without_fc_hyperparams_raises():
    with pytest.raises(ValueError, match=r"fc_hyperparams: is required when num_output_units > 0"):
        _build("fw_bw_rnn_cell { lstm_cell { } } num_output_units: 8")


def test_projection_with_conv_hyperparams_raises():
    with pytest.raises(ValueError, match=r"fc_hyperparams\.op: must be FC here, got CONV"):
        _build("fw_bw_rnn_cell { lstm_cell { } } num_output_units: 8 fc_hyperparams { op: CONV }")


def test_negative_output_units_raise():
    with pytest.raises(ValueError, match=r"num_output_units: must be >= 0, got -3"):
        _build("fw_bw_rnn_cell { lstm_cell { } } num_output_units: -3")


def test_wrong_message_type_raises():
    with pytest.raises(ValueError, match="expected a BidirectionalRnn message"):
        bidirectional_rnn_builder.build(hyperparams_pb2.Hyperparams(), True)
