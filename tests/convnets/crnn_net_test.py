import numpy as np

from aster.convnets import crnn_net
from aster.tf_setup import tf


def test_crnn_net_maps_32xw_to_height_one_and_quarter_width():
    with tf.Graph().as_default():
        out = crnn_net.CrnnNet({}).extract_features(tf.zeros([2, 32, 100, 3]))
        assert out.shape.as_list() == [2, 1, 25, 512]
        weights = sorted(v.op.name for v in tf.trainable_variables() if "weights" in v.op.name)
        assert weights == [f"CrnnNet/conv{i}/weights" for i in range(1, 8)]
        assert tf.trainable_variables("CrnnNet/conv7")[0].shape.as_list() == [2, 1, 512, 512]


def test_tiny_crnn_net_halves_channels_and_runs():
    with tf.Graph().as_default():
        out = crnn_net.CrnnNet({}, tiny=True).extract_features(tf.random_uniform([1, 32, 64, 1]))
        depths = [v.shape.as_list()[-1] for v in tf.trainable_variables() if "weights" in v.op.name]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            value = sess.run(out)
    assert depths == [32, 64, 128, 128, 256, 256, 256]
    assert value.shape == (1, 1, 16, 256) and np.all(np.isfinite(value))


def test_summary_added_when_asked():
    with tf.Graph().as_default():
        crnn_net.CrnnNet({}, tiny=True, summarize_activations=True).extract_features(
            tf.zeros([1, 32, 8, 1])
        )
        assert len(tf.get_collection(tf.GraphKeys.SUMMARIES)) == 1
