import numpy as np
import pytest

from aster.core import keypoints
from aster.tf_setup import tf


def _run(fetches):
    with tf.Session() as sess:
        return sess.run(fetches)


def test_divide_curve_equal_arc_length_spacing_with_padding():
    points = np.zeros([4, 3, 2], np.float32)
    points[0, :2] = [[0, 0], [1, 0]]
    points[1] = [[0, 0], [0.1, 0], [1, 0]]
    points[2] = [[0, 0], [1, 0], [1, 1]]
    points[3, :1] = [[0.3, 0.4]]
    with tf.Graph().as_default():
        out = _run(keypoints.divide_curve(tf.constant(points), tf.constant([2, 3, 3, 1]), 5))
    line = [[0, 0], [0.25, 0], [0.5, 0], [0.75, 0], [1, 0]]
    np.testing.assert_allclose(out[0], line, atol=1e-6)
    np.testing.assert_allclose(out[1], line, atol=1e-6)
    np.testing.assert_allclose(out[2], [[0, 0], [0.5, 0], [1, 0], [1, 0.5], [1, 1]], atol=1e-6)
    np.testing.assert_allclose(out[3], [[0.3, 0.4]] * 5, atol=1e-6)


def test_divide_curve_rejects_fewer_than_two_divisions():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="num_divisions"):
        keypoints.divide_curve(tf.zeros([1, 2, 2]), tf.constant([2]), 1)


def test_keypoints_to_control_points_flips_and_marks_missing():
    top = [0.0, 0.1, 0.5, 0.2, 1.0, 0.1]
    bottom_right_to_left = [1.0, 0.9, 0.5, 0.8, 0.0, 0.9]
    kp = np.zeros([3, 16], np.float32)
    kp[0, :12] = top + bottom_right_to_left
    kp[1, :4] = [0.2, 0.2, 0.2, 0.8]  # one point per curve: not enough
    with tf.Graph().as_default():
        cps, valid = _run(keypoints.keypoints_to_control_points(tf.constant(kp), 6))
    assert cps.shape == (3, 6, 2)
    assert valid.tolist() == [1.0, 0.0, 0.0]
    np.testing.assert_allclose(cps[0, :3], [[0, 0.1], [0.5, 0.2], [1, 0.1]], atol=1e-6)
    np.testing.assert_allclose(cps[0, 3:], [[0, 0.9], [0.5, 0.8], [1, 0.9]], atol=1e-6)


def test_keypoints_to_control_points_empty_keypoints():
    with tf.Graph().as_default():
        cps, valid = _run(keypoints.keypoints_to_control_points(tf.zeros([2, 0]), 4))
    assert cps.shape == (2, 4, 2) and valid.tolist() == [0.0, 0.0]


def test_keypoints_to_control_points_rejects_odd_count():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="even"):
        keypoints.keypoints_to_control_points(tf.zeros([1, 8]), 5)
