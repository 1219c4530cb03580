import numpy as np
import pytest

from aster.core import preprocessor_color as color
from aster.tf_setup import tf


def _image(height=8, width=12, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(0, 255, (height, width, 3)).astype(np.float32)


def _run(fn, image=None, **kwargs):
    with tf.Graph().as_default():
        out = fn(tf.constant(_image() if image is None else image), **kwargs)
        with tf.Session() as sess:
            return sess.run(out)


RANDOM_OPS = [
    (color.random_pixel_value_scale, {}),
    (color.random_rgb_to_gray, {"probability": 0.5}),
    (color.random_adjust_brightness, {}),
    (color.random_adjust_contrast, {}),
    (color.random_adjust_hue, {"max_delta": 0.2}),
    (color.random_adjust_saturation, {}),
    (color.random_distort_color, {"color_ordering": 0}),
    (color.random_distort_color, {"color_ordering": 1}),
    (color.random_gaussian_blur, {"probability": 0.5}),
    (color.random_gaussian_noise, {"probability": 0.5}),
    (color.random_jpeg_quality, {"probability": 0.5}),
]


@pytest.mark.parametrize("fn,kwargs", RANDOM_OPS, ids=lambda v: getattr(v, "__name__", ""))
def test_random_color_op_keeps_shape_dtype_range_and_is_seeded(fn, kwargs):
    first = _run(fn, seed=5, **kwargs)
    second = _run(fn, seed=5, **kwargs)
    assert first.shape == (8, 12, 3) and first.dtype == np.float32
    assert first.min() >= 0.0 and first.max() <= 255.0
    np.testing.assert_array_equal(first, second)


def test_brightness_on_0_255_range_shifts_by_a_fraction_of_255():
    image = np.full((4, 4, 3), 100.0, np.float32)
    out = _run(color.random_adjust_brightness, image, max_delta=0.1, seed=1)
    assert np.allclose(out, out[0, 0, 0]) and abs(out[0, 0, 0] - 100.0) <= 25.5 + 1e-4


def test_color_ops_do_not_assume_0_1_range():
    # The original clipped to [0, 1]; a mid-gray image must stay mid-gray, not become white.
    image = np.full((4, 4, 3), 128.0, np.float32)
    for fn in (
        color.random_adjust_contrast,
        color.random_adjust_saturation,
        color.random_adjust_hue,
        color.random_distort_color,
    ):
        out = _run(fn, image, seed=2)
        assert 90 < out.mean() < 170, fn.__name__


def test_hue_and_saturation_keep_a_gray_image_gray():
    image = np.full((4, 4, 3), 60.0, np.float32)
    for fn in (color.random_adjust_hue, color.random_adjust_saturation):
        np.testing.assert_allclose(_run(fn, image, seed=3), image, atol=0.5)


def test_rgb_to_gray_channels():
    assert _run(color.rgb_to_gray).shape == (8, 12, 1)
    out = _run(color.rgb_to_gray, three_channels=True)
    assert out.shape == (8, 12, 3) and np.all(out[..., 0] == out[..., 2])


def test_random_rgb_to_gray_probability_one_and_zero():
    out = _run(color.random_rgb_to_gray, probability=1.0)
    assert np.allclose(out[..., 0], out[..., 1])
    np.testing.assert_array_equal(_run(color.random_rgb_to_gray, probability=0.0), _image())


def test_normalize_image_maps_range():
    image = np.array([[[0.0, 127.5, 255.0]]], np.float32)
    out = _run(
        color.normalize_image,
        image,
        original_minval=0,
        original_maxval=255,
        target_minval=-1,
        target_maxval=1,
    )
    np.testing.assert_allclose(out, [[[-1, 0, 1]]], atol=1e-6)


def test_normalize_image_equal_bounds_raises():
    with pytest.raises(ValueError, match="original_minval and original_maxval are both"):
        _run(color.normalize_image, original_minval=3, original_maxval=3)


def test_image_to_float_keeps_values():
    with tf.Graph().as_default(), tf.Session() as sess:
        out = sess.run(color.image_to_float(tf.constant([[[0, 255, 7]]], tf.uint8)))
    assert out.dtype == np.float32 and out.tolist() == [[[0.0, 255.0, 7.0]]]


def test_subtract_channel_mean_per_channel():
    out = _run(color.subtract_channel_mean, means=[1.0, 2.0, 3.0])
    np.testing.assert_allclose(out, _image() - [1.0, 2.0, 3.0], rtol=1e-6)


@pytest.mark.parametrize("means,match", [([], "is empty"), ([1.0, 2.0], "has 2 values")])
def test_subtract_channel_mean_bad_means_raise(means, match):
    with pytest.raises(ValueError, match=match):
        _run(color.subtract_channel_mean, means=means)


def test_distort_color_bad_ordering_raises():
    with pytest.raises(ValueError, match="color_ordering must be 0 or 1, got 2"):
        _run(color.random_distort_color, color_ordering=2)


def test_blur_keeps_a_constant_image_constant_at_the_borders():
    image = np.full((6, 9, 3), 200.0, np.float32)
    out = _run(color.random_gaussian_blur, image, min_sigma=1.0, max_sigma=2.0, probability=1.0)
    np.testing.assert_allclose(out, image, atol=1e-3)


def test_blur_smooths_and_noise_perturbs():
    image = _image()
    blurred = _run(color.random_gaussian_blur, image, min_sigma=1.5, max_sigma=1.5, probability=1)
    assert np.abs(np.diff(blurred, axis=1)).mean() < np.abs(np.diff(image, axis=1)).mean() / 2
    noisy = _run(
        color.random_gaussian_noise,
        np.full((8, 8, 3), 100.0, np.float32),
        min_stddev=5.0,
        max_stddev=5.0,
        probability=1.0,
        seed=1,
    )
    assert 2.0 < noisy.std() < 8.0


def test_jpeg_quality_keeps_a_flat_image():
    image = np.full((16, 16, 3), 90.0, np.float32)
    out = _run(color.random_jpeg_quality, image, min_quality=20, max_quality=20, probability=1.0)
    assert np.abs(out - 90.0).max() <= 3.0


@pytest.mark.parametrize(
    "fn,kwargs,match",
    [
        (color.random_pixel_value_scale, {"minval": 2.0, "maxval": 1.0}, "larger than maximum"),
        (color.random_adjust_hue, {"max_delta": 0.7}, "above 0.5"),
        (color.random_adjust_contrast, {"min_delta": -1.0}, "below 0.0"),
        (color.random_gaussian_noise, {"probability": 1.5}, r"probability must be in \[0, 1\]"),
        (color.random_jpeg_quality, {"max_quality": 101}, "above 100"),
        (color.random_gaussian_blur, {"min_sigma": 0.0}, "below"),
    ],
)
def test_bad_ranges_raise(fn, kwargs, match):
    with pytest.raises(ValueError, match=match):
        _run(fn, **kwargs)
