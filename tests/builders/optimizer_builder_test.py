import numpy as np
import pytest
from google.protobuf import text_format

from aster.builders import optimizer_builder
from aster.protos import optimizer_pb2
from aster.tf_setup import tf
from aster.utils import optimizers


def _config(text):
    return text_format.Parse(text, optimizer_pb2.Optimizer())


def _build(text):
    global_step = tf.train.get_or_create_global_step()
    return optimizer_builder.build(_config(text), global_step)


def _lr(text):
    config = text_format.Parse(text, optimizer_pb2.LearningRate())
    return optimizer_builder.build_learning_rate(config, tf.train.get_or_create_global_step())


def _eval(tensor, step=0):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(tf.train.get_global_step(), step))
        return sess.run(tensor)


CONSTANT = "learning_rate { constant_learning_rate { learning_rate: 0.25 } }"


@pytest.mark.parametrize("text,cls,attrs", [
    (f"rms_prop_optimizer {{ {CONSTANT} momentum_optimizer_value: 0.8 decay: 0.7 epsilon: 0.5 }}",
     tf.train.RMSPropOptimizer, {"_momentum": 0.8, "_decay": 0.7, "_epsilon": 0.5}),
    (f"momentum_optimizer {{ {CONSTANT} momentum_optimizer_value: 0.6 }}",
     tf.train.MomentumOptimizer, {"_momentum": 0.6}),
    (f"adam_optimizer {{ {CONSTANT} }}", tf.train.AdamOptimizer, {}),
    (f"nadam_optimizer {{ {CONSTANT} }}", optimizers.NadamOptimizer, {}),
    (f"adadelta_optimizer {{ {CONSTANT} rho: 0.5 }}", tf.train.AdadeltaOptimizer, {"_rho": 0.5}),
    (f"adamw_optimizer {{ {CONSTANT} weight_decay: 0.1 beta1: 0.8 }}", optimizers.AdamWOptimizer,
     {"_weight_decay": 0.1, "_beta1": 0.8}),
])
def test_build_translates_each_optimizer(text, cls, attrs):
    with tf.Graph().as_default():
        optimizer = _build(text + " use_moving_average: false")
        assert type(optimizer) is cls
        for name, value in attrs.items():
            assert getattr(optimizer, name) == pytest.approx(value)
        rate = getattr(optimizer, "_learning_rate", getattr(optimizer, "_lr", None))
        assert _eval(rate) == pytest.approx(0.25)


def test_use_moving_average_defaults_to_true_and_wraps():
    with tf.Graph().as_default():
        optimizer = _build(f"adam_optimizer {{ {CONSTANT} }} moving_average_decay: 0.5")
        assert isinstance(optimizer, optimizers.MovingAverageOptimizer)
        assert isinstance(optimizer.wrapped, tf.train.AdamOptimizer)
        assert optimizer.ema._decay == pytest.approx(0.5)


def test_bad_moving_average_decay_raises():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="moving_average_decay"):
        _build(f"adam_optimizer {{ {CONSTANT} }} moving_average_decay: 1.0")


def test_empty_optimizer_oneof_raises():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="train_config.optimizer: optimizer is not set"):
        _build("use_moving_average: false")


def test_empty_learning_rate_oneof_raises():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="learning_rate: (is not set|learning_rate is not set)"):
        _build("adam_optimizer { }")


def test_learning_rate_schedules_translate():
    with tf.Graph().as_default():
        exp = _lr("exponential_decay_learning_rate { initial_learning_rate: 1.0 decay_steps: 10 "
                  "decay_factor: 0.5 }")
        manual = _lr("manual_step_learning_rate { initial_learning_rate: 1.0 "
                     "schedule { step: 5 learning_rate: 0.1 } schedule { step: 8 learning_rate: 0.01 } }")
        cosine = _lr("cosine_decay_learning_rate { learning_rate_base: 1.0 total_steps: 20 "
                     "warmup_steps: 10 warmup_learning_rate: 0.0 }")
        const = _lr("constant_learning_rate { learning_rate: 0.3 }")
        values = _eval([exp, manual, cosine, const], step=5)
        np.testing.assert_allclose(values, [1.0, 0.1, 0.5, 0.3], rtol=1e-6)
        tags = _eval([t.op.inputs[0] for t in tf.get_collection(tf.GraphKeys.SUMMARIES)])
        assert len(tags) == 4 and all(t.startswith(b"LearningRate") for t in tags)


