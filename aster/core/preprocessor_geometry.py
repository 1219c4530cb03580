"""Geometric preprocessing: resizing and scene-text warps (rotation, perspective, curve, crop/pad).

Images are [H, W, C] float32 in [0, 255]; keypoints are [2N] float32 (x, y) pairs normalised by the
width and height, or None. The warps keep the image size, move the keypoints with the content and
fill pixels that come from outside the source with the nearest edge pixel (no black borders).
Each warp returns (image, keypoints); random ops take an op-level `seed` (None: random).
"""

import math

from aster.core import preprocessor_common as common
from aster.tf_setup import tf

RESIZE_METHODS = ("bilinear", "nearest", "bicubic", "area")


def _check_size(name, height, width):
    if height <= 0 or width <= 0:
        raise ValueError(f"{name}: target size must be positive, got {height}x{width}")


def resize_image(image, target_height=512, target_width=512, method="bilinear", antialias=True):
    """Resizes to [target_height, target_width, C] (bicubic overshoot is clipped to [0, 255]).

    Args:
      image: [H, W, C] float32.
      target_height, target_width: output size in pixels.
      method: one of RESIZE_METHODS.
      antialias: when shrinking, widen the filter to the output pixel's footprint (averaging
        what a plain resize would sample and alias); no effect when enlarging ("nearest" ignores
        it).

    Raises:
      ValueError: unknown method or non-positive size.
    """
    _check_size("resize_image", target_height, target_width)
    if method not in RESIZE_METHODS:
        raise ValueError(
            f"resize_image: unknown method {method!r}; expected one of {RESIZE_METHODS}"
        )
    size = [target_height, target_width]
    out = tf.compat.v2.image.resize(tf.cast(image, tf.float32), size, method,
                                    antialias=antialias and method != "nearest")
    out = common.clip(out)
    out.set_shape([target_height, target_width, image.shape[-1]])
    return out


def resize_image_random_method(image, target_height=512, target_width=512, seed=None):
    """Resizes with a method drawn uniformly from bilinear, nearest, bicubic and area (each as
    tf.image.resize does it without antialiasing: the variety is the point of this step)."""
    _check_size("resize_image_random_method", target_height, target_width)
    index = common.uniform(0, len(RESIZE_METHODS), seed, dtype=tf.int32)
    branches = [
        (lambda m=m: resize_image(image, target_height, target_width, m, antialias=False))
        for m in RESIZE_METHODS
    ]
    out = tf.switch_case(index, branches)
    out.set_shape([target_height, target_width, image.shape[-1]])
    return out


def _pixel_size(image):
    shape = tf.shape(image)
    return tf.cast(shape[0], tf.float32), tf.cast(shape[1], tf.float32)


def _matrix(rows):
    """3x3 float32 matrix from nested lists of scalar tensors/floats."""
    return tf.stack([tf.stack([tf.cast(v, tf.float32) for v in row]) for row in rows])


def _apply_projective(image, keypoints, matrix):
    """Warps with `matrix` (3x3, maps output pixel centers to input pixel centers).

    Returns (image, keypoints) with the keypoints mapped input -> output.
    """
    flat = tf.reshape(matrix / matrix[2, 2], [-1])[:8]
    warped = tf.raw_ops.ImageProjectiveTransformV3(
        images=tf.expand_dims(image, 0),
        transforms=tf.expand_dims(flat, 0),
        output_shape=tf.shape(image)[:2],
        fill_value=0.0,
        interpolation="BILINEAR",
        fill_mode="NEAREST",
    )[0]
    warped.set_shape(image.shape)
    if keypoints is None:
        return warped, None
    height, width = _pixel_size(image)
    points = tf.reshape(keypoints, [-1, 2]) * tf.stack([width, height]) - 0.5
    homogeneous = tf.concat([points, tf.ones_like(points[:, :1])], axis=1)
    mapped = tf.matmul(homogeneous, tf.linalg.inv(matrix), transpose_b=True)
    mapped = mapped[:, :2] / mapped[:, 2:]
    out = (mapped + 0.5) / tf.stack([width, height])
    return warped, tf.reshape(out, tf.shape(keypoints))


def _warp(probability, seed, image, keypoints, matrix_fn):
    """Applies the projective warp built by matrix_fn(image) with the given probability."""

    def warp(inputs):
        image_in = inputs[0]
        points = inputs[1] if len(inputs) > 1 else None
        out_image, out_points = _apply_projective(image_in, points, matrix_fn(image_in))
        return (out_image,) if points is None else (out_image, out_points)

    inputs = (image,) if keypoints is None else (image, keypoints)
    out = common.maybe_apply(probability, warp, inputs, seed)
    return out[0], (out[1] if keypoints is not None else None)


def random_rotation(image, keypoints=None, max_angle=5.0, probability=1.0, seed=None):
    """Rotates about the center by an angle from [-max_angle, max_angle] degrees."""
    common.check_range("random_rotation.max_angle", 0.0, max_angle, hi_limit=180.0)
    common.check_probability("random_rotation", probability)

    def matrix(img):
        height, width = _pixel_size(img)
        angle = common.uniform(-max_angle, max_angle, common.sub_seed(seed, 1)) * math.pi / 180.0
        cos, sin = tf.cos(angle), tf.sin(angle)
        cx, cy = (width - 1.0) / 2.0, (height - 1.0) / 2.0
        # input = R (output - c) + c
        return _matrix(
            [
                [cos, -sin, cx - cos * cx + sin * cy],
                [sin, cos, cy - sin * cx - cos * cy],
                [0.0, 0.0, 1.0],
            ]
        )

    return _warp(probability, seed, image, keypoints, matrix)


