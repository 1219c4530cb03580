"""Builds ASTER tf.train.Examples and writes them to (sharded) TFRecord files.

The record schema: keys from `aster.core.standard_fields.TfExampleFields`:

    image/encoded    bytes     PNG or JPEG bytes
    image/format     bytes     b"png" or b"jpeg"
    image/filename   bytes     UTF-8 source name (informational)
    image/transcript bytes     UTF-8 word
    image/lexicon    bytes     UTF-8 lexicon words joined by tabs (b"" when there is none)
    image/keypoints  float[]   only when given: x0, y0, x1, y1, ... in pixels of this image,
                               the top curve (left to right) then the bottom curve (left to right)
    image/height     int64     pixels
    image/width      int64     pixels

Sharded output names: `write_tfrecords(examples, "out/train.tfrecord", num_shards=4)` writes
`out/train-00000-of-00004.tfrecord` ... `out/train-00003-of-00004.tfrecord` (the shard suffix
goes before a `.tfrecord`/`.tfrecords`/`.record` extension, else at the end of the path). Record i
goes to shard i % num_shards, so the output does not depend on how the examples were produced.
With one shard the file is written at exactly `output_path`. Files are written under a `.tmp` name
and renamed when complete, so an interrupted run never leaves a truncated file under the final
name.
"""

import glob
import io
import os
import struct

from PIL import Image

from aster.core.standard_fields import TfExampleFields
from aster.tf_setup import tf

_FORMATS = {"png": "png", "jpeg": "jpeg", "jpg": "jpeg"}
_RECORD_EXTENSIONS = (".tfrecord", ".tfrecords", ".record")


def _bytes_feature(value):
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))


def _int64_feature(value):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=[int(value)]))


def _float_feature(values):
    return tf.train.Feature(float_list=tf.train.FloatList(value=[float(v) for v in values]))


def _to_utf8(text, field):
    """Returns `text` (str or UTF-8 bytes) as UTF-8 bytes; raises ValueError on invalid bytes."""
    if isinstance(text, bytes):
        try:
            text.decode("utf-8")
        except UnicodeDecodeError as err:
            raise ValueError(f"{field} is not valid UTF-8: {text[:40]!r} ({err})") from err
        return text
    if not isinstance(text, str):
        raise ValueError(f"{field} must be str or bytes, got {type(text).__name__}: {text!r}")
    return text.encode("utf-8")


def _join_lexicon(lexicon):
    """Lexicon words (iterable of str, or an already tab-joined str) -> tab-joined UTF-8 bytes."""
    if isinstance(lexicon, (str, bytes)):
        return _to_utf8(lexicon, "lexicon")
    words = [w.decode("utf-8") if isinstance(w, bytes) else str(w) for w in lexicon]
    for word in words:
        if "\t" in word or "\n" in word:
            raise ValueError(f"lexicon word {word!r} contains a tab or newline")
    return "\t".join(w for w in words if w).encode("utf-8")


def image_size(image_bytes):
    """Returns (height, width) of encoded image bytes; raises ValueError if PIL cannot read them."""
    try:
        with Image.open(io.BytesIO(image_bytes)) as image:
            width, height = image.size
    except Exception as err:  # PIL raises many types for bad data
        raise ValueError(f"cannot read image header ({len(image_bytes)} bytes): {err}") from err
    return height, width


def make_example(image_bytes, transcript, image_format="png", filename="", lexicon=(),
                 keypoints=(), height=None, width=None):
    """Builds one ASTER tf.train.Example.

    Args:
      image_bytes: bytes, the encoded PNG or JPEG image.
      transcript: str (or UTF-8 bytes), the word.
      image_format: "png" or "jpeg" ("jpg" is accepted and stored as "jpeg").
      filename: str, where the image came from (informational).
      lexicon: iterable of str words (stored tab-joined), or an already tab-joined str.
      keypoints: flat sequence of floats [x0, y0, x1, y1, ...] in pixels: the top curve then the
        bottom curve with the same number of points each, so its length is a multiple of 4.
      height, width: image size in pixels; read from the image header with PIL when None.

    Returns:
      tf.train.Example with the TfExampleFields keys (keypoints only when given).

    Raises:
      ValueError: on an unknown format, non-bytes image, invalid UTF-8, a lexicon word with a tab,
        a keypoint list whose length is not a multiple of 4, or a non-positive size.
    """
    if image_format not in _FORMATS:
        raise ValueError(f"image_format {image_format!r}; expected one of {sorted(_FORMATS)}")
    if not isinstance(image_bytes, bytes) or not image_bytes:
        raise ValueError(f"image_bytes must be non-empty bytes, got {type(image_bytes).__name__}")
    keypoints = [float(v) for v in keypoints]
    if len(keypoints) % 4:
        raise ValueError(f"keypoints has {len(keypoints)} values; expected a multiple of 4 "
                         "(x, y pairs for a top and a bottom curve of equal length)")
    if height is None or width is None:
        height, width = image_size(image_bytes)
    if height <= 0 or width <= 0:
        raise ValueError(f"image size must be positive, got height={height} width={width}")
    feature = {
        TfExampleFields.image_encoded: _bytes_feature(image_bytes),
        TfExampleFields.image_format: _bytes_feature(_FORMATS[image_format].encode("ascii")),
        TfExampleFields.filename: _bytes_feature(_to_utf8(filename, "filename")),
        TfExampleFields.transcript: _bytes_feature(_to_utf8(transcript, "transcript")),
        TfExampleFields.lexicon: _bytes_feature(_join_lexicon(lexicon)),
        TfExampleFields.height: _int64_feature(height),
        TfExampleFields.width: _int64_feature(width),
    }
    if keypoints:
        feature[TfExampleFields.keypoints] = _float_feature(keypoints)
    return tf.train.Example(features=tf.train.Features(feature=feature))


