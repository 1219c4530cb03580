import numpy as np
import pytest

from aster.core import conv_gradients
from aster.tf_setup import tf


@pytest.mark.parametrize("size, kernel, taps", [
    (1, 3, [1]),        # one row: the middle row of a 3x3 kernel only
    (2, 3, [0, 1, 2]),
    (25, 3, [0, 1, 2]),
    (1, 1, [0]),
    (1, 5, [2]),
    (2, 5, [1, 2, 3]),
])
def test_used_taps_of_same_padding(size, kernel, taps):
    before, _, outputs = conv_gradients.same_padding(size, kernel, 1)
    assert conv_gradients.used_taps(size, kernel, before, outputs) == taps


def _gradients(shape, kernel_shape, products, strides=1, padding="SAME", dilations=1, seed=0):
    """(dx, dW, op types of the gradient graph) of sum(sin(conv2d(x, w))) in float32."""
    rng = np.random.RandomState(seed)
    with tf.Graph().as_default() as graph:
        x = tf.constant(rng.randn(*shape).astype(np.float32))
        w = tf.constant(rng.randn(*kernel_shape).astype(np.float32))
        with conv_gradients.filter_gradients_as_products(products):
            y = tf.nn.conv2d(x, w, strides, padding, dilations=dilations)
        grads = tf.gradients(tf.reduce_sum(tf.sin(y)), [x, w])
        types = {op.type for op in graph.get_operations() if op.name.startswith("gradients")}
        with tf.Session() as sess:
            return (*sess.run(grads), types)


@pytest.mark.parametrize("shape, kernel_shape, padding", [
    ([2, 1, 9, 8], [3, 3, 8, 6], "SAME"),     # ASTER's last block: one row
    ([2, 7, 1, 8], [3, 3, 8, 6], "SAME"),     # one column
    ([2, 4, 9, 8], [1, 1, 8, 6], "SAME"),     # 1x1
    ([2, 4, 9, 8], [1, 1, 8, 6], "VALID"),
    ([2, 1, 9, 8], [1, 3, 8, 6], "VALID"),
])
def test_products_give_tensorflows_gradients(shape, kernel_shape, padding):
    dx, dw, types = _gradients(shape, kernel_shape, products=True, padding=padding)
    ref_dx, ref_dw, ref_types = _gradients(shape, kernel_shape, products=False, padding=padding)
    np.testing.assert_allclose(dx, ref_dx, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dw, ref_dw, rtol=1e-4, atol=1e-4)
    assert "Conv2DBackpropFilter" in ref_types and "Conv2DBackpropFilter" not in types
    assert "MatMul" in types and "Conv2DBackpropInput" in types


@pytest.mark.parametrize("shape, kernel_shape, kwargs", [
    ([2, 4, 9, 8], [3, 3, 8, 6], {}),                        # 9 used taps: more than 3
    ([2, 1, 9, 8], [1, 1, 8, 6], {"strides": 2}),            # strided
    ([2, 1, 9, 8], [3, 3, 8, 6], {"dilations": 2}),          # dilated
    ([2, 1, 9, 8], [3, 3, 8, 6], {"padding": [[0, 0], [1, 1], [1, 1], [0, 0]]}),  # explicit
])
def test_other_convolutions_keep_conv2d_backprop_filter(shape, kernel_shape, kwargs):
    dx, dw, types = _gradients(shape, kernel_shape, products=True, **kwargs)
    ref_dx, ref_dw, _ = _gradients(shape, kernel_shape, products=False, **kwargs)
    np.testing.assert_allclose(dx, ref_dx, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dw, ref_dw, rtol=1e-5, atol=1e-5)
    assert "Conv2DBackpropFilter" in types and "MatMul" not in types


def test_products_keep_the_sizes_unknown_when_built_as_tensorflow():
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [None, None, None, 4])
        with conv_gradients.filter_gradients_as_products():
            y = tf.nn.conv2d(x, tf.ones([1, 1, 4, 2]), 1, "SAME")
        tf.gradients(tf.reduce_sum(y), [x])
        types = {op.type for op in graph.get_operations()}
    assert "Conv2DBackpropFilter" in types and "MatMul" not in types


def test_only_convolutions_built_inside_get_the_products():
    with tf.Graph().as_default() as graph:
        x = tf.ones([1, 1, 5, 4])
        with conv_gradients.filter_gradients_as_products():
            inside = tf.nn.conv2d(x, tf.ones([1, 1, 4, 2]), 1, "SAME")
        outside = tf.nn.conv2d(x, tf.ones([1, 1, 4, 2]), 1, "SAME")
        tf.gradients(tf.reduce_sum(inside) + tf.reduce_sum(outside), [x])
        types = [op.type for op in graph.get_operations() if op.name.startswith("gradients")]
    assert types.count("Conv2DBackpropFilter") == 1 and types.count("MatMul") == 1


def test_bfloat16_products_are_close_to_the_float32_gradient():
    """With the inputs in bfloat16 (as the mixed-precision pass gives them) the products stay
    within bfloat16 rounding of the float32 gradient."""
    rng = np.random.RandomState(3)
    x = rng.randn(4, 1, 25, 32).astype(np.float32)
    w = rng.randn(3, 3, 32, 16).astype(np.float32)
    with tf.Graph().as_default():
        xb, wb = tf.cast(x, tf.bfloat16), tf.cast(w, tf.bfloat16)
        with conv_gradients.filter_gradients_as_products():
            y = tf.nn.conv2d(xb, wb, 1, "SAME")
        (dw,) = tf.gradients(tf.reduce_sum(tf.cast(y, tf.float32)), [wb])
        with tf.Session() as sess:
            bf16 = sess.run(tf.cast(dw, tf.float32))
    # d sum(y) / dW[1, j] = sum over positions of the input shifted by tap j (float32 numpy).
    ones = np.ones([4, 1, 25, 16], np.float32)
    padded = np.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]])
    expected = np.stack([padded[:, 1, j:j + 25, :].reshape(-1, 32).T @ ones.reshape(-1, 16)
                         for j in range(3)])
    np.testing.assert_allclose(bf16[1], expected, rtol=2e-2, atol=0.5)
    assert not bf16[0].any() and not bf16[2].any()
