"""The encoder: a convnet followed by stacked bidirectional RNN layers.

    images [B, H, W, C] in [-1, 1]              (paper: rectified [B, 32, 100, 3])
      -> convnet.extract_features -> map [B, 1, W', C']   (ResNet-45: [B, 1, 25, 512])
      -> squeeze the height -> sequence [B, W', C']
      -> bidirectional RNN layers in order -> [B, T = W', D]  (paper: [B, 25, 256])
"""

from aster.tf_setup import tf


class FeatureExtractor:
    """Convnet + stacked bidirectional RNNs; an image batch in, one feature sequence out."""

    def __init__(self, convnet, brnn_layers=(), summarize_activations=False):
        """Args:
        convnet: object with extract_features(inputs, scope=None) -> [B, 1, W', C] map.
        brnn_layers: bidirectional_rnn.BidirectionalRnn objects, applied in order.
        summarize_activations: add a histogram summary of the convnet map.
        """
        self._convnet = convnet
        self._brnn_layers = list(brnn_layers)
        self._summarize_activations = summarize_activations

    def extract(self, images, scope=None):
        """Encodes images into a feature sequence.

        Args:
          images: [B, H, W, C] float32 in [-1, 1].
          scope: variable scope name, default "FeatureExtractor".

        Returns:
          [B, T, D] float32, T the convnet map's width.

        Raises:
          ValueError: the convnet output map's height is not 1 (the message names the input size).
        """
        with tf.variable_scope(scope, "FeatureExtractor", [images]):
            feature_map = self._convnet.extract_features(images)
            height = feature_map.shape[1]
            if height != 1:
                size = "x".join(str(d) for d in images.shape.as_list()[1:3])
                raise ValueError(
                    f"feature_extractor: the convnet turns the {size} input into a map of height "
                    f"{height} (shape {feature_map.shape.as_list()}); it must be 1. Feed images "
                    f"32 pixels high (e.g. the spatial transformer's output_h: 32)."
                )
            if self._summarize_activations:
                tf.summary.histogram("convnet_map", feature_map)
            sequence = tf.squeeze(feature_map, axis=1)
            for i, layer in enumerate(self._brnn_layers):
                sequence = layer.apply(sequence, scope=f"BidirectionalRnn{i}")
        return sequence
