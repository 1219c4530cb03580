import numpy as np
import pytest

from aster.convnets import resnet
from aster.tf_setup import slim, tf


def _conv_scope():
    with slim.arg_scope(
        [slim.conv2d],
        normalizer_fn=slim.batch_norm,
        normalizer_params={"is_training": True, "updates_collections": [tf.GraphKeys.UPDATE_OPS]},
    ) as scope:
        return scope


def _weights(prefix="", graph=None):
    graph = graph or tf.get_default_graph()
    return {
        v.op.name: v.shape.as_list()
        for v in graph.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES)
        if v.op.name.endswith("weights") and v.op.name.startswith(prefix)
    }


@pytest.fixture(scope="module")
def paper_graph():
    """The paper ResNet built once (building it takes seconds); tests only inspect it."""
    graph = tf.Graph()
    with graph.as_default():
        out = resnet.ResNet(_conv_scope()).extract_features(tf.zeros([3, 32, 100, 3]))
    return graph, out


def test_paper_resnet_maps_32x100_to_1x25x512(paper_graph):
    assert paper_graph[1].shape.as_list() == [3, 1, 25, 512]


def test_paper_resnet_has_45_main_path_convs_and_5_projection_shortcuts(paper_graph):
    weights = _weights(graph=paper_graph[0])
    shortcuts = [n for n in weights if n.endswith("Shortcut/weights")]
    assert len(weights) - len(shortcuts) == 45
    assert len(shortcuts) == 5
    units = {n.split("/")[1]: 0 for n in weights if "/Block" in n}
    for name in weights:
        if "/Block" in name and name.endswith("Conv2/weights"):
            units[name.split("/")[1]] += 1
    assert units == {"Block1": 3, "Block2": 4, "Block3": 6, "Block4": 6, "Block5": 3}


def test_unit_layout_matches_spec(paper_graph):
    graph = paper_graph[0]
    weights = _weights("ResNet/Block3", graph)
    # First unit: strided conv3x3 + conv3x3 with a strided conv3x3 projection shortcut.
    assert weights["ResNet/Block3/Unit1/Conv1/weights"] == [3, 3, 64, 128]
    assert weights["ResNet/Block3/Unit1/Shortcut/weights"] == [3, 3, 64, 128]
    assert weights["ResNet/Block3/Unit1/Conv2/weights"] == [3, 3, 128, 128]
    for name in ("Conv1", "Shortcut"):
        conv = graph.get_operation_by_name(f"ResNet/Block3/Unit1/{name}/Conv2D")
        assert list(conv.get_attr("strides")) == [1, 2, 1, 1]
    # Later units: conv1x1 + conv3x3, identity shortcut (no variables).
    assert weights["ResNet/Block3/Unit2/Conv1/weights"] == [1, 1, 128, 128]
    assert weights["ResNet/Block3/Unit2/Conv2/weights"] == [3, 3, 128, 128]
    assert "ResNet/Block3/Unit2/Shortcut/weights" not in weights


def test_paper_resnet_parameter_count_matches_layer_arithmetic(paper_graph):
    # Each conv has weights and a BN beta (no bias, no gamma with the default scale: false).
    def conv(kernel, c_in, c_out):
        return kernel * kernel * c_in * c_out + c_out

    expected = conv(3, 3, 32)
    c_in = 32
    for units, depth in zip((3, 4, 6, 6, 3), (32, 64, 128, 256, 512), strict=True):
        expected += conv(3, c_in, depth) + conv(3, depth, depth) + conv(3, c_in, depth)
        expected += (units - 1) * (conv(1, depth, depth) + conv(3, depth, depth))
        c_in = depth
    variables = paper_graph[0].get_collection(tf.GraphKeys.TRAINABLE_VARIABLES)
    count = sum(np.prod(v.shape.as_list()) for v in variables)
    assert count == expected
    assert 15e6 < count < 17e6


@pytest.mark.parametrize(
    "depth,units", [("RESNET_30", (1, 2, 3, 3, 2)), ("RESNET_100", (3, 4, 13, 13, 3))]
)
def test_other_depths_keep_output_shape(depth, units):
    assert resnet.UNIT_COUNTS[depth] == units
    with tf.Graph().as_default():
        net = resnet.ResNet({}, resnet.UNIT_COUNTS[depth], (4, 4, 8, 8, 16))
        out = net.extract_features(tf.zeros([2, 32, 100, 3]))
        assert out.shape.as_list() == [2, 1, 25, 16]
        convs = [n for n in _weights() if not n.endswith("Shortcut/weights")]
        assert len(convs) == 1 + 2 * sum(units)


def test_narrow_resnet_runs_and_is_finite():
    with tf.Graph().as_default():
        net = resnet.ResNet(_conv_scope(), resnet.UNIT_COUNTS["RESNET_30"], (4, 4, 8, 8, 8))
        out = net.extract_features(tf.random_uniform([2, 32, 64, 3], -1, 1))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            value = sess.run(out)
    assert value.shape == (2, 1, 16, 8) and np.all(np.isfinite(value)) and np.all(value >= 0)


def test_summaries_are_added_per_block_when_asked():
    with tf.Graph().as_default():
        net = resnet.ResNet(_conv_scope(), (1, 1, 1, 1, 1), (2, 2, 2, 2, 2), True)
        net.extract_features(tf.zeros([1, 32, 32, 1]))
        assert len(tf.get_collection(tf.GraphKeys.SUMMARIES)) == 5


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(unit_counts=(1, 2, 3)), r"unit_counts must be 5 positive ints, got \[1, 2, 3\]"),
        (dict(block_depths=(8, 8, 0, 8, 8)), "block_depths must be 5 positive ints"),
    ],
)
def test_bad_shapes_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        resnet.ResNet({}, **kwargs)
