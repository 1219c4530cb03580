"""Convolution filter gradients as matrix products, for bfloat16 training on CPUs.

    with conv_gradients.filter_gradients_as_products(enabled):
        ...build the model...          # its Conv2D ops get this module's gradient

oneDNN's bfloat16 filter-gradient kernel (`brgconv_bwd_w` on AMX) runs at a third of the speed of
the forward convolution of the same shape, while its bfloat16 matrix products run near the AMX
peak. For a convolution whose kernel has few taps that see the input, the filter gradient is a
few products: for tap (i, j), dW[i, j] = X_ij^T . dY, where X_ij is the (padded) input shifted by
the tap, reshaped to [N * OH * OW, C_in], and dY the output gradient reshaped to
[N * OH * OW, C_out]. That is the case of every 1x1 convolution and of a 3x3 convolution on a
feature map one row high (ASTER's last ResNet block, whose top and bottom kernel rows see only
SAME padding: their gradient is zero). Measured on the paper config's shapes, bfloat16, AMX
(docs/history, "bfloat16 on AMX"): 3x3 on [64, 1, 25, 512] 19-20 ms -> 6-8 ms, 1x1 on
[64, 1, 25, 512] 11-12 -> 3 ms, 1x1 on [64, 4, 25, 128] 3.6 -> 1.7 ms; with more taps, or
strided, the products lose (the shifted copies cost more than the kernel), so those keep
TensorFlow's Conv2DBackpropFilter.

The input gradient is TensorFlow's own (Conv2DBackpropInput with the op's attributes). The math is
the same sum in another order. The trainer turns this on with train_config.mixed_precision on CPUs
that compute bfloat16 natively (in float32 oneDNN's filter-gradient kernel is as fast as the
products).
"""

import contextlib

from aster.tf_setup import tf

GRADIENT_NAME = "AsterConv2DFilterProducts"
MAX_PRODUCTS = 3
"""The most taps computed as products; a convolution with more keeps Conv2DBackpropFilter."""


def same_padding(size, kernel, stride):
    """(pad_before, pad_after, output size) of SAME padding along one axis."""
    outputs = -(-size // stride)
    total = max((outputs - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2, outputs


def used_taps(size, kernel, pad_before, outputs):
    """The taps along one axis (stride 1) that multiply the input for some output position."""
    return [k for k in range(kernel)
            if any(0 <= o + k - pad_before < size for o in range(outputs))]


def _static_dims(tensor):
    dims = tensor.shape.as_list()
    return dims if dims and None not in dims[1:] else None


def filter_gradient_products(inputs, grad, kernel_shape, padding):
    """dW of a stride-1, undilated NHWC convolution as one product per used tap, or None when
    the convolution has more than MAX_PRODUCTS used taps or sizes unknown when the graph is built.

    Args:
      inputs: [N, H, W, C_in] the convolution's input (static H, W, C_in).
      grad: [N, OH, OW, C_out] the gradient of its output.
      kernel_shape: [KH, KW, C_in, C_out] ints.
      padding: "SAME" or "VALID".

    Returns:
      [KH, KW, C_in, C_out] tensor or None.
    """
    dims = _static_dims(inputs)
    if dims is None or padding not in ("SAME", "VALID"):
        return None
    _, height, width, depth = dims
    kh, kw, _, out_depth = kernel_shape
    if padding == "SAME":
        top, bottom, out_h = same_padding(height, kh, 1)
        left, right, out_w = same_padding(width, kw, 1)
    else:
        top = bottom = left = right = 0
        out_h, out_w = height - kh + 1, width - kw + 1
    rows = used_taps(height, kh, top, out_h)
    cols = used_taps(width, kw, left, out_w)
    if len(rows) * len(cols) > MAX_PRODUCTS:
        return None
    padded = inputs
    if top or bottom or left or right:
        padded = tf.pad(inputs, [[0, 0], [top, bottom], [left, right], [0, 0]])
    flat_grad = tf.reshape(grad, [-1, out_depth])
    taps = []
    for i in range(kh):
        for j in range(kw):
            if i in rows and j in cols:
                shifted = padded
                if (kh, kw) != (1, 1) or padded is not inputs:
                    shifted = padded[:, i:i + out_h, j:j + out_w, :]
                taps.append(tf.matmul(tf.reshape(shifted, [-1, depth]), flat_grad,
                                      transpose_a=True))
            else:  # the tap multiplies padding only
                taps.append(tf.zeros([depth, out_depth], flat_grad.dtype))
    if len(taps) == 1:
        return tf.reshape(taps[0], kernel_shape)
    return tf.reshape(tf.stack(taps), kernel_shape)


@tf.RegisterGradient(GRADIENT_NAME)
def _conv2d_gradient(op, grad):
    """Conv2D's gradients: the input's as TensorFlow computes it, the filter's as products where
    filter_gradient_products applies (stride 1, no dilation, NHWC), else as TensorFlow does."""
    inputs, kernel = op.inputs
    attrs = {name: op.get_attr(name) for name in (
        "strides", "padding", "explicit_paddings", "use_cudnn_on_gpu", "data_format",
        "dilations")}
    input_grad = tf.raw_ops.Conv2DBackpropInput(
        input_sizes=tf.shape(inputs), filter=kernel, out_backprop=grad, **attrs)
    kernel_grad = None
    kernel_shape = kernel.shape.as_list()
    if (attrs["data_format"] == b"NHWC" and list(attrs["strides"]) == [1, 1, 1, 1]
            and list(attrs["dilations"]) == [1, 1, 1, 1] and None not in kernel_shape):
        kernel_grad = filter_gradient_products(inputs, grad, kernel_shape,
                                               attrs["padding"].decode())
    if kernel_grad is None:
        kernel_grad = tf.raw_ops.Conv2DBackpropFilter(
            input=inputs, filter_sizes=tf.shape(kernel), out_backprop=grad, **attrs)
    return input_grad, kernel_grad


@contextlib.contextmanager
def filter_gradients_as_products(enabled=True):
    """Within it, Conv2D ops created in the default graph get _conv2d_gradient (if enabled)."""
    if not enabled:
        yield
        return
    with tf.get_default_graph().gradient_override_map({"Conv2D": GRADIENT_NAME}):
        yield
