"""Localization convnet of ASTER's spatial transformer.

Full, for the paper's 32 x 64 localization input::

    conv1 3x3  32, maxpool 2x2 -> [B, 16, 32,  32]
    conv2 3x3  64, maxpool 2x2 -> [B,  8, 16,  64]
    conv3 3x3 128, maxpool 2x2 -> [B,  4,  8, 128]
    conv4 3x3 256, maxpool 2x2 -> [B,  2,  4, 256]
    conv5 3x3 256, maxpool 2x2 -> [B,  1,  2, 256]
    conv6 3x3 256              -> [B,  1,  2, 256]   (flattened by the transformer: 512)

Tiny: conv 16, 32, 64, 64 with a 2x2 max pool after the first three (16 x 32 -> [B, 2, 4, 64]).
Each conv uses the conv arg_scope (batch norm, ReLU in the paper config).
"""

from aster.tf_setup import slim, tf

FULL_DEPTHS = (32, 64, 128, 256, 256, 256)
TINY_DEPTHS = (16, 32, 64, 64)


class StnConvnet:
    """Plain conv/pool stack; an image batch in, one feature map out."""

    def __init__(self, conv_hyperparams, tiny=False, summarize_activations=False):
        """Args:
        conv_hyperparams: slim arg_scope dict for conv2d (hyperparams_builder.build output).
        tiny: use the 4-layer narrow variant.
        summarize_activations: add a histogram summary of the output.
        """
        self._conv_hyperparams = conv_hyperparams
        self._depths = TINY_DEPTHS if tiny else FULL_DEPTHS
        self._summarize_activations = summarize_activations

    def extract_features(self, inputs, scope=None):
        """Runs the network.

        Args:
          inputs: [B, h, w, C] float32 (the downsampled image).
          scope: variable scope name, default "StnConvnet".

        Returns:
          [B, h / 2^n, w / 2^n, depth] float32, the feature map (n = 5 full, 3 tiny; SAME
          padding rounds up).
        """
        with tf.variable_scope(scope, "StnConvnet", [inputs]):
            with slim.arg_scope(self._conv_hyperparams):
                net = inputs
                last = len(self._depths) - 1
                for i, depth in enumerate(self._depths):
                    net = slim.conv2d(net, depth, [3, 3], scope=f"conv{i + 1}")
                    if i < last:
                        net = slim.max_pool2d(
                            net, [2, 2], stride=2, padding="SAME", scope=f"pool{i + 1}"
                        )
            if self._summarize_activations:
                tf.summary.histogram("StnConvnet", net)
        return net
