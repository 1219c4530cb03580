"""Thin-plate-spline (TPS) rectification network, ASTER section 3.1.

Data flow (paper config)::

    images [B, 64, 256, C] in [-1, 1]
      -> bilinear downsample to [B, localization_h, localization_w, C]      (32 x 64)
      -> localization convnet -> flatten (512) -> FC 512 (fc_hyperparams: BN, ReLU)
      -> x 0.1 -> FC 2K (zero weights, bias = initial control points) [-> sigmoid]
      -> control points C' [B, K, 2], normalised (x, y) in [0, 1] of the input image
      -> TPS grid: output pixel centres -> input coordinates              [B, oh, ow, 2]
      -> bilinear sampling of the full-resolution input -> [B, output_h, output_w, C]

Coordinates: (x, y) normalised so that (0, 0) is the top-left corner of the top-left pixel and
(1, 1) the bottom-right corner of the bottom-right pixel; pixel (i, j) has its centre at
((j + 0.5) / W, (i + 0.5) / H).

TPS: the target control points C are fixed on the rectified image (the identity pattern with the
margins); the network predicts where they lie in the input (C'). The spline T with kernel
U(r) = r^2 log r maps C exactly onto C'; since C is fixed, the inverse of the (K+3) x (K+3) TPS
system is computed once in numpy and the whole grid is one [N, K] matrix applied to C'
(N = output_h * output_w), so gradients reach the control points through a matmul.

Precision: the last FC, the grid and the sampling coordinates are computed in float64 (the
control points are handed out, and passed on, as float32). bfloat16 mixed precision
(session_options) rewrites float32 ops only; with them in bfloat16 (8 mantissa bits) the sampling
points moved by up to a pixel, so the images the recognizer trained on differed from the float32
ones it is evaluated on.
"""

import numpy as np

from aster.core import tps_options
from aster.tf_setup import slim, tf

# Initial points are clipped to [eps, 1 - eps] before the logit when the activation is sigmoid.
_SIGMOID_EPS = 1e-3


def init_control_points(num_control_points, pattern="identity", margin_x=0.0, margin_y=0.0):
    """Returns the initial control points, half on the top edge and half on the bottom edge.

    identity: top y = margin_y, bottom y = 1 - margin_y. slope: top y from margin_y to 0.3,
    bottom from 0.7 to 1 - margin_y. sine: top y = 0.25 + 0.2 sin(2 pi x), bottom
    y = 0.75 + 0.2 sin(2 pi x).
    In every pattern x runs evenly from margin_x to 1 - margin_x.

    Returns:
      [K, 2] float64 numpy array of normalised (x, y); the first K/2 rows are the top edge.

    Raises:
      ValueError: unknown pattern or an odd / too small num_control_points.
    """
    _check_num_control_points(num_control_points)
    half = num_control_points // 2
    x = np.linspace(margin_x, 1.0 - margin_x, half)
    if pattern == "identity":
        top_y, bottom_y = np.full(half, margin_y), np.full(half, 1.0 - margin_y)
    elif pattern == "slope":
        top_y = np.linspace(margin_y, 0.3, half)
        bottom_y = np.linspace(0.7, 1.0 - margin_y, half)
    elif pattern == "sine":
        top_y = 0.25 + 0.2 * np.sin(2.0 * np.pi * x)
        bottom_y = 0.75 + 0.2 * np.sin(2.0 * np.pi * x)
    else:
        raise ValueError(
            f"init_bias_pattern: unknown pattern {pattern!r}; "
            f"expected one of {list(tps_options.INIT_PATTERNS)}"
        )
    top = np.stack([x, top_y], axis=1)
    bottom = np.stack([x, bottom_y], axis=1)
    return np.concatenate([top, bottom], axis=0)


def _check_num_control_points(num_control_points):
    if num_control_points < 4 or num_control_points % 2:
        raise ValueError(
            f"num_control_points: must be an even number >= 4, got {num_control_points}"
        )


def tps_kernel(r):
    """U(r) = r^2 log r with U(0) = 0, elementwise on a numpy array."""
    r = np.asarray(r, dtype=np.float64)
    safe = np.where(r > 0, r, 1.0)
    return np.where(r > 0, r * r * np.log(safe), 0.0)


