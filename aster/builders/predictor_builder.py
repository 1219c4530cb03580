"""Builds a predictor (attention or CTC) from a Predictor message."""

from aster.builders import (
    hyperparams_builder,
    label_map_builder,
    loss_builder,
    rnn_cell_builder,
)
from aster.core import attention_decoder, loss
from aster.predictors import attention_predictor, ctc_predictor
from aster.protos import hyperparams_pb2, predictor_pb2


def _check_positive(value, field_path, minimum=1):
    if value < minimum:
        raise ValueError(f"{field_path}: must be >= {minimum}, got {value}")


def _build_attention_predictor(name, config, is_training, field_path):
    del is_training  # no batch norm or dropout in the decoder
    if not config.HasField("rnn_cell"):
        raise ValueError(f"{field_path}.rnn_cell: the decoder cell is required")
    if not config.HasField("label_map"):
        raise ValueError(f"{field_path}.label_map: required")
    _check_positive(config.num_attention_units, f"{field_path}.num_attention_units")
    _check_positive(config.max_num_steps, f"{field_path}.max_num_steps", minimum=2)
    _check_positive(config.beam_width, f"{field_path}.beam_width")
    if config.length_penalty < 0:
        raise ValueError(f"{field_path}.length_penalty: must be >= 0, got {config.length_penalty}")
    label_map = label_map_builder.build(config.label_map, f"{field_path}.label_map")
    if label_map.label_offset < 2:
        raise ValueError(
            f"{field_path}.label_map.label_offset: must be >= 2 for an attention predictor "
            f"(0 = GO, 1 = EOS), got {label_map.label_offset}")
    if config.HasField("loss"):
        if config.loss.WhichOneof("loss_oneof") != "sequence_cross_entropy_loss":
            raise ValueError(
                f"{field_path}.loss: must be sequence_cross_entropy_loss, got "
                f"{config.loss.WhichOneof('loss_oneof')!r}")
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
        reverse=config.reverse, length_penalty=config.length_penalty,
        multi_attention=config.multi_attention)


def _build_ctc_predictor(name, config, is_training, field_path):
    if not config.HasField("label_map"):
        raise ValueError(f"{field_path}.label_map: required")
    _check_positive(config.beam_width, f"{field_path}.beam_width")
    if config.loss_weight < 0:
        raise ValueError(f"{field_path}.loss_weight: must be >= 0, got {config.loss_weight}")
    label_map = label_map_builder.build(config.label_map, f"{field_path}.label_map")
    fc_hyperparams = None
    if config.HasField("fc_hyperparams"):
        if config.fc_hyperparams.op != hyperparams_pb2.Hyperparams.FC:
            raise ValueError(f"{field_path}.fc_hyperparams.op: must be FC")
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
    if not config.name or "/" in config.name:
        raise ValueError(f"{field_path}.name: must be a non-empty scope name without '/', "
                         f"got {config.name!r}")
    name = config.WhichOneof("predictor_oneof")
    if name not in _BUILDERS:
        raise ValueError(
            f"{field_path}: unknown predictor_oneof {name!r}; expected one of {sorted(_BUILDERS)}")
    return _BUILDERS[name](config.name, getattr(config, name), is_training, f"{field_path}.{name}")

