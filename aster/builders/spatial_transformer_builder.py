"""Builds the TPS spatial transformer from a SpatialTransformer message."""

from aster.builders import convnet_builder, hyperparams_builder
from aster.core import spatial_transformer
from aster.protos import spatial_transformer_pb2
from aster.utils import config_checks


def build(config, is_training, field_path="spatial_transformer"):
    """Returns a spatial_transformer.SpatialTransformer.

    Its `batch_transform(images [B, H, W, C] in [-1, 1])` returns {"rectified_images":
    [B, output_h, output_w, C], "control_points": [B, K, 2] normalised (x, y)}, and
    `init_control_points` is the [K, 2] numpy array of the initial prediction.

    Args:
      config: spatial_transformer_pb2.SpatialTransformer.
      is_training: Python bool, for batch norm in the localization network.
      field_path: the message's path in the pipeline config, for error messages.

    Raises:
      ValueError: wrong message type; ConfigError (a ValueError) for a config that breaks a rule
        of aster.utils.config_checks (the message names the field).
    """
    if not isinstance(config, spatial_transformer_pb2.SpatialTransformer):
        raise ValueError(
            f"{field_path}: expected a SpatialTransformer message, got {type(config).__name__}"
        )
    config_checks.check(config, field_path)
    convnet = convnet_builder.build(config.convnet, is_training, f"{field_path}.convnet")
    fc_hyperparams = hyperparams_builder.build(
        config.fc_hyperparams, is_training, f"{field_path}.fc_hyperparams"
    )
    return spatial_transformer.SpatialTransformer(
        convnet=convnet,
        fc_hyperparams=fc_hyperparams,
        localization_h=config.localization_h,
        localization_w=config.localization_w,
        output_h=config.output_h,
        output_w=config.output_w,
        margin_x=config.margin_x,
        margin_y=config.margin_y,
        num_control_points=config.num_control_points,
        init_bias_pattern=config.init_bias_pattern,
        activation=config.activation,
        summarize_activations=config.summarize_activations,
    )
