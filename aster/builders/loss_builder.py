"""Builds a loss object from a Loss message."""

from aster.core import loss
from aster.protos import loss_pb2
from aster.utils import config_checks


def _build_sequence_cross_entropy_loss(config):
    return loss.SequenceCrossEntropyLoss(
        sequence_normalize=config.sequence_normalize,
        sample_normalize=config.sample_normalize,
        weight=config.weight,
        label_smoothing=config.label_smoothing)


def _build_l2_regression_loss(config):
    return loss.L2RegressionLoss(weight=config.weight)


_BUILDERS = {
    "sequence_cross_entropy_loss": _build_sequence_cross_entropy_loss,
    "l2_regression_loss": _build_l2_regression_loss,
}


def build(config, field_path="loss"):
    """Returns a loss callable (aster.core.loss.SequenceCrossEntropyLoss or L2RegressionLoss).

    Args:
      config: loss_pb2.Loss.
      field_path: the message's path in the pipeline config, for error messages.

    Raises:
      ValueError: not a Loss message, an empty loss_oneof, or an invalid value.
    """
    if not isinstance(config, loss_pb2.Loss):
        raise ValueError(f"{field_path}: expected a Loss message, got {type(config).__name__}")
    config_checks.check(config, field_path)
    name = config.WhichOneof("loss_oneof")
    return _BUILDERS[name](getattr(config, name))
