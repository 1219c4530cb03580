import io

import input_fixtures as fx
import numpy as np
import pytest
from PIL import Image

from aster.core.standard_fields import InputDataFields as F
from aster.data_decoders.tf_example_decoder import VALID, TfExampleDecoder
from aster.tf_setup import tf


def _decode(example):
    with tf.Graph().as_default():
        record = example if isinstance(example, bytes) else example.SerializeToString()
        out = TfExampleDecoder().decode(tf.constant(record))
        return fx.run(out)[0]


def test_decode_png_keeps_pixels_and_fields():
    encoded = fx.image_bytes(width=10, height=4, seed=3)
    pixels = np.asarray(Image.open(io.BytesIO(encoded)), np.float32)
    out = _decode(fx.make_example(encoded, "Straße 中文", filename="a.png", lexicon="x\ty"))
    assert out[F.image].dtype == np.float32 and out[F.image].shape == (4, 10, 3)
    np.testing.assert_array_equal(out[F.image], pixels)
    assert out[F.groundtruth_text].decode("utf-8") == "Straße 中文"
    assert out[F.filename] == b"a.png" and out[F.lexicon] == b"x\ty"
    assert (out[F.image_height], out[F.image_width]) == (4, 10)
    assert out[VALID] and out[F.groundtruth_keypoints].shape == (0,)


def test_decode_jpeg_by_content_whatever_the_format_field():
    encoded = fx.image_bytes(width=16, height=8, fmt="JPEG", value=200)
    out = _decode(fx.make_example(encoded, "a", fmt=b"png"))
    assert out[F.image].shape == (8, 16, 3) and out[VALID]
    assert np.abs(out[F.image] - 200).max() <= 3


def test_decode_grayscale_png_gives_three_channels():
    buffer = io.BytesIO()
    Image.fromarray(np.full((5, 7), 77, np.uint8)).save(buffer, format="PNG")
    out = _decode(fx.make_example(buffer.getvalue(), "a"))
    assert out[F.image].shape == (5, 7, 3) and np.all(out[F.image] == 77)


def test_decode_keypoints_normalised_by_width_and_height():
    encoded = fx.image_bytes(width=20, height=10)
    out = _decode(fx.make_example(encoded, "a", keypoints=[0.0, 0.0, 20.0, 10.0, 5.0, 2.5]))
    np.testing.assert_allclose(out[F.groundtruth_keypoints], [0, 0, 1, 1, 0.25, 0.25])


def test_decode_non_image_bytes_is_marked_invalid_not_raised():
    out = _decode(fx.make_example(b"this is not an image", "word"))
    assert not out[VALID]
    assert out[F.image].shape == (1, 1, 3) and out[F.groundtruth_text] == b"word"


def test_decode_missing_optional_fields_default_to_empty():
    feature = {
        "image/encoded": fx.make_example(fx.image_bytes(), "").features.feature["image/encoded"]
    }
    example = tf.train.Example(features=tf.train.Features(feature=feature))
    out = _decode(example)
    assert out[VALID] and out[F.groundtruth_text] == b"" and out[F.lexicon] == b""


def test_decode_feature_dict_matches_the_serialized_example():
    encoded = fx.image_bytes(width=6, height=3, seed=4)
    from_example = _decode(fx.make_example(encoded, "wörd", filename="f.png"))
    with tf.Graph().as_default():
        record = {"image/encoded": tf.constant(encoded), "image/transcript": tf.constant("wörd"),
                  "image/filename": tf.constant("f.png")}
        from_dict = fx.run(TfExampleDecoder().decode(record))[0]
    assert from_dict.keys() == from_example.keys()
    for key, value in from_example.items():
        np.testing.assert_array_equal(from_dict[key], value, err_msg=key)


def test_decode_invalid_utf8_transcript_is_marked_invalid():
    encoded = fx.image_bytes()
    example = fx.make_example(encoded, "x")
    example.features.feature["image/transcript"].bytes_list.value[0] = b"a\xffb"
    assert not _decode(example)[VALID]
    with tf.Graph().as_default():
        record = {"image/encoded": tf.constant(encoded), "image/transcript": tf.constant(b"a\xffb")}
        assert not fx.run(TfExampleDecoder().decode(record))[0][VALID]


def test_decode_feature_dict_with_an_unknown_key_raises():
    with tf.Graph().as_default(), pytest.raises(ValueError, match=r"\['image/label'\] are not"):
        TfExampleDecoder().decode({"image/label": tf.constant(b"a")})
