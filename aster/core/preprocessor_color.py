"""Pixel-value preprocessing: color, gray, normalisation, blur, noise, JPEG artifacts.

Every function takes one image [H, W, C] float32 in [0, 255] and returns an image of the same shape
(rgb_to_gray without three_channels: [H, W, 1]). Random ops take an op-level `seed` (None: random).
Color ops clip to [0, 255]; normalize_image and subtract_channel_mean deliberately leave that range
(use them last).
"""

import math

from aster.core import preprocessor_common as common
from aster.tf_setup import tf


def image_to_float(image):
    """Casts to float32 without rescaling (uint8 0..255 stays 0..255)."""
    return tf.cast(image, tf.float32)


def normalize_image(image, original_minval, original_maxval, target_minval=0.0, target_maxval=1.0):
    """Maps [original_minval, original_maxval] linearly onto [target_minval, target_maxval]."""
    if original_maxval == original_minval:
        raise ValueError(
            f"normalize_image: original_minval and original_maxval are both {original_minval}"
        )
    scale = (target_maxval - target_minval) / (original_maxval - original_minval)
    return (tf.cast(image, tf.float32) - original_minval) * scale + target_minval


def subtract_channel_mean(image, means):
    """Subtracts one mean per channel (values on the [0, 255] scale); the result is not clipped."""
    means = list(means)
    if not means:
        raise ValueError("subtract_channel_mean.means is empty; give one value per channel")
    channels = image.shape[-1]
    if channels is not None and channels != len(means):
        raise ValueError(
            f"subtract_channel_mean.means has {len(means)} values but the image has "
            f"{channels} channels"
        )
    return image - tf.constant(means, tf.float32)


def rgb_to_gray(image, three_channels=False):
    """Luma of an RGB image: [H, W, 1], or [H, W, 3] of identical channels with three_channels."""
    gray = tf.image.rgb_to_grayscale(image)
    return tf.tile(gray, [1, 1, 3]) if three_channels else gray


def random_rgb_to_gray(image, probability=0.1, seed=None):
    """Gray (kept as 3 channels) with the given probability."""
    common.check_probability("random_rgb_to_gray", probability)
    return common.maybe_apply(probability, lambda x: (rgb_to_gray(x[0], True),), (image,), seed)[0]


def random_pixel_value_scale(image, minval=0.9, maxval=1.1, seed=None):
    """Multiplies every pixel value by its own factor from [minval, maxval], then clips."""
    common.check_range("random_pixel_value_scale", minval, maxval)
    factors = tf.random.uniform(tf.shape(image), minval, maxval, seed=seed)
    return common.clip(image * factors)


def random_adjust_brightness(image, max_delta=0.2, seed=None):
    """Adds delta * 255 with delta from [-max_delta, max_delta] (a fraction of the full range)."""
    common.check_range("random_adjust_brightness.max_delta", 0.0, max_delta)
    delta = common.uniform(-max_delta, max_delta, seed) * common.PIXEL_MAX
    return common.clip(image + delta)


def random_adjust_contrast(image, min_delta=0.8, max_delta=1.25, seed=None):
    """Scales each channel's deviation from its mean by a factor from [min_delta, max_delta]."""
    common.check_range("random_adjust_contrast", min_delta, max_delta, lo_limit=0.0)
    factor = common.uniform(min_delta, max_delta, seed)
    return common.clip(tf.image.adjust_contrast(image, factor))


def random_adjust_hue(image, max_delta=0.02, seed=None):
    """Rotates the hue by a delta from [-max_delta, max_delta] (a fraction of a full turn)."""
    common.check_range("random_adjust_hue.max_delta", 0.0, max_delta, hi_limit=0.5)
    delta = common.uniform(-max_delta, max_delta, seed)
    return _hue(image, delta)


def random_adjust_saturation(image, min_delta=0.8, max_delta=1.25, seed=None):
    """Scales the saturation by a factor from [min_delta, max_delta]."""
    common.check_range("random_adjust_saturation", min_delta, max_delta, lo_limit=0.0)
    factor = common.uniform(min_delta, max_delta, seed)
    return _saturation(image, factor)


def _hue(image, delta):
    # The HSV kernels expect [0, 1]; scale there and back.
    scaled = tf.image.adjust_hue(image / common.PIXEL_MAX, delta)
    return common.clip(scaled * common.PIXEL_MAX)


def _saturation(image, factor):
    scaled = tf.image.adjust_saturation(image / common.PIXEL_MAX, factor)
    return common.clip(scaled * common.PIXEL_MAX)


