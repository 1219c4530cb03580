import numpy as np
import pytest

from aster.core import preprocessor
from aster.core import preprocessor_color as color
from aster.core import preprocessor_geometry as geometry
from aster.core import preprocessor_text as text
from aster.core.standard_fields import InputDataFields as F
from aster.tf_setup import tf


def _example(with_keypoints=True):
    out = {
        F.image: tf.constant(np.full((6, 10, 3), 100.0, np.float32)),
        F.groundtruth_text: tf.constant("Ab-c"),
    }
    if with_keypoints:
        out[F.groundtruth_keypoints] = tf.constant([0.5, 0.5], tf.float32)
    return out


def test_preprocess_applies_steps_in_order():
    steps = [
        (geometry.resize_image, {"target_height": 4, "target_width": 8}),
        (color.subtract_channel_mean, {"means": [100.0, 100.0, 100.0]}),
        (text.string_filtering, {"lower_case": True, "include_charset": list("abc")}),
        (geometry.random_rotation, {"max_angle": 0.0}),
    ]
    with tf.Graph().as_default():
        example = _example()
        out = preprocessor.preprocess(example, steps)
        assert out is not example and example[F.image].shape.as_list() == [6, 10, 3]
        with tf.Session() as sess:
            value = sess.run(out)
    # The antialiased resize of a flat image is flat to float32 rounding (~1e-5 of 100).
    assert value[F.image].shape == (4, 8, 3) and np.allclose(value[F.image], 0.0, atol=1e-4)
    assert value[F.groundtruth_text] == b"abc"
    np.testing.assert_allclose(value[F.groundtruth_keypoints], [0.5, 0.5], atol=1e-5)


def test_preprocess_geometric_step_without_keypoints():
    with tf.Graph().as_default():
        out = preprocessor.preprocess(
            _example(with_keypoints=False), [(geometry.random_perspective, {"seed": 1})]
        )
    assert F.groundtruth_keypoints not in out and out[F.image].shape.as_list() == [6, 10, 3]


def test_every_op_is_registered():
    modules = (color, geometry, text)
    public = {
        getattr(m, n)
        for m in modules
        for n in dir(m)
        if (
            n.startswith("random_")
            or n
            in (
                "resize_image",
                "normalize_image",
                "image_to_float",
                "subtract_channel_mean",
                "rgb_to_gray",
                "string_filtering",
            )
        )
        and callable(getattr(m, n))
    }
    assert public <= set(preprocessor.FUNC_ARG_MAP)


def test_keeps_pixel_range():
    assert preprocessor.keeps_pixel_range([(color.random_adjust_hue, {})])
    assert not preprocessor.keeps_pixel_range([(color.normalize_image, {})])


def test_unknown_function_raises():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="step 0: abs is not"):
        preprocessor.preprocess(_example(), [(abs, {})])


def test_missing_key_raises():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="needs 'groundtruth_text'"):
        preprocessor.preprocess({F.image: tf.zeros([2, 2, 3])}, [(text.string_filtering, {})])
