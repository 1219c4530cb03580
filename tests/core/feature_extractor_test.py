import numpy as np
import pytest

from aster.core import feature_extractor
from aster.tf_setup import tf


class _PoolConvnet:
    """Stand-in convnet: average-pools height by `factor` and width by 4."""

    def __init__(self, factor):
        self._factor = factor

    def extract_features(self, inputs, scope=None):
        return tf.nn.avg_pool2d(inputs, [self._factor, 4], [self._factor, 4], "VALID")


class _Dense:
    """Stand-in RNN layer: a per-step linear map, recording the scope it ran in."""

    def __init__(self, units):
        self.units, self.scopes = units, []

    def apply(self, inputs, scope=None):
        with tf.variable_scope(scope, "Dense"):
            self.scopes.append(tf.get_variable_scope().name)
            weights = tf.get_variable("w", [inputs.shape[-1], self.units])
            return tf.einsum("btd,du->btu", inputs, weights)


def test_height_one_map_becomes_sequence_through_layers_in_order():
    first, second = _Dense(5), _Dense(7)
    with tf.Graph().as_default():
        extractor = feature_extractor.FeatureExtractor(_PoolConvnet(8), [first, second])
        sequence = extractor.extract(tf.zeros([2, 8, 40, 3]))
        assert sequence.shape.as_list() == [2, 10, 7]
    assert first.scopes == ["FeatureExtractor/BidirectionalRnn0"]
    assert second.scopes == ["FeatureExtractor/BidirectionalRnn1"]


def test_without_rnn_layers_the_sequence_is_the_squeezed_map_in_the_given_scope():
    layer = _Dense(2)
    with tf.Graph().as_default():
        images = tf.constant(np.arange(16, dtype=np.float32).reshape([1, 2, 8, 1]))
        bare = feature_extractor.FeatureExtractor(_PoolConvnet(2)).extract(images)
        encoded = feature_extractor.FeatureExtractor(_PoolConvnet(2), [layer]).extract(
            images, scope="Enc")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            bare_np = sess.run(bare)
        assert encoded.shape.as_list() == [1, 2, 2]
    # the mean of each 2 x 4 window of 0..15 (rows 0..7 and 8..15)
    np.testing.assert_allclose(bare_np, [[[5.5], [9.5]]])
    assert layer.scopes == ["Enc/BidirectionalRnn0"]


def test_summaries_added_when_asked():
    with tf.Graph().as_default():
        extractor = feature_extractor.FeatureExtractor(_PoolConvnet(2), [], True)
        extractor.extract(tf.zeros([1, 2, 8, 1]))
        assert len(tf.get_collection(tf.GraphKeys.SUMMARIES)) == 1


def test_map_taller_than_one_raises_naming_input_size():
    with tf.Graph().as_default():
        extractor = feature_extractor.FeatureExtractor(_PoolConvnet(8))
        with pytest.raises(ValueError, match=r"the 64x100 input into a map of height 8"):
            extractor.extract(tf.zeros([1, 64, 100, 3]))
