"""The tf-slim / TF 2.21 bridge: fails loudly if a future TensorFlow breaks it."""

import numpy as np

from aster.tf_setup import slim, tf


def test_eager_is_disabled():
    assert not tf.executing_eagerly()


def test_slim_conv_batch_norm_fc_build_and_train():
    with tf.Graph().as_default():
        images = tf.random.uniform([4, 8, 8, 3])
        with slim.arg_scope(
            [slim.conv2d, slim.fully_connected],
            normalizer_fn=slim.batch_norm,
            normalizer_params={"is_training": True, "decay": 0.9},
        ):
            net = slim.conv2d(images, 4, [3, 3], scope="conv")
            net = slim.flatten(net)
            net = slim.fully_connected(net, 2, scope="fc")
        loss = tf.reduce_mean(tf.square(net))
        update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        assert update_ops, "batch norm added no moving-average updates to UPDATE_OPS"
        grads = tf.gradients(loss, tf.trainable_variables())
        assert all(g is not None for g in grads)
        moving_mean = [v for v in tf.global_variables() if "conv/BatchNorm/moving_mean" in v.name]
        assert moving_mean
        with tf.control_dependencies(update_ops):
            train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            before = sess.run(moving_mean[0])
            sess.run(train_op)
            after = sess.run(moving_mean[0])
        assert not np.allclose(before, after), "moving mean did not update"


def test_slim_clip_and_multiply_gradients_and_local_variable():
    with tf.Graph().as_default():
        w = tf.Variable(1.0, name="w")
        loss = tf.square(w * 10.0)
        train_op = slim.learning.create_train_op(
            loss, tf.train.GradientDescentOptimizer(0.1), clip_gradient_norm=1.0,
            gradient_multipliers={w: 0.5},
        )
        local = slim.local_variable(0.0, name="counter")
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            sess.run(train_op)
            # slim multiplies first (200 * 0.5), then clips to norm 1; lr 0.1 => w = 1 - 0.1
            np.testing.assert_allclose(sess.run(w), 0.9, rtol=1e-5)
            assert sess.run(local) == 0.0


def test_v1_lstm_cell_in_bidirectional_rnn_takes_gradients():
    with tf.Graph().as_default():
        inputs = tf.random.normal([2, 5, 3])
        fw = tf.nn.rnn_cell.LSTMCell(4)
        bw = tf.nn.rnn_cell.LSTMCell(4)
        (out_fw, out_bw), _ = tf.nn.bidirectional_dynamic_rnn(fw, bw, inputs, dtype=tf.float32)
        outputs = tf.concat([out_fw, out_bw], axis=2)
        assert outputs.shape.as_list() == [2, 5, 8]
        grads = tf.gradients(tf.reduce_sum(outputs), tf.trainable_variables())
        assert len(grads) == 4 and all(g is not None for g in grads)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            values = sess.run(grads)
        assert all(np.isfinite(v).all() for v in values)


def _onednn_enabled_in_fresh_process(env_value):
    """IsMklEnabled() of a new interpreter that imports aster.tf_setup; env_value None = unset."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "TF_ENABLE_ONEDNN_OPTS"}
    if env_value is not None:
        env["TF_ENABLE_ONEDNN_OPTS"] = env_value
    code = ("import aster.tf_setup\n"
            "from tensorflow.python.util import _pywrap_util_port as port\n"
            "print(port.IsMklEnabled())\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120, check=True)
    return out.stdout.strip().splitlines()[-1]


def test_onednn_kernels_are_on_by_default_and_can_be_turned_off():
    # TensorFlow's own default leaves them off on CPUs without AVX-512 VNNI/BF16 or AMX, where
    # Eigen's convolution gradients are ~3x slower (aster/__init__.py).
    assert _onednn_enabled_in_fresh_process(None) == "True"
    assert _onednn_enabled_in_fresh_process("0") == "False"