def tps_grid_matrix(target_points, query_points):
    """Returns M [N, K] with T(query_points) = M @ source_points for the TPS taking the fixed
    target_points [K, 2] onto any source_points [K, 2].

    The TPS is T(p) = a0 + a1 x + a2 y + sum_k w_k U(|p - c_k|) per output coordinate, with
    T(c_k) = c'_k and sum w = sum w x = sum w y = 0; its (K+3) x (K+3) system is inverted here.
    """
    target = np.asarray(target_points, dtype=np.float64)
    query = np.asarray(query_points, dtype=np.float64)
    k = target.shape[0]
    system = np.zeros([k + 3, k + 3])
    system[:k, 0] = 1.0
    system[:k, 1:3] = target
    system[:k, 3:] = tps_kernel(np.linalg.norm(target[:, None] - target[None], axis=-1))
    system[k, 3:] = 1.0
    system[k + 1 :, 3:] = target.T
    inverse = np.linalg.inv(system)
    basis = np.concatenate(
        [
            np.ones([query.shape[0], 1]),
            query,
            tps_kernel(np.linalg.norm(query[:, None] - target[None], axis=-1)),
        ],
        axis=1,
    )
    # The right-hand side is [C'; 0_{3x2}], so only the first K columns of the inverse matter.
    return basis @ inverse[:, :k]


def pixel_centre_grid(height, width):
    """[height * width, 2] normalised (x, y) of the pixel centres, row-major."""
    ys, xs = np.meshgrid(
        (np.arange(height) + 0.5) / height, (np.arange(width) + 0.5) / width, indexing="ij"
    )
    return np.stack([xs.ravel(), ys.ravel()], axis=1)


def bilinear_sample(images, grid):
    """Samples images at normalised points with bilinear interpolation (edge pixels replicate).

    Gradients flow to both the images and the grid.

    Args:
      images: [B, H, W, C] float tensor (C static).
      grid: [B, h, w, 2] float tensor (float64 for exact points), normalised (x, y) (see module
        docstring).

    Returns:
      [B, h, w, C] tensor of images.dtype.
    """
    with tf.name_scope("bilinear_sample"):
        shape = tf.shape(images)
        batch, height, width = shape[0], shape[1], shape[2]
        x = grid[..., 0] * tf.cast(width, grid.dtype) - 0.5
        y = grid[..., 1] * tf.cast(height, grid.dtype) - 0.5
        x0, y0 = tf.floor(x), tf.floor(y)
        wx1, wy1 = x - x0, y - y0
        wx0, wy0 = 1.0 - wx1, 1.0 - wy1
        x0i, y0i = tf.cast(x0, tf.int32), tf.cast(y0, tf.int32)
        cols = [tf.clip_by_value(v, 0, width - 1) for v in (x0i, x0i + 1)]
        rows = [tf.clip_by_value(v, 0, height - 1) for v in (y0i, y0i + 1)]
        flat = tf.reshape(images, [-1, images.shape[-1]])
        base = tf.reshape(tf.range(batch) * height * width, [-1, 1, 1])
        out = 0.0
        for row, wy in zip(rows, (wy0, wy1), strict=True):
            for col, wx in zip(cols, (wx0, wx1), strict=True):
                pixels = tf.gather(flat, base + row * width + col)
                out += tf.expand_dims(tf.cast(wy * wx, images.dtype), -1) * pixels
        return out


