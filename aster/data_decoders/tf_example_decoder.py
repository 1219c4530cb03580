"""Decodes serialized tf.train.Example records of the ASTER TFRecord schema (SPEC section 5).

    decoder = TfExampleDecoder()
    tensor_dict = decoder.decode(serialized)   # inside tf.data.Dataset.map, graph mode

A record whose image bytes are not PNG, JPEG, GIF or BMP does not raise: the decoder returns a 1x1
placeholder image and `valid` False, and the input pipeline drops and counts the record. Bytes that
look like an image but fail inside the decoder (a truncated PNG), and records that are not an
Example at all, raise in the op; the input pipeline catches those per record (see
aster/core/batcher.py) and counts them as undecodable too.
"""

from aster.core.standard_fields import InputDataFields as F
from aster.core.standard_fields import TfExampleFields as T
from aster.tf_setup import tf

# Key of the boolean scalar that says whether the image could be decoded.
VALID = "valid"

# A 1x1 black RGB PNG, decoded in place of bytes that are not an image (no tf.cond needed).
_PLACEHOLDER_PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00"
    b"\x90wS\xde\x00\x00\x00\x0cIDATx\x9cc```\x00\x00\x00\x04\x00\x01\xf6\x178U\x00\x00\x00"
    b"\x00IEND\xaeB`\x82"
)

# Leading bytes of the formats tf.io.decode_image reads.
_SIGNATURES = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"BM")


def looks_like_image(encoded):
    """True when the bytes start with a PNG, JPEG, GIF or BMP signature.

    Args:
      encoded: string scalar tensor.

    Returns:
      bool scalar tensor.
    """
    checks = [
        tf.equal(tf.strings.substr(encoded, 0, len(sig), unit="BYTE"), sig) for sig in _SIGNATURES
    ]
    return tf.reduce_any(tf.stack(checks))


def decode_image_or_placeholder(encoded):
    """Decodes image bytes to [H, W, 3] float32 in [0, 255], or a 1x1 zero image if not an image.

    Args:
      encoded: string scalar tensor of PNG, JPEG, GIF or BMP bytes.

    Returns:
      (image [H, W, 3] float32, valid bool scalar).
    """
    valid = looks_like_image(encoded)
    encoded = tf.where(valid, encoded, tf.constant(_PLACEHOLDER_PNG))
    image = tf.io.decode_image(encoded, channels=3, expand_animations=False)
    image = tf.cast(image, tf.float32)
    image.set_shape([None, None, 3])
    return image, valid


class TfExampleDecoder:
    """Parses one serialized tf.train.Example into the project's tensor dict."""

    def __init__(self):
        self._features = {
            T.image_encoded: tf.io.FixedLenFeature([], tf.string, default_value=""),
            T.image_format: tf.io.FixedLenFeature([], tf.string, default_value=""),
            T.filename: tf.io.FixedLenFeature([], tf.string, default_value=""),
            T.transcript: tf.io.FixedLenFeature([], tf.string, default_value=""),
            T.lexicon: tf.io.FixedLenFeature([], tf.string, default_value=""),
            T.keypoints: tf.io.VarLenFeature(tf.float32),
            T.height: tf.io.FixedLenFeature([], tf.int64, default_value=0),
            T.width: tf.io.FixedLenFeature([], tf.int64, default_value=0),
        }

    def decode(self, serialized):
        """Decodes one record.

        Args:
          serialized: string scalar tensor, a serialized tf.train.Example.

        Returns:
          dict with InputDataFields keys:
            image: [H, W, 3] float32 in [0, 255] (the format is sniffed from the bytes;
              image/format is informational).
            filename, groundtruth_text (UTF-8, unchanged), lexicon: string scalars.
            groundtruth_keypoints: [N] float32, x divided by the decoded width and y by the
              decoded height (so in [0, 1] for points inside the image); empty when absent.
            image_height, image_width: int32 scalars of the decoded image.
          and VALID: bool scalar, False when the image bytes are not an image.
        """
        parsed = tf.io.parse_single_example(serialized, self._features)
        image, valid = decode_image_or_placeholder(parsed[T.image_encoded])
        shape = tf.shape(image)
        height, width = shape[0], shape[1]
        keypoints = tf.sparse.to_dense(parsed[T.keypoints])
        # Normalise (x, y) pairs; an odd trailing value is dropped.
        num_pairs = tf.size(keypoints) // 2
        pairs = tf.reshape(keypoints[: 2 * num_pairs], [-1, 2])
        scale = tf.cast(tf.stack([width, height]), tf.float32)
        keypoints = tf.reshape(pairs / scale, [-1])
        return {
            F.image: image,
            F.filename: parsed[T.filename],
            F.groundtruth_text: parsed[T.transcript],
            F.lexicon: parsed[T.lexicon],
            F.groundtruth_keypoints: keypoints,
            F.image_height: height,
            F.image_width: width,
            VALID: valid,
        }
