"""Decodes records of the ASTER TFRecord schema: serialized tf.train.Examples, or dicts of their
features (the LMDB reader's records).

    decoder = TfExampleDecoder()
    tensor_dict = decoder.decode(serialized)   # inside tf.data.Dataset.map, graph mode
    tensor_dict = decoder.decode({"image/encoded": image_bytes, "image/transcript": label_bytes})

A record whose image bytes are not PNG, JPEG, GIF or BMP, or whose header declares more than
MAX_PIXELS pixels (a decompression bomb), or whose transcript is not valid UTF-8, does not raise:
the decoder returns a 1x1 placeholder image and `valid` False, and the input pipeline drops and
counts the record. Bytes that
look like an image but fail inside the decoder (a truncated PNG), and records that are not an
Example at all, raise in the op; the input pipeline catches those per record (see
aster/core/batcher.py) and counts them as undecodable too.
"""

from aster.core.standard_fields import InputDataFields as F
from aster.core.standard_fields import TfExampleFields as T
from aster.tf_setup import tf

# Key of the boolean scalar that says whether the image could be decoded.
VALID = F.valid

# A 1x1 black RGB PNG, decoded in place of bytes that are not an image (no tf.cond needed).
_PLACEHOLDER_PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00"
    b"\x90wS\xde\x00\x00\x00\x0cIDATx\x9cc```\x00\x00\x00\x04\x00\x01\xf6\x178U\x00\x00\x00"
    b"\x00IEND\xaeB`\x82"
)

# Leading bytes of the formats tf.io.decode_image reads.
_SIGNATURES = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"BM")

# Images declaring more pixels than this are refused before decoding (decompression bombs: a
# 0.4 MB PNG can declare 12000x12000 pixels and decode to 432 MB). 16.7 M pixels, e.g. 4096x4096,
# is far above any word crop; the image would be 200 MB as float32.
MAX_PIXELS = 1 << 24

# A 1x1 JPEG: extract_jpeg_shape runs on it in place of bytes that are not a JPEG.
_PLACEHOLDER_JPEG = (
    b"\xff\xd8\xff\xdb\x00C\x00\x08\x06\x06\x07\x06\x05\x08\x07\x07\x07\t\t\x08\n\x0c\x14\r"
    b"\x0c\x0b\x0b\x0c\x19\x12\x13\x0f\x14\x1d\x1a\x1f\x1e\x1d\x1a\x1c\x1c $.\' \",#"
    b"\x1c\x1c(7),01444"
    b"\x1f\'9=82<.342\xff\xc0\x00\x0b\x08\x00\x01\x00\x01\x01\x01\x11\x00\xff\xc4\x00\x1f\x00\x00"
    b"\x01\x05\x01\x01\x01\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x01\x02\x03\x04\x05\x06\x07"
    b"\x08\t\n\x0b\xff\xc4\x00\xb5\x10\x00\x02\x01\x03\x03\x02\x04\x03\x05\x05\x04\x04\x00\x00"
    b"\x01}\x01\x02\x03\x00\x04\x11\x05\x12!1A\x06\x13Qa\x07\"q\x142\x81\x91\xa1\x08#B\xb1\xc1\x15"
    b"R\xd1\xf0$3br\x82\t\n\x16\x17\x18\x19\x1a%&\'()*456789:CDEFGHIJSTUVWXYZcdefghijstuvwxyz"
    b"\x83\x84\x85\x86\x87\x88\x89\x8a\x92\x93\x94\x95\x96\x97\x98\x99\x9a\xa2\xa3\xa4\xa5\xa6\xa7"
    b"\xa8\xa9\xaa\xb2\xb3\xb4\xb5\xb6\xb7\xb8\xb9\xba\xc2\xc3\xc4\xc5\xc6\xc7\xc8\xc9\xca\xd2\xd3"
    b"\xd4\xd5\xd6\xd7\xd8\xd9\xda\xe1\xe2\xe3\xe4\xe5\xe6\xe7\xe8\xe9\xea\xf1\xf2\xf3\xf4\xf5\xf6"
    b"\xf7\xf8\xf9\xfa\xff\xda\x00\x08\x01\x01\x00\x00?\x00\xd2\xcf \xff\xd9"
)


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


def _header_number(encoded, offset, length, big_endian):
    """Unsigned integer of `length` bytes at `offset` (0 where the bytes are missing), int64."""
    padded = tf.strings.join([encoded, tf.constant(b"\x00" * (offset + length))])
    raw = tf.cast(tf.io.decode_raw(tf.strings.substr(padded, offset, length, unit="BYTE"),
                                   tf.uint8), tf.int64)
    weights = [256**i for i in range(length)]
    if big_endian:
        weights = weights[::-1]
    return tf.reduce_sum(raw * tf.constant(weights, tf.int64))