def random_distort_color(image, color_ordering=0, seed=None):
    """Brightness (+-32/255), saturation and contrast (0.5-1.5) and hue (+-0.2) in a fixed order.

    Args:
      image: [H, W, 3] float32 in [0, 255].
      color_ordering: 0 = brightness, saturation, hue, contrast; 1 = brightness, contrast,
        saturation, hue.
      seed: op-level seed.

    Raises:
      ValueError: color_ordering not 0 or 1.
    """
    steps = {
        "brightness": lambda x, s: random_adjust_brightness(x, 32.0 / 255.0, s),
        "saturation": lambda x, s: random_adjust_saturation(x, 0.5, 1.5, s),
        "hue": lambda x, s: random_adjust_hue(x, 0.2, s),
        "contrast": lambda x, s: random_adjust_contrast(x, 0.5, 1.5, s),
    }
    orders = {
        0: ("brightness", "saturation", "hue", "contrast"),
        1: ("brightness", "contrast", "saturation", "hue"),
    }
    if color_ordering not in orders:
        raise ValueError(
            f"random_distort_color.color_ordering must be 0 or 1, got {color_ordering}"
        )
    for k, name in enumerate(orders[color_ordering]):
        image = steps[name](image, common.sub_seed(seed, k))
    return image


def _blur(image, sigma, radius):
    """Separable gaussian blur, normalised at the borders (no dark edges)."""
    x = tf.range(-radius, radius + 1, dtype=tf.float32)
    weights = tf.exp(-tf.square(x) / (2.0 * tf.square(sigma)))
    weights = weights / tf.reduce_sum(weights)
    # Channels go to the batch axis so one [k, 1, 1, 1] filter serves any channel count.
    planes = tf.expand_dims(tf.transpose(image, [2, 0, 1]), -1)  # [C, H, W, 1]
    ones = tf.ones_like(planes[:1])
    vertical = tf.reshape(weights, [-1, 1, 1, 1])
    horizontal = tf.reshape(weights, [1, -1, 1, 1])

    def conv(t):
        t = tf.nn.conv2d(t, vertical, strides=1, padding="SAME")
        return tf.nn.conv2d(t, horizontal, strides=1, padding="SAME")

    blurred = conv(planes) / conv(ones)
    return tf.transpose(tf.squeeze(blurred, -1), [1, 2, 0])


def random_gaussian_blur(image, min_sigma=0.3, max_sigma=1.5, probability=0.5, seed=None):
    """Gaussian blur with sigma from [min_sigma, max_sigma] pixels, with the given probability."""
    common.check_range("random_gaussian_blur sigma", min_sigma, max_sigma, lo_limit=1e-3)
    common.check_probability("random_gaussian_blur", probability)
    radius = max(1, int(math.ceil(3.0 * max_sigma)))

    def blur(x):
        sigma = common.uniform(min_sigma, max_sigma, common.sub_seed(seed, 1))
        return (common.clip(_blur(x[0], sigma, radius)),)

    return common.maybe_apply(probability, blur, (image,), seed)[0]


def random_gaussian_noise(image, min_stddev=0.0, max_stddev=8.0, probability=0.5, seed=None):
    """Adds gaussian noise with a stddev from [min_stddev, max_stddev] (0-255 scale), clips."""
    common.check_range("random_gaussian_noise stddev", min_stddev, max_stddev, lo_limit=0.0)
    common.check_probability("random_gaussian_noise", probability)

    def noise(x):
        stddev = common.uniform(min_stddev, max_stddev, common.sub_seed(seed, 1))
        n = tf.random.normal(tf.shape(x[0]), seed=common.sub_seed(seed, 2)) * stddev
        return (common.clip(x[0] + n),)

    return common.maybe_apply(probability, noise, (image,), seed)[0]


def random_jpeg_quality(image, min_quality=30, max_quality=95, probability=0.5, seed=None):
    """Re-encodes as JPEG at a quality from [min_quality, max_quality] (1 or 3 channels)."""
    common.check_range("random_jpeg_quality quality", min_quality, max_quality, 0, 100)
    common.check_probability("random_jpeg_quality", probability)

    def jpeg(x):
        quality = common.uniform(
            min_quality, max_quality + 1, common.sub_seed(seed, 1), dtype=tf.int32
        )
        pixels = tf.cast(tf.round(common.clip(x[0])), tf.uint8)
        out = tf.cast(tf.image.adjust_jpeg_quality(pixels, quality), tf.float32)
        return (tf.reshape(out, tf.shape(x[0])),)

    return common.maybe_apply(probability, jpeg, (image,), seed)[0]
