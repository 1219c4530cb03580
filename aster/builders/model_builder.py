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


def _build_multi_predictors_recognition_model(config, is_training, field_path):
    if not config.HasField("feature_extractor"):
        raise ValueError(f"{field_path}.feature_extractor: required")
    if not config.predictor:
        raise ValueError(f"{field_path}.predictor: at least one predictor is required")
    for name in ("input_height", "input_width"):
        if getattr(config, name) <= 0:
            raise ValueError(f"{field_path}.{name}: must be > 0, got {getattr(config, name)}")
    names = [p.name for p in config.predictor]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ValueError(f"{field_path}.predictor[{i}].name: {name!r} is already used by "
                             f"predictor[{names.index(name)}]; names are variable scopes")
    if all(p.auxiliary for p in config.predictor):
        raise ValueError(f"{field_path}.predictor: every predictor is auxiliary; at least one "
                         "must be decoded")
    stn = None
    if config.HasField("spatial_transformer"):
        stn = spatial_transformer_builder.build(
            config.spatial_transformer, is_training, f"{field_path}.spatial_transformer")
    regression_loss = None
    if config.keypoint_supervision:
        if stn is None:
            raise ValueError(f"{field_path}.keypoint_supervision: needs a spatial_transformer")
        if config.HasField("regression_loss"):
            kind = config.regression_loss.WhichOneof("loss_oneof")
            if kind != "l2_regression_loss":
                raise ValueError(f"{field_path}.regression_loss: must be l2_regression_loss, "
                                 f"got {kind!r}")
            regression_loss = loss_builder.build(config.regression_loss,
                                                 f"{field_path}.regression_loss")
        else:
            regression_loss = loss.L2RegressionLoss()
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
      ValueError: wrong message type, an empty model_oneof, or an invalid field (named by path).
    """
    if not isinstance(model_config, model_pb2.Model):
        raise ValueError(f"{field_path}: expected a Model message, got "
                         f"{type(model_config).__name__}")
    name = model_config.WhichOneof("model_oneof")
    if name not in _BUILDERS:
        raise ValueError(
            f"{field_path}: unknown model_oneof {name!r}; expected one of {sorted(_BUILDERS)}")
    return _BUILDERS[name](getattr(model_config, name), is_training, f"{field_path}.{name}")
