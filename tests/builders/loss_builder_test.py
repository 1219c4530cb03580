import pytest
from google.protobuf import text_format

from aster.builders import loss_builder
from aster.core import loss
from aster.protos import loss_pb2


def _build(text):
    return loss_builder.build(text_format.Parse(text, loss_pb2.Loss()))


def test_build_sequence_cross_entropy_loss_translates_fields():
    obj = _build("sequence_cross_entropy_loss { sequence_normalize: true sample_normalize: false "
                 "weight: 0.5 label_smoothing: 0.1 }")
    assert isinstance(obj, loss.SequenceCrossEntropyLoss)
    assert obj._sequence_normalize is True and obj._sample_normalize is False
    assert obj._weight == 0.5 and obj._label_smoothing == pytest.approx(0.1)


def test_build_sequence_cross_entropy_loss_defaults():
    obj = _build("sequence_cross_entropy_loss { }")
    assert obj._sequence_normalize is False and obj._sample_normalize is True
    assert obj._weight == 1.0 and obj._label_smoothing == 0.0


def test_build_l2_regression_loss():
    obj = _build("l2_regression_loss { weight: 3 }")
    assert isinstance(obj, loss.L2RegressionLoss) and obj._weight == 3.0


def test_build_empty_oneof_raises():
    with pytest.raises(ValueError, match="loss: loss_oneof is not set"):
        _build("")


def test_build_wrong_message_raises():
    with pytest.raises(ValueError, match="expected a Loss message"):
        loss_builder.build(loss_pb2.L2RegressionLoss())


def test_build_bad_value_raises_with_field_path():
    with pytest.raises(ValueError, match=r"loss\.sequence_cross_entropy_loss\.label_smoothing: must be in"):
        _build("sequence_cross_entropy_loss { label_smoothing: 1.5 }")
