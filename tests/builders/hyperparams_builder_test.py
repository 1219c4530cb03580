import numpy as np
import pytest
from google.protobuf import text_format

from aster.builders import hyperparams_builder
from aster.protos import hyperparams_pb2
from aster.tf_setup import slim, tf


def _hyperparams(text):
    return text_format.Parse(text, hyperparams_pb2.Hyperparams())


def _kwargs(scope, op):
    return scope[slim.arg_scope_func_key(op)]


def _run(tensor):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(tensor)


def test_conv_scope_covers_conv_ops_only():
    scope = hyperparams_builder.build(_hyperparams("op: CONV"), is_training=True)
    for op in (slim.conv2d, slim.separable_conv2d, slim.conv2d_transpose):
        assert slim.arg_scope_func_key(op) in scope
    assert slim.arg_scope_func_key(slim.fully_connected) not in scope


def test_fc_scope_covers_fully_connected_only():
    scope = hyperparams_builder.build(_hyperparams("op: FC"), is_training=True)
    assert slim.arg_scope_func_key(slim.fully_connected) in scope
    assert slim.arg_scope_func_key(slim.conv2d) not in scope


def test_defaults_give_relu_no_regularizer_no_batch_norm_and_layer_initializer():
    kwargs = _kwargs(hyperparams_builder.build(_hyperparams(""), True), slim.conv2d)
    assert kwargs == {
        "weights_regularizer": None,
        "activation_fn": tf.nn.relu,
        "normalizer_fn": None,
        "normalizer_params": None,
    }


@pytest.mark.parametrize("name,fn", [("NONE", None), ("RELU", tf.nn.relu), ("RELU_6", tf.nn.relu6)])
def test_activation_translates(name, fn):
    kwargs = _kwargs(
        hyperparams_builder.build(_hyperparams(f"activation: {name}"), True), slim.conv2d
    )
    assert kwargs["activation_fn"] is fn


def test_batch_norm_params_translate_exactly():
    config = _hyperparams(
        "batch_norm { decay: 0.9 center: false scale: true epsilon: 0.01 train: true }"
    )
    kwargs = _kwargs(hyperparams_builder.build(config, is_training=True), slim.conv2d)
    assert kwargs["normalizer_fn"] is slim.batch_norm
    assert kwargs["normalizer_params"] == {
        "decay": pytest.approx(0.9),
        "center": False,
        "scale": True,
        "epsilon": pytest.approx(0.01),
        "fused": True,
        "data_format": "NHWC",
        "is_training": True,
        "updates_collections": [tf.GraphKeys.UPDATE_OPS],
    }


@pytest.mark.parametrize(
    "is_training,train,expected",
    [(True, True, True), (True, False, False), (False, True, False), (False, False, False)],
)
def test_batch_norm_is_training_needs_both_flags(is_training, train, expected):
    config = _hyperparams(f"batch_norm {{ train: {str(train).lower()} }}")
    params = _kwargs(hyperparams_builder.build(config, is_training), slim.conv2d)[
        "normalizer_params"
    ]
    assert params["is_training"] is expected


def test_batch_norm_layer_adds_update_ops_and_no_bias():
    config = _hyperparams("batch_norm { decay: 0.9 }")
    with tf.Graph().as_default():
        with slim.arg_scope(hyperparams_builder.build(config, is_training=True)):
            slim.conv2d(tf.zeros([2, 4, 4, 3]), 5, [3, 3], scope="conv")
        names = sorted(v.op.name for v in tf.global_variables())
        assert names == [
            "conv/BatchNorm/beta",
            "conv/BatchNorm/moving_mean",
            "conv/BatchNorm/moving_variance",
            "conv/weights",
        ]
        assert len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)) == 2


def test_fc_batch_norm_works_on_rank_two_inputs():
    config = _hyperparams("op: FC batch_norm { scale: true }")
    with tf.Graph().as_default():
        with slim.arg_scope(hyperparams_builder.build(config, is_training=True)):
            out = slim.fully_connected(tf.random_normal([8, 6]) * 5.0 + 3.0, 4)
        value = _run(out)
    assert value.shape == (8, 4) and np.all(value >= 0)
    # Training-mode BN + ReLU: about half the units are zero, the rest are O(1).
    assert np.abs(value).max() < 5.0


