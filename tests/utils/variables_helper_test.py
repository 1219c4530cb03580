import logging

import numpy as np
import pytest

from aster.tf_setup import slim, tf
from aster.utils import variables_helper


def _grads_and_vars():
    """A tiny graph: conv weights/biases, bn beta/gamma, a 'bias_net' kernel; grads all 3s."""
    names = ["conv/weights", "conv/biases", "bn/beta", "bn/gamma", "bias_net/weights",
             "lstm/bias", "alphabeta/weights"]
    variables = [tf.get_variable(n, [2], initializer=tf.ones_initializer()) for n in names]
    return [(tf.fill([2], 3.0), v) for v in variables]


def _evaluate(grads_and_vars):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = sess.run([g for g, _ in grads_and_vars])
    return {v.op.name: g for (_, v), g in zip(grads_and_vars, values, strict=True)}


def test_filter_variables_matches_from_start_and_inverts():
    with tf.Graph().as_default():
        variables = [v for _, v in _grads_and_vars()]
        kept = variables_helper.filter_variables(variables, ["conv/", "bn/ga"])
        assert [v.op.name for v in kept] == ["conv/weights", "conv/biases", "bn/gamma"]
        rest = variables_helper.filter_variables(variables, ["conv/", "bn/ga"], invert=True)
        assert len(rest) == len(variables) - 3


def test_bias_multiplier_hits_only_biases_and_betas():
    with tf.Graph().as_default():
        values = _evaluate(variables_helper.multiply_bias_gradients(_grads_and_vars(), 2.0))
    scaled = {name for name, g in values.items() if np.allclose(g, 6.0)}
    assert scaled == {"conv/biases", "bn/beta", "lstm/bias"}
    assert all(np.allclose(g, 3.0) for name, g in values.items() if name not in scaled)


def test_regex_multiplier_scales_exactly():
    with tf.Graph().as_default():
        values = _evaluate(variables_helper.multiply_gradients_matching_regex(
            _grads_and_vars(), ["conv/"], 0.1))
    np.testing.assert_array_equal(values["conv/weights"], np.float32(3.0) * np.float32(0.1))
    np.testing.assert_array_equal(values["bn/beta"], [3.0, 3.0])


def test_multiply_gradients_handles_indexed_slices_and_none():
    with tf.Graph().as_default():
        var = tf.get_variable("emb", [3, 2])
        other = tf.get_variable("other", [1])
        grad = tf.IndexedSlices(tf.ones([1, 2]), tf.constant([1]), tf.constant([3, 2]))
        result = variables_helper.multiply_gradients([(grad, var), (None, other)],
                                                     {"emb": 4.0, other: 2.0})
        assert isinstance(result[0][0], tf.IndexedSlices) and result[1][0] is None
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(result[0][0].values), [[4.0, 4.0]])


def test_freeze_drops_matching_gradients():
    with tf.Graph().as_default():
        result = variables_helper.freeze_gradients_matching_regex(_grads_and_vars(), ["bn/", "conv"])
        assert [v.op.name for _, v in result] == ["bias_net/weights", "lstm/bias",
                                                   "alphabeta/weights"]


def test_frozen_variable_does_not_change_in_training():
    with tf.Graph().as_default():
        x = tf.constant(np.random.RandomState(0).randn(4, 3).astype(np.float32))
        # Linear layers: with a ReLU the random init can leave every hidden unit dead, and then
        # the head gets no gradient either.
        h = slim.fully_connected(x, 3, activation_fn=None, scope="encoder")
        out = slim.fully_connected(h, 1, activation_fn=None, scope="head")
        loss = tf.reduce_mean(tf.square(out - 1.0))
        optimizer = tf.train.GradientDescentOptimizer(0.1)
        grads_and_vars = variables_helper.freeze_gradients_matching_regex(
            optimizer.compute_gradients(loss), ["encoder/"])
        train_op = optimizer.apply_gradients(grads_and_vars)
        encoder = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "encoder")
        head = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "head")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            before = sess.run(encoder + head)
            for _ in range(3):
                sess.run(train_op)
            after = sess.run(encoder + head)
    for b, a in zip(before[:2], after[:2], strict=True):
        np.testing.assert_array_equal(b, a)
    assert not np.allclose(before[2], after[2])


