import numpy as np
import pytest

from aster.core import preprocessor_geometry as geometry
from aster.tf_setup import tf

WARPS = [
    (geometry.random_rotation, {"max_angle": 10.0}),
    (geometry.random_perspective, {"max_shift": 0.1}),
    (geometry.random_curve_warp, {"max_amplitude": 0.15}),
    (geometry.random_crop_pad, {"max_crop": 0.15, "max_pad": 0.15}),
]
IDENTITY = [
    (geometry.random_rotation, {"max_angle": 0.0}),
    (geometry.random_perspective, {"max_shift": 0.0}),
    (geometry.random_curve_warp, {"max_amplitude": 0.0}),
    (geometry.random_crop_pad, {"max_crop": 0.0, "max_pad": 0.0}),
]


def _image(height=8, width=12, seed=0):
    return np.random.default_rng(seed).uniform(0, 255, (height, width, 3)).astype(np.float32)


def _run(fn, image, keypoints=None, **kwargs):
    with tf.Graph().as_default():
        points = None if keypoints is None else tf.constant(keypoints, tf.float32)
        out = fn(tf.constant(image), points, **kwargs)
        with tf.Session() as sess:
            return sess.run(out if keypoints is not None else out[0])


def _ids(value):
    return getattr(value, "__name__", "")


@pytest.mark.parametrize("fn,kwargs", WARPS, ids=_ids)
def test_warp_keeps_shape_dtype_range_and_is_seeded(fn, kwargs):
    first = _run(fn, _image(), seed=3, **kwargs)
    second = _run(fn, _image(), seed=3, **kwargs)
    assert first.shape == (8, 12, 3) and first.dtype == np.float32
    assert first.min() >= 0.0 and first.max() <= 255.0
    np.testing.assert_array_equal(first, second)


@pytest.mark.parametrize("fn,kwargs", IDENTITY, ids=_ids)
def test_zero_strength_warp_is_identity(fn, kwargs):
    image, points = _image(), np.array([0.25, 0.5, 0.75, 0.25], np.float32)
    out, moved = _run(fn, image, points, seed=1, **kwargs)
    np.testing.assert_allclose(out, image, atol=1e-2)
    np.testing.assert_allclose(moved, points, atol=1e-5)


@pytest.mark.parametrize("fn,kwargs", WARPS, ids=_ids)
def test_keypoints_follow_the_content(fn, kwargs):
    height, width = 40, 60
    for seed in range(3):
        image = np.zeros((height, width, 3), np.float32)
        row, col = 17, 33
        image[row - 1 : row + 2, col - 1 : col + 2] = 255.0
        point = np.array([(col + 0.5) / width, (row + 0.5) / height], np.float32)
        out, moved = _run(fn, image, point, seed=seed, probability=1.0, **kwargs)
        weights = out[..., 0]
        ys, xs = np.mgrid[0:height, 0:width]
        center = np.array([(weights * xs).sum(), (weights * ys).sum()]) / weights.sum()
        predicted = moved * [width, height] - 0.5
        assert np.abs(center - predicted).max() < 1.0, (seed, center, predicted)


def test_warp_without_keypoints_returns_none():
    with tf.Graph().as_default():
        image, points = geometry.random_rotation(tf.constant(_image()), None, seed=1)
    assert points is None and image.shape.as_list() == [8, 12, 3]


@pytest.mark.parametrize("method", geometry.RESIZE_METHODS)
def test_resize_image_each_method(method):
    with tf.Graph().as_default():
        out = geometry.resize_image(tf.constant(_image()), 16, 40, method)
        assert out.shape.as_list() == [16, 40, 3]
        with tf.Session() as sess:
            value = sess.run(out)
    assert value.dtype == np.float32 and value.min() >= 0 and value.max() <= 255


def _resize(image, height, width, method="bilinear", antialias=True):
    with tf.Graph().as_default():
        out = geometry.resize_image(tf.constant(image), height, width, method, antialias)
        with tf.Session() as sess:
            return sess.run(out)


@pytest.mark.parametrize("method", ["bilinear", "bicubic"])
def test_resize_image_antialias_averages_fine_stripes_instead_of_sampling_them(method):
    # A 1-pixel checkerboard shrunk 5x: without antialias each output pixel samples one input
    # pixel and the checkerboard comes out at full contrast; with it, the mean gray.
    rows, cols = np.indices((160, 500))
    board = np.repeat(((rows + cols) % 2 * 255.0)[..., None], 3, axis=2).astype(np.float32)
    smooth = _resize(board, 32, 100, method, antialias=True)
    aliased = _resize(board, 32, 100, method, antialias=False)
    assert np.abs(smooth - 127.5).max() < 5.0, np.abs(smooth - 127.5).max()
    assert aliased.std() > 100.0, aliased.std()


@pytest.mark.parametrize("method", geometry.RESIZE_METHODS)
def test_resize_image_to_the_same_size_is_identity(method):
    image = _image(32, 100)
    np.testing.assert_allclose(_resize(image, 32, 100, method, antialias=True), image, atol=1e-3)


def test_resize_image_antialias_changes_nothing_when_enlarging():
    image = _image(8, 12)
    np.testing.assert_allclose(_resize(image, 20, 50, antialias=True),
                               _resize(image, 20, 50, antialias=False), atol=1e-3)


def test_resize_random_method_static_shape_and_seeded():
    def run(seed):
        with tf.Graph().as_default():
            image = tf.compat.v1.placeholder(tf.float32, [None, None, 3])
            out = geometry.resize_image_random_method(image, 16, 40, seed=seed)
            assert out.shape.as_list() == [16, 40, 3]
            with tf.Session() as sess:
                return [sess.run(out, {image: _image()}) for _ in range(4)]

    first, second = run(7), run(7)
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)
    assert all(v.min() >= 0 and v.max() <= 255 for v in first)


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda i: geometry.resize_image(i, 0, 5), "target size must be positive"),
        (lambda i: geometry.resize_image(i, 5, 5, "cubic"), "unknown method 'cubic'"),
        (lambda i: geometry.resize_image_random_method(i, 5, -1), "must be positive"),
        (lambda i: geometry.random_rotation(i, max_angle=-1.0), "larger than maximum"),
        (lambda i: geometry.random_perspective(i, max_shift=0.6), "above 0.45"),
        (lambda i: geometry.random_curve_warp(i, min_periods=2.0, max_periods=1.0), "periods"),
        (lambda i: geometry.random_crop_pad(i, max_crop=0.5), "above 0.45"),
        (lambda i: geometry.random_crop_pad(i, probability=-0.1), "probability"),
    ],
)
def test_bad_arguments_raise(call, match):
    with tf.Graph().as_default(), pytest.raises(ValueError, match=match):
        call(tf.constant(_image()))