class SpatialTransformer:
    """TPS rectification; see the module docstring for the data flow."""

    def __init__(
        self,
        convnet,
        fc_hyperparams,
        localization_h=64,
        localization_w=128,
        output_h=32,
        output_w=100,
        margin_x=0.1,
        margin_y=0.1,
        num_control_points=20,
        init_bias_pattern="identity",
        activation="none",
        summarize_activations=False,
    ):
        """Args mirror protos/spatial_transformer.proto; convnet has extract_features(inputs)
        and fc_hyperparams is a slim arg_scope dict for fully_connected.

        Raises:
          ValueError: a size is not positive, a margin is outside [0, 0.5), num_control_points is
            odd or below 4, or init_bias_pattern / activation is unknown.
        """
        sizes = dict(
            localization_h=localization_h,
            localization_w=localization_w,
            output_h=output_h,
            output_w=output_w,
        )
        for name, value in sizes.items():
            if value <= 0:
                raise ValueError(f"{name}: must be > 0, got {value}")
        for name, value in (("margin_x", margin_x), ("margin_y", margin_y)):
            if not 0.0 <= value < 0.5:
                raise ValueError(f"{name}: must be in [0, 0.5), got {value}")
        if activation not in tps_options.ACTIVATIONS:
            raise ValueError(
                f"activation: unknown activation {activation!r}; "
                f"expected one of {list(tps_options.ACTIVATIONS)}"
            )
        self._convnet = convnet
        self._fc_hyperparams = fc_hyperparams
        self._localization_size = (localization_h, localization_w)
        self._output_size = (output_h, output_w)
        self._num_control_points = num_control_points
        self._activation = activation
        self._summarize_activations = summarize_activations
        points = init_control_points(num_control_points, init_bias_pattern, margin_x, margin_y)
        if activation == "sigmoid":
            points = np.clip(points, _SIGMOID_EPS, 1.0 - _SIGMOID_EPS)
            self._init_bias = np.log(points / (1.0 - points)).ravel()
        else:
            self._init_bias = points.ravel()
        self._init_control_points = points
        target = init_control_points(num_control_points, "identity", margin_x, margin_y)
        self._target_control_points = target
        self._grid_matrix = tps_grid_matrix(target, pixel_centre_grid(output_h, output_w))

    @property
    def init_control_points(self):
        """[K, 2] numpy float64: the control points predicted at initialisation."""
        return self._init_control_points

    @property
    def target_control_points(self):
        """[K, 2] numpy float64: where the control points lie on the rectified image."""
        return self._target_control_points

    def batch_transform(self, images, scope=None, control_points=None):
        """Rectifies a batch.

        Args:
          images: [B, H, W, C] float32 in [-1, 1], any static or dynamic H, W.
          scope: variable scope name, default "SpatialTransformer".
          control_points: optional [B, K, 2] (or [K, 2], broadcast over the batch) normalised
            (x, y) in the input image. When given, the localization network is skipped (no
            variable is created or read) and the images are sampled with these points;
            target_control_points gives the identity rectification (a plain bilinear resize
            to the output size).

        Returns:
          dict with "rectified_images" [B, output_h, output_w, C] float32 and "control_points"
          [B, K, 2] float32 normalised (x, y) in the input image (the given ones, if any).

        Raises:
          ValueError: control_points with a static shape other than [B, K, 2] / [K, 2].
        """
        with tf.variable_scope(scope, "SpatialTransformer", [images]):
            if control_points is None:
                control_points = self._localize(images)
            else:
                control_points = self._given_control_points(images, control_points)
            grid = self.grid_from_control_points(control_points)
            rectified = bilinear_sample(images, grid)
            if self._summarize_activations:
                tf.summary.histogram("control_points", control_points)
        return {"rectified_images": rectified, "control_points": control_points}

    def _given_control_points(self, images, control_points):
        """Checks and batches control points handed to batch_transform: -> [B, K, 2] float32."""
        points = tf.convert_to_tensor(control_points)
        k = self._num_control_points
        rank = points.shape.rank
        if rank not in (2, 3) or any(
                d is not None and d != want
                for d, want in zip(points.shape[-2:].as_list(), (k, 2), strict=True)):
            raise ValueError(f"control_points: expected shape [B, {k}, 2] or [{k}, 2], got "
                             f"{points.shape}")
        points = tf.cast(points, tf.float32)
        if rank == 2:
            points = tf.tile(points[None], [tf.shape(images)[0], 1, 1])
        return points

    def grid_from_control_points(self, control_points):
        """Maps the output pixel centres into the input: [B, K, 2] -> [B, output_h, output_w, 2]."""
        matrix = tf.constant(self._grid_matrix, dtype=tf.float64)
        grid = tf.einsum("nk,bkd->bnd", matrix, tf.cast(control_points, tf.float64))
        return tf.reshape(grid, [-1, self._output_size[0], self._output_size[1], 2])

    def _localize(self, images):
        """[B, H, W, C] -> control points [B, K, 2]."""
        with tf.variable_scope("LocalizationNet"):
            # The TF2 resize: bilinear with half-pixel centres (the v1 op is deprecated).
            small = tf.compat.v2.image.resize(images, self._localization_size, method="bilinear")
            feature_map = self._convnet.extract_features(small)
            flat = tf.reshape(feature_map, [-1, int(np.prod(feature_map.shape[1:]))])
            with slim.arg_scope(self._fc_hyperparams):
                fc1 = slim.fully_connected(flat, 512, scope="fc1")
                # Creates fc2's variables (and their regularizer); its float32 output is not used.
                slim.fully_connected(
                    0.1 * fc1,
                    2 * self._num_control_points,
                    activation_fn=None,
                    normalizer_fn=None,
                    weights_initializer=tf.zeros_initializer(),
                    biases_initializer=tf.constant_initializer(self._init_bias),
                    scope="fc2",
                )
            with tf.variable_scope("fc2", reuse=True):
                weights, biases = tf.get_variable("weights"), tf.get_variable("biases")
            # fc2 in float64 as one matmul of [0.1 * fc1, 1] and [weights; biases]: a float64
            # MatMul followed by a bias add is a fusion TensorFlow's oneDNN graph rewrite
            # examines and declines, logging "Not handling type DT_DOUBLE" twice per graph
            # optimisation (every aster-train and aster-eval run printed them).
            inputs = tf.cast(0.1 * fc1, tf.float64)
            inputs = tf.concat([inputs, tf.ones_like(inputs[:, :1])], axis=1)
            fc2 = tf.matmul(inputs, tf.concat(
                [tf.cast(weights, tf.float64), tf.cast(biases, tf.float64)[None]], axis=0))
            if self._activation == "sigmoid":
                fc2 = tf.sigmoid(fc2)
            return tf.cast(tf.reshape(fc2, [-1, self._num_control_points, 2]), tf.float32)
