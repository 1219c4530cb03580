"""Builds a recognition model from a Model message."""

from aster.builders import (
    feature_extractor_builder,
    loss_builder,
    predictor_builder,
    spatial_transformer_builder,
)
from aster.core import loss
from aster.meta_architectures import multi_predictors_recognition_model
from aster.protos import model_pb2
from aster.utils import config_checks


def _build_multi_predictors_recognition_model(config, is_training, field_path):
    stn = None
    if config.HasField("spatial_transformer"):
        stn = spatial_transformer_builder.build(
            config.spatial_transformer, is_training, f"{field_path}.spatial_transformer")
    regression_loss = None
    if config.keypoint_supervision:
        regression_loss = (loss_builder.build(config.regression_loss,
                                              f"{field_path}.regression_loss")
                           if config.HasField("regression_loss") else loss.L2RegressionLoss())
    feature_extractor = feature_extractor_builder.build(
        config.feature_extractor, is_training, f"{field_path}.feature_extractor")
    predictors = [
        predictor_builder.build(p, is_training, f"{field_path}.predictor[{i}]")
        for i, p in enumerate(config.predictor)
    ]
    return multi_predictors_recognition_model.MultiPredictorsRecognitionModel(
        feature_extractor, predictors, is_training, spatial_transformer=stn,
        input_height=config.input_height, input_width=config.input_width,
        keypoint_supervision=config.keypoint_supervision, regression_loss=regression_loss,
        auxiliary_predictors=[p.name for p in config.predictor if p.auxiliary])


_BUILDERS = {
    "multi_predictors_recognition_model": _build_multi_predictors_recognition_model,
}


def build(model_config, is_training, field_path="model"):
    """Returns an aster.core.model.RecognitionModel.

    Args:
      model_config: model_pb2.Model.
      is_training: Python bool (batch norm mode; training graphs decode only in postprocess).
      field_path: the message's path in the pipeline config, for error messages.

    Raises:
      ValueError: not a Model message; ConfigError (a ValueError) for a config that breaks a
        rule of aster.utils.config_checks (the message names the field).
    """
    if not isinstance(model_config, model_pb2.Model):
        raise ValueError(f"{field_path}: expected a Model message, got "
                         f"{type(model_config).__name__}")
    config_checks.check(model_config, field_path)
    name = model_config.WhichOneof("model_oneof")
    return _BUILDERS[name](getattr(model_config, name), is_training, f"{field_path}.{name}")
