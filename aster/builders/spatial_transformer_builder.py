"""Builds the TPS spatial transformer from a SpatialTransformer message."""

from aster.builders import convnet_builder, hyperparams_builder
from aster.core import spatial_transformer
from aster.protos import hyperparams_pb2, spatial_transformer_pb2


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
      ValueError: wrong message type, missing convnet, fc_hyperparams whose op is not FC, or a
        field out of range (the message names the field).
    """
    if not isinstance(config, spatial_transformer_pb2.SpatialTransformer):
        raise ValueError(
            f"{field_path}: expected a SpatialTransformer message, got {type(config).__name__}"
        )
    if not config.HasField("convnet"):
        raise ValueError(f"{field_path}.convnet: the localization convnet is required")
    convnet = convnet_builder.build(config.convnet, is_training, f"{field_path}.convnet")
    if config.fc_hyperparams.op != hyperparams_pb2.Hyperparams.FC:
        op = hyperparams_pb2.Hyperparams.Op.Name(config.fc_hyperparams.op)
        raise ValueError(
            f"{field_path}.fc_hyperparams.op: must be FC (fc_hyperparams {{ op: FC }}), got {op}"
        )
    fc_hyperparams = hyperparams_builder.build(
        config.fc_hyperparams, is_training, f"{field_path}.fc_hyperparams"
    )
    try:
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
    except ValueError as error:
        # The core names its arguments after the proto fields ("margin_x: must be ...").
        raise ValueError(f"{field_path}.{error}") from error
