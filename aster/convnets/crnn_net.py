"""CRNN's VGG-style convnet (Shi, Bai and Yao, TPAMI 2017).

For a [B, 32, W, C] input (channels halved when tiny)::

    conv1 3x3  64, maxpool 2x2 stride 2       -> [B, 16, W/2,  64]
    conv2 3x3 128, maxpool 2x2 stride 2       -> [B,  8, W/4, 128]
    conv3 3x3 256, conv4 3x3 256,
      maxpool 2x1 stride (2, 1)               -> [B,  4, W/4, 256]
    conv5 3x3 512, conv6 3x3 512,
      maxpool 2x1 stride (2, 1)               -> [B,  2, W/4, 512]
    conv7 2x1 512 (VALID)                     -> [B,  1, W/4, 512]

The two height-only poolings are CRNN's "1x2 rectangular windows": they keep the horizontal
resolution so the sequence has W/4 steps. Every conv uses the conv arg_scope's batch norm and
activation (CRNN itself used batch norm after conv5 and conv6 only).
"""

from aster.tf_setup import slim, tf

_LAYERS = (
    ("conv1", 64, (2, 2)),
    ("conv2", 128, (2, 2)),
    ("conv3", 256, None),
    ("conv4", 256, (2, 1)),
    ("conv5", 512, None),
    ("conv6", 512, (2, 1)),
)


class CrnnNet:
    """CRNN's convnet; an image batch in, one feature map out."""

    def __init__(self, conv_hyperparams, tiny=False, summarize_activations=False):
        """Args:
        conv_hyperparams: slim arg_scope dict for conv2d (hyperparams_builder.build output).
        tiny: halve every layer's channel count.
        summarize_activations: add a histogram summary of the output.
        """
        self._conv_hyperparams = conv_hyperparams
        self._divisor = 2 if tiny else 1
        self._summarize_activations = summarize_activations

    def extract_features(self, inputs, scope=None):
        """Runs the network.

        Args:
          inputs: [B, 32, W, C] float32.
          scope: variable scope name, default "CrnnNet".

        Returns:
          [B, 1, ceil(W/4), 512 (256 when tiny)] float32, the feature map.
        """
        with tf.variable_scope(scope, "CrnnNet", [inputs]):
            with slim.arg_scope(self._conv_hyperparams):
                net = inputs
                for name, depth, pool in _LAYERS:
                    net = slim.conv2d(net, depth // self._divisor, [3, 3], scope=name)
                    if pool is not None:
                        net = slim.max_pool2d(
                            net, list(pool), stride=pool, padding="SAME", scope=f"pool{name[-1]}"
                        )
                net = slim.conv2d(net, 512 // self._divisor, [2, 1], padding="VALID", scope="conv7")
            if self._summarize_activations:
                tf.summary.histogram("CrnnNet", net)
        return net
