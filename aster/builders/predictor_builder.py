"""Builds a predictor (attention or CTC) from a Predictor message."""

from aster.builders import (
    hyperparams_builder,
    label_map_builder,
    loss_builder,
    rnn_cell_builder,
)
from aster.core import attention_decoder, loss
from aster.predictors import attention_predictor, ctc_predictor
from aster.protos import predictor_pb2
from aster.utils import config_checks


def _build_attention_predictor(name, config, is_training, field_path):
    del is_training  # no batch norm or dropout in the decoder
    label_map = label_map_builder.build(config.label_map, f"{field_path}.label_map")
    if config.HasField("loss"):
        loss_fn = loss_builder.build(config.loss, f"{field_path}.loss")
    else:
        loss_fn = loss.SequenceCrossEntropyLoss()
    regularizer = None
    if config.HasField("rnn_regularizer"):
        regularizer = hyperparams_builder.build_regularizer(
            config.rnn_regularizer, f"{field_path}.rnn_regularizer")
    lm_cells = [
        rnn_cell_builder.build(cell, f"{field_path}.lm_rnn_cell.rnn_cell[{i}]")
        for i, cell in enumerate(config.lm_rnn_cell.rnn_cell)
    ]
    decoder = attention_decoder.AttentionDecoder(
        rnn_cell_builder.build(config.rnn_cell, f"{field_path}.rnn_cell"),
        num_classes=label_map.num_classes,
        num_attention_units=config.num_attention_units,
        sync=config.sync,
        lm_cells=lm_cells,
        rnn_regularizer=regularizer,
        go_label=attention_predictor.GO_LABEL,
        eos_label=attention_predictor.EOS_LABEL)
    return attention_predictor.AttentionPredictor(
        name, decoder, label_map, loss_fn, config.max_num_steps, beam_width=config.beam_width,
        reverse=config.reverse, length_penalty=config.length_penalty)


def _build_ctc_predictor(name, config, is_training, field_path):
    label_map = label_map_builder.build(config.label_map, f"{field_path}.label_map")
    fc_hyperparams = None
    if config.HasField("fc_hyperparams"):
        fc_hyperparams = hyperparams_builder.build(
            config.fc_hyperparams, is_training, f"{field_path}.fc_hyperparams")
    return ctc_predictor.CtcPredictor(
        name, label_map, fc_hyperparams=fc_hyperparams, beam_width=config.beam_width,
        loss_weight=config.loss_weight)


_BUILDERS = {
    "attention_predictor": _build_attention_predictor,
    "ctc_predictor": _build_ctc_predictor,
}


def build(config, is_training, field_path="predictor"):
    """Returns an AttentionPredictor or CtcPredictor named config.name.

    Args:
      config: predictor_pb2.Predictor.
      is_training: Python bool.
      field_path: the message's path in the pipeline config, for error messages.

    Raises:
      ValueError: wrong message type, an empty predictor_oneof, an empty name, or an invalid
        field (named by its path).
    """
    if not isinstance(config, predictor_pb2.Predictor):
        raise ValueError(
            f"{field_path}: expected a Predictor message, got {type(config).__name__}")
    config_checks.check(config, field_path)
    name = config.WhichOneof("predictor_oneof")
    return _BUILDERS[name](config.name, getattr(config, name), is_training, f"{field_path}.{name}")

