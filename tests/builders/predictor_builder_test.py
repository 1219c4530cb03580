import pytest
from google.protobuf import text_format

from aster.builders import predictor_builder
from aster.core import loss
from aster.predictors import attention_predictor, ctc_predictor
from aster.protos import predictor_pb2
from aster.tf_setup import tf

LABEL_MAP = "label_map { character_set { built_in_set: ALLCASES_SYMBOLS } label_offset: 2 }"


def _build(text, is_training=True):
    return predictor_builder.build(text_format.Parse(text, predictor_pb2.Predictor()), is_training)


def _attention(body):
    return f'name: "Backward" attention_predictor {{ rnn_cell {{ lstm_cell {{ }} }} {body} }}'


def test_build_attention_predictor_translates_fields():
    pred = _build(_attention(
        LABEL_MAP + " num_attention_units: 7 max_num_steps: 12 beam_width: 5 reverse: true "
        "sync: false length_penalty: 0.6 "
        "loss { sequence_cross_entropy_loss { weight: 0.5 sequence_normalize: true } } "
        "rnn_regularizer { l2_regularizer { weight: 0.1 } } "
        "lm_rnn_cell { rnn_cell { gru_cell { num_units: 8 } } }"))
    assert isinstance(pred, attention_predictor.AttentionPredictor)
    assert pred.name == "Backward" and pred.num_classes == 96
    assert pred._max_num_steps == 12 and pred._beam_width == 5 and pred._reverse is True
    assert pred._length_penalty == pytest.approx(0.6)
    dec = pred._decoder
    assert dec._num_units == 7 and dec._sync is False and dec.num_classes == 96
    assert isinstance(dec._cell, tf.nn.rnn_cell.LSTMCell) and dec._cell.output_size == 128
    assert len(dec._lm_cells) == 1 and isinstance(dec._lm_cells[0], tf.nn.rnn_cell.GRUCell)
    assert dec._regularizer is not None
    assert isinstance(pred._loss, loss.SequenceCrossEntropyLoss)
    assert pred._loss._weight == 0.5 and pred._loss._sequence_normalize is True


def test_build_attention_predictor_defaults():
    pred = _build(_attention(LABEL_MAP))
    assert pred._max_num_steps == 40 and pred._beam_width == 1 and pred._reverse is False
    assert pred._decoder._sync is True and pred._decoder._num_units == 128
    assert pred._decoder._regularizer is None and pred._decoder._lm_cells == ()
    assert pred._loss._sample_normalize is True and pred._loss._weight == 1.0


def test_build_ctc_predictor_translates_fields():
    pred = _build('name: "Ctc" ctc_predictor { label_map { character_set { built_in_set: '
                  'LOWERCASE } } beam_width: 8 loss_weight: 2 fc_hyperparams { op: FC '
                  'activation: NONE } }')
    assert isinstance(pred, ctc_predictor.CtcPredictor)
    assert pred.name == "Ctc" and pred.num_classes == 37
    assert pred._beam_width == 8 and pred._loss_weight == 2.0 and pred._fc_hyperparams


def test_build_ctc_predictor_without_hyperparams():
    pred = _build('ctc_predictor { label_map { } }')
    assert pred.name == "Predictor" and pred._fc_hyperparams is None and pred._beam_width == 1


def test_build_empty_oneof_raises():
    with pytest.raises(ValueError, match="predictor: predictor_oneof is not set"):
        _build('name: "Forward"')


@pytest.mark.parametrize("text,match", [
    (_attention(""), r"attention_predictor\.label_map: is not set"),
    ('attention_predictor { ' + LABEL_MAP + ' }', r"attention_predictor\.rnn_cell: is not set"),
    (_attention("label_map { }"), r"label_map.label_offset: must be >= 2"),
    (_attention(LABEL_MAP + " max_num_steps: 1"), r"max_num_steps: must be >= 2"),
    (_attention(LABEL_MAP + " beam_width: 0"), r"beam_width: must be >= 1"),
    (_attention(LABEL_MAP + " num_attention_units: 0"), r"num_attention_units: must be > 0, got 0"),
    (_attention(LABEL_MAP + " length_penalty: -1"), r"length_penalty: must be >= 0"),
    (_attention(LABEL_MAP + " loss { l2_regression_loss { } }"),
     r"loss: must be sequence_cross_entropy_loss"),
    ('ctc_predictor { }', r"ctc_predictor\.label_map: is not set"),
    ('ctc_predictor { label_map { } beam_width: 0 }', r"ctc_predictor.beam_width"),
    ('ctc_predictor { label_map { } loss_weight: -1 }', r"ctc_predictor.loss_weight"),
    ('ctc_predictor { label_map { } fc_hyperparams { op: CONV } }', r"fc_hyperparams.op: must be FC"),
    ('name: "" ctc_predictor { label_map { } }', r"predictor.name"),
    ('name: "a/b" ctc_predictor { label_map { } }', r"predictor.name"),
])
def test_build_invalid_fields_raise_with_field_path(text, match):
    with pytest.raises(ValueError, match=match):
        _build(text)


def test_build_wrong_message_raises():
    with pytest.raises(ValueError, match="expected a Predictor message"):
        predictor_builder.build(predictor_pb2.CtcPredictor(), True)
