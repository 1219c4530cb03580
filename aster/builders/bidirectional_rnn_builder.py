"""Builds a bidirectional RNN layer from a BidirectionalRnn message."""

from aster.builders import hyperparams_builder, rnn_cell_builder
from aster.core import bidirectional_rnn
from aster.protos import bidirectional_rnn_pb2
from aster.utils import config_checks


def build(config, is_training, field_path="bidirectional_rnn"):
    """Returns a bidirectional_rnn.BidirectionalRnn (`apply(inputs [B, T, D]) -> [B, T, D']`).

    The forward and backward cells are built separately from `fw_bw_rnn_cell`, so each has its own
    weights.

    Args:
      config: bidirectional_rnn_pb2.BidirectionalRnn.
      is_training: Python bool, for batch norm in fc_hyperparams.
      field_path: the message's path in the pipeline config, for error messages.

    Raises:
      ValueError: wrong message type, missing or empty fw_bw_rnn_cell, negative num_output_units,
        num_output_units > 0 without FC fc_hyperparams, or a bad regularizer.
    """
    if not isinstance(config, bidirectional_rnn_pb2.BidirectionalRnn):
        raise ValueError(
            f"{field_path}: expected a BidirectionalRnn message, got {type(config).__name__}"
        )
    config_checks.check(config, field_path)
    cell_path = f"{field_path}.fw_bw_rnn_cell"
    fw_cell = rnn_cell_builder.build(config.fw_bw_rnn_cell, cell_path)
    bw_cell = rnn_cell_builder.build(config.fw_bw_rnn_cell, cell_path)
    regularizer = None
    if config.HasField("rnn_regularizer"):
        regularizer = hyperparams_builder.build_regularizer(
            config.rnn_regularizer, f"{field_path}.rnn_regularizer"
        )
    fc_hyperparams = None
    if config.num_output_units > 0:
        fc_hyperparams = hyperparams_builder.build(config.fc_hyperparams, is_training,
                                                   f"{field_path}.fc_hyperparams")
    return bidirectional_rnn.BidirectionalRnn(
        fw_cell,
        bw_cell,
        static=config.static,
        rnn_regularizer=regularizer,
        num_output_units=config.num_output_units,
        fc_hyperparams=fc_hyperparams,
        summarize_activations=config.summarize_activations,
    )

