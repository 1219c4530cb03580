"""Builds the encoder (convnet + bidirectional RNNs) from a FeatureExtractor message."""

from aster.builders import bidirectional_rnn_builder, convnet_builder
from aster.core import feature_extractor
from aster.protos import feature_extractor_pb2
from aster.utils import config_checks


def build(config, is_training, field_path="feature_extractor"):
    """Returns a feature_extractor.FeatureExtractor.

    Its `extract(images [B, H, W, C], scope=None)` returns one [B, T, D] float32 sequence.

    Args:
      config: feature_extractor_pb2.FeatureExtractor.
      is_training: Python bool, for batch norm.
      field_path: the message's path in the pipeline config, for error messages.

    Raises:
      ValueError: wrong message type, missing convnet, or an error in a sub-message (named by its
        path, e.g. feature_extractor.bidirectional_rnn[1].fc_hyperparams).
    """
    if not isinstance(config, feature_extractor_pb2.FeatureExtractor):
        raise ValueError(
            f"{field_path}: expected a FeatureExtractor message, got {type(config).__name__}"
        )
    config_checks.check(config, field_path)
    convnet = convnet_builder.build(config.convnet, is_training, f"{field_path}.convnet")
    layers = [
        bidirectional_rnn_builder.build(
            layer_config, is_training, f"{field_path}.bidirectional_rnn[{i}]"
        )
        for i, layer_config in enumerate(config.bidirectional_rnn)
    ]
    return feature_extractor.FeatureExtractor(
        convnet, layers, summarize_activations=config.summarize_activations
    )
