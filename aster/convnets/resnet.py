"""ASTER's residual encoder ("ResNet-45" in the paper, RESNET_50 in the config).

Layer by layer for a [B, 32, 100, C] input::

    stem      conv3x3 32                                  -> [B, 32, 100, 32]
    Block1    3 units,  32 ch, first stride (2, 2)         -> [B, 16,  50,  32]
    Block2    4 units,  64 ch, first stride (2, 2)         -> [B,  8,  25,  64]
    Block3    6 units, 128 ch, first stride (2, 1)         -> [B,  4,  25, 128]
    Block4    6 units, 256 ch, first stride (2, 1)         -> [B,  2,  25, 256]
    Block5    3 units, 512 ch, first stride (2, 1)         -> [B,  1,  25, 512]

A block's first unit is conv3x3 (strided) -> ReLU -> conv3x3, added to a strided conv3x3
projection of its input, then ReLU. Later units are conv1x1 -> ReLU -> conv3x3 added to the
identity, then ReLU.
Every conv carries the batch norm of the conv arg_scope (conv_hyperparams); the ReLUs are applied
here rather than by the scope so that the addition happens before the last activation.
"""

from aster.tf_setup import slim, tf

# Residual units per block for each ResNet.NetDepth of protos/convnet.proto.
UNIT_COUNTS = {
    "RESNET_30": (1, 2, 3, 3, 2),
    "RESNET_50": (3, 4, 6, 6, 3),
    "RESNET_100": (3, 4, 13, 13, 3),
}
DEFAULT_BLOCK_DEPTHS = (32, 64, 128, 256, 512)
BLOCK_STRIDES = ((2, 2), (2, 2), (2, 1), (2, 1), (2, 1))


class ResNet:
    """ASTER's ResNet; an image batch in, one feature map out."""

    def __init__(
        self,
        conv_hyperparams,
        unit_counts=UNIT_COUNTS["RESNET_50"],
        block_depths=DEFAULT_BLOCK_DEPTHS,
        summarize_activations=False,
    ):
        """Args:
        conv_hyperparams: slim arg_scope dict for conv2d (hyperparams_builder.build output).
        unit_counts: residual units in each of the 5 blocks.
        block_depths: output channels of each of the 5 blocks; the stem has block_depths[0].
        summarize_activations: add a histogram summary of every block output.

        Raises:
          ValueError: unit_counts or block_depths are not 5 positive ints.
        """
        for name, values in (("unit_counts", unit_counts), ("block_depths", block_depths)):
            if len(values) != 5 or any(int(v) <= 0 for v in values):
                raise ValueError(f"{name} must be 5 positive ints, got {list(values)}")
        self._conv_hyperparams = conv_hyperparams
        self._unit_counts = tuple(int(v) for v in unit_counts)
        self._block_depths = tuple(int(v) for v in block_depths)
        self._summarize_activations = summarize_activations

    def extract_features(self, inputs, scope=None):
        """Runs the network.

        Args:
          inputs: [B, H, W, C] float32 (the paper feeds 32 x 100 rectified images in [-1, 1]).
          scope: variable scope name, default "ResNet".

        Returns:
          [B, H/32, ceil(W/4), block_depths[4]] float32, the feature map.
        """
        with tf.variable_scope(scope, "ResNet", [inputs]):
            with slim.arg_scope(self._conv_hyperparams):
                net = slim.conv2d(inputs, self._block_depths[0], [3, 3], scope="Conv0")
                blocks = zip(self._unit_counts, self._block_depths, BLOCK_STRIDES, strict=True)
                for i, (units, depth, stride) in enumerate(blocks):
                    net = _residual_block(net, depth, units, stride, f"Block{i + 1}")
                    if self._summarize_activations:
                        tf.summary.histogram(f"Block{i + 1}", net)
        return net


def _residual_block(inputs, depth, num_units, first_stride, scope):
    with tf.variable_scope(scope, "Block", [inputs]):
        net = _residual_unit(inputs, depth, first_stride, "Unit1")
        for i in range(1, num_units):
            net = _residual_unit(net, depth, None, f"Unit{i + 1}")
    return net


def _residual_unit(inputs, depth, stride, scope):
    """One unit; `stride` None means the identity-shortcut unit (conv1x1 + conv3x3)."""
    with tf.variable_scope(scope, "Unit", [inputs]):
        with slim.arg_scope([slim.conv2d], activation_fn=None):
            if stride is None:
                net = slim.conv2d(inputs, depth, [1, 1], scope="Conv1")
                shortcut = inputs
            else:
                net = slim.conv2d(inputs, depth, [3, 3], stride=stride, scope="Conv1")
                shortcut = slim.conv2d(inputs, depth, [3, 3], stride=stride, scope="Shortcut")
            net = slim.conv2d(tf.nn.relu(net), depth, [3, 3], scope="Conv2")
        return tf.nn.relu(net + shortcut)