def test_clip_gradient_norms_bounds_each_gradient():
    with tf.Graph().as_default():
        a, b = tf.get_variable("a", [2]), tf.get_variable("b", [2])
        sparse = tf.IndexedSlices(tf.constant([[30.0, 40.0]]), tf.constant([0]))
        c = tf.get_variable("c", [2, 2])
        clipped = variables_helper.clip_gradient_norms(
            [(tf.constant([3.0, 4.0]), a), (tf.constant([0.3, 0.4]), b), (sparse, c)], 1.0)
        with tf.Session() as sess:
            ga, gb, gc = sess.run([clipped[0][0], clipped[1][0], clipped[2][0].values])
    np.testing.assert_allclose(ga, [0.6, 0.8], rtol=1e-6)
    np.testing.assert_allclose(gb, [0.3, 0.4], rtol=1e-6)  # under the bound: unchanged
    np.testing.assert_allclose(np.linalg.norm(gc), 1.0, rtol=1e-6)


def test_clip_by_global_norm_bounds_the_global_norm():
    with tf.Graph().as_default():
        a, b, n = tf.get_variable("a", [2]), tf.get_variable("b", [1]), tf.get_variable("n", [1])
        clipped = variables_helper.clip_gradients_by_global_norm(
            [(tf.constant([3.0, 4.0]), a), (tf.constant([12.0]), b), (None, n)], 2.6)
        assert clipped[2][0] is None
        with tf.Session() as sess:
            ga, gb = sess.run([clipped[0][0], clipped[1][0]])
    np.testing.assert_allclose(np.sqrt(np.sum(ga ** 2) + np.sum(gb ** 2)), 2.6, rtol=1e-5)
    np.testing.assert_allclose(ga / gb[0], [3.0 / 12.0, 4.0 / 12.0], rtol=1e-5)  # direction kept


@pytest.mark.parametrize("fn", [variables_helper.clip_gradient_norms,
                                variables_helper.clip_gradients_by_global_norm])
def test_clipping_rejects_non_positive_norm(fn):
    with pytest.raises(ValueError, match="max_norm"):
        fn([], 0.0)


def _save_checkpoint(path):
    with tf.Graph().as_default():
        tf.get_variable("Model/conv/weights", [2, 2], initializer=tf.constant_initializer(7.0))
        tf.get_variable("Model/head/weights", [2, 3])
        tf.get_variable("Old/fc/biases", [3], initializer=tf.constant_initializer(5.0))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return tf.train.Saver().save(sess, str(path / "model.ckpt"), global_step=1)


def test_variables_available_in_checkpoint_map_skip_and_warn(tmp_path, caplog):
    _save_checkpoint(tmp_path)
    with tf.Graph().as_default():
        conv = tf.get_variable("Model/conv/weights", [2, 2])
        head = tf.get_variable("Model/head/weights", [2, 5])  # different shape
        new = tf.get_variable("Model/new/weights", [1])
        renamed = tf.get_variable("New/fc/biases", [3])
        skipped = tf.get_variable("Model/skip/weights", [1])
        with caplog.at_level(logging.WARNING):
            available = variables_helper.get_variables_available_in_checkpoint(
                [conv, head, new, renamed, skipped], str(tmp_path),
                name_map=[("New/", "Old/")], skip_regexes=["Model/skip"])
    assert available == {"Model/conv/weights": conv, "Old/fc/biases": renamed}
    assert "Model/head/weights has shape" in caplog.text
    assert "Model/new/weights not in checkpoint" in caplog.text
    assert "Model/skip" not in caplog.text


def test_variables_available_in_checkpoint_errors(tmp_path):
    with tf.Graph().as_default():
        var = tf.get_variable("v", [1])
        with pytest.raises(ValueError, match="no complete checkpoint in this folder"):
            variables_helper.get_variables_available_in_checkpoint([var], str(tmp_path))
        with pytest.raises(ValueError, match="no checkpoint, folder or shipped model"):
            variables_helper.get_variables_available_in_checkpoint(
                [var], str(tmp_path / "missing.ckpt"))
        for suffix in (".index", ".data-00000-of-00001"):  # complete, but not a checkpoint
            (tmp_path / f"model.ckpt-1{suffix}").write_bytes(b"not a checkpoint")
        with pytest.raises(ValueError, match="cannot read checkpoint"):
            variables_helper.get_variables_available_in_checkpoint([var], str(tmp_path))