def shard_paths(output_path, num_shards):
    """Returns the file names `write_tfrecords` uses for `num_shards` shards of `output_path`."""
    if num_shards < 1:
        raise ValueError(f"num_shards must be >= 1, got {num_shards}")
    if num_shards == 1:
        return [output_path]
    stem, ext = output_path, ""
    for candidate in _RECORD_EXTENSIONS:
        if output_path.endswith(candidate):
            stem, ext = output_path[: -len(candidate)], candidate
            break
    return [f"{stem}-{i:05d}-of-{num_shards:05d}{ext}" for i in range(num_shards)]


def write_tfrecords(examples_iterable, output_path, num_shards=1):
    """Writes examples round-robin to `num_shards` TFRecord files (see the module docstring).

    Args:
      examples_iterable: iterable of tf.train.Example or of already serialized bytes.
      output_path: str, the file (one shard) or the name the shard names derive from.
      num_shards: int >= 1.

    Returns:
      list of str, the shard file paths written (all of them, even ones left empty).

    Raises:
      ValueError: if num_shards < 1.
    """
    paths = shard_paths(output_path, num_shards)
    directory = os.path.dirname(os.path.abspath(output_path))
    os.makedirs(directory, exist_ok=True)
    writers = [tf.io.TFRecordWriter(path + ".tmp") for path in paths]
    try:
        for index, example in enumerate(examples_iterable):
            # deterministic: the features map in key order, so that the same examples give the
            # same bytes in every process (the map's order otherwise varies between runs).
            record = (example if isinstance(example, bytes)
                      else example.SerializeToString(deterministic=True))
            writers[index % num_shards].write(record)
    except BaseException:
        for writer, path in zip(writers, paths, strict=True):
            writer.close()
            os.remove(path + ".tmp")
        raise
    for writer, path in zip(writers, paths, strict=True):
        writer.close()
        os.replace(path + ".tmp", path)
    return paths


def iter_records(pattern):
    """Yields the serialized records of the TFRecord files matching a path or glob, in name order.

    A small pure-Python reader for inspection and tests (lengths are checked, CRCs are not).

    Raises:
      ValueError: if nothing matches or a file is truncated.
    """
    paths = sorted(glob.glob(pattern)) if any(c in pattern for c in "*?[") else [pattern]
    if not paths or not all(os.path.exists(p) for p in paths):
        raise ValueError(f"no TFRecord file matches {pattern!r}")
    for path in paths:
        with open(path, "rb") as f:
            while True:
                header = f.read(12)
                if not header:
                    break
                if len(header) < 12:
                    raise ValueError(f"{path}: truncated record header")
                (length,) = struct.unpack("<Q", header[:8])
                data = f.read(length)
                if len(data) < length or len(f.read(4)) < 4:
                    raise ValueError(f"{path}: truncated record of {length} bytes")
                yield data


def read_examples(pattern):
    """Returns a list of tf.train.Example parsed from the files matching `pattern` (see above)."""
    return [tf.train.Example.FromString(record) for record in iter_records(pattern)]


def example_to_dict(example):
    """Returns a plain dict view of an ASTER example: str text fields, keypoints list, ints."""
    feature = example.features.feature

    def text(key):
        values = feature[key].bytes_list.value if key in feature else []
        return values[0].decode("utf-8") if values else ""

    lexicon = text(TfExampleFields.lexicon)
    return {
        "image": feature[TfExampleFields.image_encoded].bytes_list.value[0],
        "format": text(TfExampleFields.image_format),
        "filename": text(TfExampleFields.filename),
        "transcript": text(TfExampleFields.transcript),
        "lexicon": lexicon.split("\t") if lexicon else [],
        "keypoints": list(feature[TfExampleFields.keypoints].float_list.value)
        if TfExampleFields.keypoints in feature else [],
        "height": feature[TfExampleFields.height].int64_list.value[0],
        "width": feature[TfExampleFields.width].int64_list.value[0],
    }
