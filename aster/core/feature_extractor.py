"""The encoder: a convnet followed by stacked bidirectional RNN layers.

    images [B, H, W, C] in [-1, 1]              (paper: rectified [B, 32, 100, 3])
      -> convnet.extract_features -> maps [B, 1, W', C']   (ResNet-45: [B, 1, 25, 512])
      -> squeeze the height -> sequences [B, W', C']
      -> bidirectional RNN layers in order -> [B, T = W', D]  (paper: [B, 25, 256])

One sequence per convnet branch; every branch goes through the same stack of layer objects, in
its own variable scope (Branch<i>) when there is more than one branch.
"""

from aster.tf_setup import tf


class FeatureExtractor:
    """Convnet + stacked bidirectional RNNs; tensors in, list of sequences out."""

    def __init__(self, convnet, brnn_layers=(), summarize_activations=False):
        """Args:
        convnet: object with extract_features(inputs, scope=None) -> list of [B, 1, W', C] maps.
        brnn_layers: bidirectional_rnn.BidirectionalRnn objects, applied in order.
        summarize_activations: add histogram summaries of the convnet maps and the sequences.
        """
        self._convnet = convnet
        self._brnn_layers = list(brnn_layers)
        self._summarize_activations = summarize_activations

    def extract(self, images, scope=None):
        """Encodes images into feature sequences.

        Args:
          images: [B, H, W, C] float32 in [-1, 1].
          scope: variable scope name, default "FeatureExtractor".

        Returns:
          A list (one entry per convnet branch) of [B, T, D] float32 sequences.

        Raises:
          ValueError: a convnet output map's height is not 1 (the message names the input size).
        """
        with tf.variable_scope(scope, "FeatureExtractor", [images]):
            maps = self._convnet.extract_features(images)
            sequences = []
            if len(maps) == 1:
                return [self._encode(maps[0], images)]
            for i, feature_map in enumerate(maps):
                with tf.variable_scope(f"Branch{i}"):
                    sequences.append(self._encode(feature_map, images))
        return sequences

    def _encode(self, feature_map, images):
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
