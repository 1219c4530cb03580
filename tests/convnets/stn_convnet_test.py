from aster.convnets import stn_convnet
from aster.tf_setup import tf


def test_full_stn_convnet_flattens_to_512_on_32x64():
    with tf.Graph().as_default():
        out = stn_convnet.StnConvnet({}).extract_features(tf.zeros([2, 32, 64, 3]))
        assert out.shape.as_list() == [2, 1, 2, 256]
        depths = [v.shape.as_list()[-1] for v in tf.trainable_variables() if "weights" in v.op.name]
        kernels = {
            tuple(v.shape.as_list()[:2]) for v in tf.trainable_variables() if "weights" in v.op.name
        }
        pools = [op for op in tf.get_default_graph().get_operations() if op.type == "MaxPool"]
    assert depths == [32, 64, 128, 256, 256, 256]
    assert kernels == {(3, 3)}
    assert len(pools) == 5


def test_tiny_stn_convnet_has_four_layers():
    with tf.Graph().as_default():
        out = stn_convnet.StnConvnet({}, tiny=True).extract_features(tf.zeros([1, 16, 32, 3]))
        depths = [v.shape.as_list()[-1] for v in tf.trainable_variables() if "weights" in v.op.name]
        assert out.shape.as_list() == [1, 2, 4, 64]
    assert depths == [16, 32, 64, 64]


def test_summary_added_when_asked():
    with tf.Graph().as_default():
        stn_convnet.StnConvnet({}, tiny=True, summarize_activations=True).extract_features(
            tf.zeros([1, 8, 8, 1])
        )
        assert len(tf.get_collection(tf.GraphKeys.SUMMARIES)) == 1