def test_l2_regularizer_adds_weight_times_half_squared_sum():
    config = _hyperparams(
        "regularizer { l2_regularizer { weight: 0.5 } } "
        "initializer { uniform_initializer { minval: 1.0 maxval: 1.0001 } }"
    )
    with tf.Graph().as_default():
        with slim.arg_scope(hyperparams_builder.build(config, is_training=True)):
            slim.conv2d(tf.zeros([1, 4, 4, 2]), 3, [1, 1])
        losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
        assert len(losses) == 1
        # 6 weights close to 1: 0.5 * 6 / 2 = 1.5.
        assert _run(losses[0]) == pytest.approx(1.5, rel=1e-3)


def test_l1_regularizer_adds_weight_times_abs_sum():
    reg = hyperparams_builder.build_regularizer(
        text_format.Parse("l1_regularizer { weight: 0.25 }", hyperparams_pb2.Regularizer())
    )
    with tf.Graph().as_default():
        assert _run(reg(tf.constant([1.0, -2.0, 3.0]))) == pytest.approx(1.5)


@pytest.mark.parametrize("name", ["l1_regularizer", "l2_regularizer"])
def test_zero_weight_regularizer_adds_nothing(name):
    config = _hyperparams(f"regularizer {{ {name} {{ weight: 0 }} }}")
    assert hyperparams_builder.build_regularizer(config.regularizer) is None
    with tf.Graph().as_default():
        with slim.arg_scope(hyperparams_builder.build(config, is_training=True)):
            slim.conv2d(tf.zeros([1, 4, 4, 2]), 3, [1, 1])
        assert tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES) == []


def test_negative_regularizer_weight_raises_with_field_path():
    config = _hyperparams("regularizer { l2_regularizer { weight: -1 } }")
    with pytest.raises(ValueError, match=r"hyperparams\.regularizer\.l2_regularizer\.weight.*-1"):
        hyperparams_builder.build(config, True)


def test_empty_regularizer_oneof_raises():
    with pytest.raises(ValueError, match="regularizer: regularizer_oneof is not set"):
        hyperparams_builder.build_regularizer(hyperparams_pb2.Regularizer())


def test_empty_initializer_oneof_raises():
    with pytest.raises(ValueError, match="initializer: initializer_oneof is not set"):
        hyperparams_builder.build_initializer(hyperparams_pb2.Initializer())


def test_empty_oneof_inside_hyperparams_raises_with_path():
    config = _hyperparams("initializer { }")
    with pytest.raises(ValueError, match=r"hyperparams\.initializer: initializer_oneof is not set"):
        hyperparams_builder.build(config, True)


def _init_values(text, shape):
    init = hyperparams_builder.build_initializer(
        text_format.Parse(text, hyperparams_pb2.Initializer())
    )
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        var = tf.get_variable("v", shape, initializer=init)
        return _run(var)


def test_truncated_normal_initializer_translates():
    values = _init_values("truncated_normal_initializer { mean: 3 stddev: 0.5 }", [4000])
    assert abs(values.mean() - 3.0) < 0.05
    assert values.min() >= 2.0 and values.max() <= 4.0  # truncated at two stddevs


def test_truncated_normal_nonpositive_stddev_raises():
    with pytest.raises(ValueError, match="stddev: must be > 0"):
        _init_values("truncated_normal_initializer { stddev: 0 }", [2])


@pytest.mark.parametrize("mode,fan", [("FAN_IN", 100), ("FAN_OUT", 400), ("FAN_AVG", 250)])
def test_variance_scaling_initializer_translates_mode(mode, fan):
    values = _init_values(
        f"variance_scaling_initializer {{ factor: 2.0 mode: {mode} uniform: true }}", [100, 400]
    )
    # uniform: limit = sqrt(3 * factor / fan)
    limit = np.sqrt(3.0 * 2.0 / fan)
    assert values.max() <= limit and values.max() > 0.9 * limit
    assert np.var(values) == pytest.approx(2.0 / fan, rel=0.1)


def test_orthogonal_initializer_translates_gain():
    values = _init_values("orthogonal_initializer { gain: 2.0 seed: 3 }", [16, 16])
    np.testing.assert_allclose(values.T @ values, 4.0 * np.eye(16), atol=1e-4)


def test_uniform_initializer_translates():
    values = _init_values("uniform_initializer { minval: 2 maxval: 3 }", [1000])
    assert values.min() >= 2.0 and values.max() < 3.0


def test_uniform_initializer_empty_range_raises():
    with pytest.raises(ValueError, match=r"uniform_initializer\.minval: 1.0 must be below maxval 1.0"):
        _init_values("uniform_initializer { minval: 1 maxval: 1 }", [2])


def test_wrong_message_type_raises():
    with pytest.raises(ValueError, match="expected a Hyperparams message"):
        hyperparams_builder.build(hyperparams_pb2.BatchNorm(), True)