def declared_pixels(encoded):
    """Pixel count an image's header declares, read without decoding it.

    PNG: IHDR width and height; JPEG: the SOF marker (tf.io.extract_jpeg_shape); GIF: the logical
    screen; BMP: the info header. 0 for bytes that are none of these.

    Args:
      encoded: string scalar tensor.

    Returns:
      int64 scalar tensor.
    """
    def starts_with(signatures):
        return tf.reduce_any(tf.stack([
            tf.equal(tf.strings.substr(encoded, 0, len(s), unit="BYTE"), s) for s in signatures]))

    png = _header_number(encoded, 16, 4, True) * _header_number(encoded, 20, 4, True)
    gif = _header_number(encoded, 6, 2, False) * _header_number(encoded, 8, 2, False)
    bmp_height = _header_number(encoded, 22, 4, False)
    bmp_height = tf.where(bmp_height >= 2**31, 2**32 - bmp_height, bmp_height)  # top-down: < 0
    bmp = _header_number(encoded, 18, 4, False) * bmp_height
    is_jpeg = starts_with(_SIGNATURES[1:2])
    jpeg_shape = tf.io.extract_jpeg_shape(
        tf.where(is_jpeg, encoded, tf.constant(_PLACEHOLDER_JPEG)), output_type=tf.int64)
    jpeg = jpeg_shape[0] * jpeg_shape[1]
    return tf.where(starts_with(_SIGNATURES[:1]), png, tf.where(
        is_jpeg, jpeg, tf.where(starts_with(_SIGNATURES[2:4]), gif, tf.where(
            starts_with(_SIGNATURES[4:]), bmp, tf.constant(0, tf.int64)))))


def decode_image_or_placeholder(encoded):
    """Decodes image bytes to [H, W, 3] float32 in [0, 255], or a 1x1 zero image if not an image.

    Bytes that are not an image, and images whose header declares more than MAX_PIXELS pixels
    (decompression bombs), give the placeholder and valid False without being decoded.

    Args:
      encoded: string scalar tensor of PNG, JPEG, GIF or BMP bytes.

    Returns:
      (image [H, W, 3] float32, valid bool scalar).
    """
    valid = tf.logical_and(looks_like_image(encoded), declared_pixels(encoded) <= MAX_PIXELS)
    encoded = tf.where(valid, encoded, tf.constant(_PLACEHOLDER_PNG))
    image = tf.io.decode_image(encoded, channels=3, expand_animations=False)
    image = tf.cast(image, tf.float32)
    image.set_shape([None, None, 3])
    return image, valid


def is_utf8(text):
    """True when a string scalar tensor is valid UTF-8 (the label ops need code points).

    Args:
      text: string scalar tensor.

    Returns:
      bool scalar tensor.
    """
    replaced = tf.strings.unicode_transcode(text, "UTF-8", "UTF-8", errors="replace",
                                            replacement_char=0xFFFD)
    return tf.equal(replaced, text)


class TfExampleDecoder:
    """Decodes one record, a serialized tf.train.Example or a dict of its features, into the
    project's tensor dict."""

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

    def _parse(self, record):
        """The record's features: every TfExampleFields key, defaults where absent."""
        if not isinstance(record, dict):
            parsed = tf.io.parse_single_example(record, self._features)
            parsed[T.keypoints] = tf.sparse.to_dense(parsed[T.keypoints])
            return parsed
        unknown = sorted(set(record) - set(self._features))
        if unknown:
            raise ValueError(f"record features {unknown} are not TfExampleFields keys; "
                             f"expected some of {sorted(self._features)}")
        parsed = {key: tf.constant(spec.default_value, spec.dtype)
                  for key, spec in self._features.items() if key != T.keypoints}
        parsed[T.keypoints] = tf.zeros([0], tf.float32)
        parsed.update(record)
        return parsed

    def decode(self, record):
        """Decodes one record.

        Args:
          record: string scalar tensor, a serialized tf.train.Example; or a dict from
            TfExampleFields keys to the feature tensors as parsing would give them (string
            scalars; keypoints a [N] float32 vector), e.g. the LMDB reader's records. Absent
            features take their defaults.

        Returns:
          dict with InputDataFields keys:
            image: [H, W, 3] float32 in [0, 255] (the format is sniffed from the bytes;
              image/format is informational).
            filename, groundtruth_text (UTF-8, unchanged), lexicon: string scalars.
            groundtruth_keypoints: [N] float32, x divided by the decoded width and y by the
              decoded height (so in [0, 1] for points inside the image); empty when absent.
            image_height, image_width: int32 scalars of the decoded image.
          and VALID: bool scalar, False when the image bytes are not an image (or declare more
            than MAX_PIXELS pixels) or the transcript is not valid UTF-8.

        Raises:
          ValueError: a dict record has a key that is not a TfExampleFields key.
        """
        parsed = self._parse(record)
        image, valid = decode_image_or_placeholder(parsed[T.image_encoded])
        valid = tf.logical_and(valid, is_utf8(parsed[T.transcript]))
        shape = tf.shape(image)
        height, width = shape[0], shape[1]
        keypoints = parsed[T.keypoints]
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