def test_manual_step_without_schedule_raises():
    with tf.Graph().as_default(), pytest.raises(ValueError, match=r"manual_step_learning_rate\.schedule: is empty"):
        _lr("manual_step_learning_rate { initial_learning_rate: 1.0 }")


def test_manual_step_decreasing_steps_raises():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="strictly increasing"):
        _lr("manual_step_learning_rate { schedule { step: 5 } schedule { step: 3 } }")


def _one_step(optimizer, names=("layer/weights", "layer/biases")):
    """One update of variables initialised to 1 with gradient 0.5; returns their new values."""
    variables = [tf.get_variable(n, [2], initializer=tf.ones_initializer()) for n in names]
    train_op = optimizer.apply_gradients([(tf.fill([2], 0.5), v) for v in variables])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op)
        return sess.run(variables)


def test_adamw_decays_kernels_only():
    with tf.Graph().as_default():
        adam = _one_step(tf.train.AdamOptimizer(0.1))
    with tf.Graph().as_default():
        adamw = _one_step(optimizers.AdamWOptimizer(0.1, weight_decay=0.5))
    # weights: 1 - lr * wd * 1 on top of the Adam step; biases: plain Adam.
    np.testing.assert_allclose(adamw[0], adam[0] - 0.05, rtol=1e-6)
    np.testing.assert_allclose(adamw[1], adam[1], rtol=1e-6)


def test_adamw_rejects_negative_decay():
    with pytest.raises(ValueError, match="weight_decay"):
        optimizers.AdamWOptimizer(0.1, weight_decay=-1.0)


def test_nadam_step_matches_formula():
    lr, b1, b2, eps, g = 0.1, 0.9, 0.999, 1e-8, 0.5
    with tf.Graph().as_default():
        values = _one_step(optimizers.NadamOptimizer(lr), names=("w",))
    m, v = (1 - b1) * g, (1 - b2) * g * g
    lr_t = lr * np.sqrt(1 - b2) / (1 - b1)
    expected = 1.0 - lr_t * (b1 * m + (1 - b1) * g) / (np.sqrt(v) + eps)
    np.testing.assert_allclose(values[0], [expected] * 2, rtol=1e-5)


def test_nadam_sparse_gradient_matches_dense():
    with tf.Graph().as_default():
        var = tf.get_variable("emb", [3, 2], initializer=tf.ones_initializer())
        grad = tf.IndexedSlices(tf.fill([1, 2], 0.5), tf.constant([1]), tf.constant([3, 2]))
        train_op = optimizers.NadamOptimizer(0.1).apply_gradients([(grad, var)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train_op)
            sparse_result = sess.run(var)
    with tf.Graph().as_default():
        dense = _one_step(optimizers.NadamOptimizer(0.1), names=("w",))[0]
    np.testing.assert_allclose(sparse_result[1], dense, rtol=1e-6)
    np.testing.assert_array_equal(sparse_result[0], [1.0, 1.0])


def test_moving_average_is_saved_and_restorable_for_eval(tmp_path):
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        var = tf.get_variable("w", [1], initializer=tf.zeros_initializer())
        optimizer = optimizer_builder.build(_config(
            "momentum_optimizer { learning_rate { constant_learning_rate { learning_rate: 1.0 } }"
            " momentum_optimizer_value: 0.0 } moving_average_decay: 0.5"), step)
        train_op = optimizer.apply_gradients([(tf.constant([-1.0]), var)], global_step=step)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train_op)
            raw, shadow = sess.run([var, optimizer.ema.average(var)])
            path = tf.train.Saver().save(sess, str(tmp_path / "model.ckpt"))
    assert raw[0] == pytest.approx(3.0) and 0.0 < shadow[0] < 3.0
    with tf.Graph().as_default():
        var = tf.get_variable("w", [1])
        restore_map = tf.train.ExponentialMovingAverage(0.5).variables_to_restore()
        with tf.Session() as sess:
            tf.train.Saver(restore_map).restore(sess, path)
            np.testing.assert_allclose(sess.run(var), shadow)


@pytest.mark.parametrize("text, end", [
    ("adam_optimizer { learning_rate { cosine_decay_learning_rate { total_steps: 700 } } }", 700),
    ("adam_optimizer { learning_rate { constant_learning_rate { learning_rate: 0.1 } } }", None),
    ("momentum_optimizer { learning_rate { exponential_decay_learning_rate { } } }", None),
    ("", None),
])
def test_decay_end_step_is_the_cosine_total_steps_only(text, end):
    config = text_format.Parse(text, optimizer_pb2.Optimizer())
    assert optimizer_builder.decay_end_step(config) == end