def _homography(src, dst):
    """3x3 matrix mapping the 4 points src [4, 2] onto dst [4, 2] (direct linear transform)."""
    rows, rhs = [], []
    for i in range(4):
        x, y = src[i, 0], src[i, 1]
        u, v = dst[i, 0], dst[i, 1]
        rows.append(tf.stack([x, y, 1.0, 0.0, 0.0, 0.0, -u * x, -u * y]))
        rows.append(tf.stack([0.0, 0.0, 0.0, x, y, 1.0, -v * x, -v * y]))
        rhs.extend([u, v])
    solution = tf.linalg.solve(tf.stack(rows), tf.reshape(tf.stack(rhs), [8, 1]))
    return tf.reshape(tf.concat([solution[:, 0], [1.0]], axis=0), [3, 3])


def random_perspective(image, keypoints=None, max_shift=0.1, probability=1.0, seed=None):
    """Shows the quadrilateral whose corners are the image corners moved by up to max_shift of
    the width (x) and height (y) each, so the content gets a random perspective distortion."""
    common.check_range("random_perspective.max_shift", 0.0, max_shift, hi_limit=0.45)
    common.check_probability("random_perspective", probability)

    def matrix(img):
        height, width = _pixel_size(img)
        w, h = width - 1.0, height - 1.0
        corners = tf.stack(
            [tf.stack([0.0, 0.0]), tf.stack([w, 0.0]), tf.stack([w, h]), tf.stack([0.0, h])]
        )
        shifts = common.uniform(-max_shift, max_shift, common.sub_seed(seed, 1), shape=(4, 2))
        moved = corners + shifts * tf.stack([width, height])
        return _homography(corners, moved)

    return _warp(probability, seed, image, keypoints, matrix)


def random_crop_pad(image, keypoints=None, max_crop=0.1, max_pad=0.1, probability=1.0, seed=None):
    """Moves each side inwards by up to max_crop or outwards by up to max_pad (fractions of the
    width/height) and resamples that window to the original size."""
    common.check_range("random_crop_pad.max_crop", 0.0, max_crop, hi_limit=0.45)
    common.check_range("random_crop_pad.max_pad", 0.0, max_pad)
    common.check_probability("random_crop_pad", probability)

    def matrix(img):
        height, width = _pixel_size(img)
        # left, top, right, bottom; positive = crop
        sides = common.uniform(-max_pad, max_crop, common.sub_seed(seed, 1), shape=(4,))
        x0, y0 = sides[0] * width, sides[1] * height
        x1, y1 = (width - 1.0) - sides[2] * width, (height - 1.0) - sides[3] * height
        sx = (x1 - x0) / tf.maximum(width - 1.0, 1.0)
        sy = (y1 - y0) / tf.maximum(height - 1.0, 1.0)
        return _matrix([[sx, 0.0, x0], [0.0, sy, y0], [0.0, 0.0, 1.0]])

    return _warp(probability, seed, image, keypoints, matrix)


def _curve(image, keypoints, amplitude, periods, phase):
    """Shifts column x vertically by amplitude * H * sin(2 pi periods x / W + phase)."""
    height, width = _pixel_size(image)
    h = tf.shape(image)[0]
    columns = tf.range(tf.shape(image)[1], dtype=tf.float32)
    shift = amplitude * height * tf.sin(2.0 * math.pi * periods * columns / width + phase)  # [W]
    rows = tf.range(h, dtype=tf.float32)
    src = tf.clip_by_value(rows[None, :] + shift[:, None], 0.0, height - 1.0)  # [W, H]
    lo = tf.floor(src)
    frac = tf.expand_dims(src - lo, -1)
    lo_i = tf.cast(lo, tf.int32)
    hi_i = tf.minimum(lo_i + 1, h - 1)
    by_column = tf.transpose(image, [1, 0, 2])  # [W, H, C]
    top = tf.gather(by_column, lo_i, batch_dims=1)
    bottom = tf.gather(by_column, hi_i, batch_dims=1)
    warped = tf.transpose(top * (1.0 - frac) + bottom * frac, [1, 0, 2])
    warped.set_shape(image.shape)
    if keypoints is None:
        return warped, None
    points = tf.reshape(keypoints, [-1, 2])
    x_pixels = points[:, 0] * width - 0.5
    dy = amplitude * tf.sin(2.0 * math.pi * periods * x_pixels / width + phase)
    moved = tf.stack([points[:, 0], points[:, 1] - dy], axis=1)
    return warped, tf.reshape(moved, tf.shape(keypoints))


def random_curve_warp(
    image,
    keypoints=None,
    max_amplitude=0.1,
    min_periods=0.5,
    max_periods=1.0,
    probability=1.0,
    seed=None,
):
    """Bends the text along a sine: amplitude from [-max_amplitude, max_amplitude] of the height,
    periods across the width from [min_periods, max_periods], random phase."""
    common.check_range("random_curve_warp.max_amplitude", 0.0, max_amplitude, hi_limit=0.5)
    common.check_range("random_curve_warp periods", min_periods, max_periods, lo_limit=0.0)
    common.check_probability("random_curve_warp", probability)

    def warp(inputs):
        amplitude = common.uniform(-max_amplitude, max_amplitude, common.sub_seed(seed, 1))
        periods = common.uniform(min_periods, max_periods + 1e-6, common.sub_seed(seed, 2))
        phase = common.uniform(0.0, 2.0 * math.pi, common.sub_seed(seed, 3))
        points = inputs[1] if len(inputs) > 1 else None
        out_image, out_points = _curve(inputs[0], points, amplitude, periods, phase)
        return (out_image,) if points is None else (out_image, out_points)

    inputs = (image,) if keypoints is None else (image, keypoints)
    out = common.maybe_apply(probability, warp, inputs, seed)
    return out[0], (out[1] if keypoints is not None else None)
