"""Builds a tf.compat.v1 RNN cell from an RnnCell message (LSTM or GRU).

The v1 cells need the legacy Keras (TF_USE_LEGACY_KERAS=1, set by the aster package and by
aster.tf_setup before TensorFlow is imported).
"""

from aster.builders import hyperparams_builder
from aster.protos import rnn_cell_pb2
from aster.tf_setup import tf
from aster.utils import config_checks


def _build_lstm_cell(config, field_path):
    initializer = None
    if config.HasField("initializer"):
        initializer = hyperparams_builder.build_initializer(
            config.initializer, f"{field_path}.initializer"
        )
    return tf.nn.rnn_cell.LSTMCell(
        config.num_units,
        use_peepholes=config.use_peepholes,
        forget_bias=config.forget_bias,
        initializer=initializer,
    )


def _build_gru_cell(config, field_path):
    initializer = None
    if config.HasField("initializer"):
        initializer = hyperparams_builder.build_initializer(
            config.initializer, f"{field_path}.initializer"
        )
    return tf.nn.rnn_cell.GRUCell(config.num_units, kernel_initializer=initializer)


_BUILDERS = {
    "lstm_cell": _build_lstm_cell,
    "gru_cell": _build_gru_cell,
}


def build(rnn_cell_config, field_path="rnn_cell"):
    """Returns a tf.nn.rnn_cell.RNNCell (LSTMCell or GRUCell) for an RnnCell message.

    Each call makes a new cell, so two calls give two sets of weights (forward and backward).

    Args:
      rnn_cell_config: rnn_cell_pb2.RnnCell.
      field_path: the message's path in the pipeline config, for error messages.

    Raises:
      ValueError: wrong message type, empty oneof, num_units of 0 or a bad initializer.
    """
    if not isinstance(rnn_cell_config, rnn_cell_pb2.RnnCell):
        raise ValueError(
            f"{field_path}: expected an RnnCell message, got {type(rnn_cell_config).__name__}"
        )
    config_checks.check(rnn_cell_config, field_path)
    name = rnn_cell_config.WhichOneof("rnn_cell_oneof")
    return _BUILDERS[name](getattr(rnn_cell_config, name), f"{field_path}.{name}")
