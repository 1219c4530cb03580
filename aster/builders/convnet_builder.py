"""Builds a convnet (CrnnNet, ResNet or StnConvnet) from a Convnet message.

Every convnet object has `extract_features(inputs, scope=None) -> [B, h, w, C]`, one feature
map.
"""

from aster.builders import hyperparams_builder
from aster.convnets import crnn_net, resnet, stn_convnet
from aster.protos import convnet_pb2
from aster.utils import config_checks


def _conv_scope(config, is_training, field_path):
    """arg_scope of `config.conv_hyperparams` (defaults: CONV, ReLU, no batch norm)."""
    return hyperparams_builder.build(config.conv_hyperparams, is_training,
                                     f"{field_path}.conv_hyperparams")


def _build_crnn_net(config, is_training, field_path):
    return crnn_net.CrnnNet(
        conv_hyperparams=_conv_scope(config, is_training, field_path),
        tiny=config.tiny,
        summarize_activations=config.summarize_activations,
    )


def _build_resnet(config, is_training, field_path):
    depth_name = convnet_pb2.ResNet.NetDepth.Name(config.net_depth)
    block_depths = tuple(config.block_depths) or resnet.DEFAULT_BLOCK_DEPTHS
    return resnet.ResNet(
        conv_hyperparams=_conv_scope(config, is_training, field_path),
        unit_counts=resnet.UNIT_COUNTS[depth_name],
        block_depths=block_depths,
        summarize_activations=config.summarize_activations,
    )


def _build_stn_convnet(config, is_training, field_path):
    return stn_convnet.StnConvnet(
        conv_hyperparams=_conv_scope(config, is_training, field_path),
        tiny=config.tiny,
        summarize_activations=config.summarize_activations,
    )


_BUILDERS = {
    "crnn_net": _build_crnn_net,
    "resnet": _build_resnet,
    "stn_convnet": _build_stn_convnet,
}


def build(config, is_training, field_path="convnet"):
    """Returns the convnet object of a Convnet message.

    Args:
      config: convnet_pb2.Convnet.
      is_training: Python bool, passed to the batch norm of conv_hyperparams.
      field_path: the message's path in the pipeline config, for error messages.

    Returns:
      crnn_net.CrnnNet, resnet.ResNet or stn_convnet.StnConvnet.

    Raises:
      ValueError: wrong message type; ConfigError (a ValueError) for a config that breaks a rule
        of aster.utils.config_checks (the message names the field).
    """
    if not isinstance(config, convnet_pb2.Convnet):
        raise ValueError(f"{field_path}: expected a Convnet message, got {type(config).__name__}")
    config_checks.check(config, field_path)
    name = config.WhichOneof("convnet_oneof")
    return _BUILDERS[name](getattr(config, name), is_training, f"{field_path}.{name}")
