"""Test data for the input pipeline tests: small PNG/JPEG word images written as TFRecords / LMDB.

Imported by tests under tests/data_decoders, tests/core, tests/builders and tests/readers (tests/ is
on sys.path through tests/conftest.py).
"""

import io

import numpy as np
from PIL import Image

from aster.core.standard_fields import TfExampleFields as T
from aster.tf_setup import tf


def image_bytes(width=20, height=8, fmt="PNG", value=None, seed=0):
    """Encoded RGB image bytes (random pixels, or constant `value`)."""
    rng = np.random.default_rng(seed)
    if value is None:
        pixels = rng.integers(0, 256, size=(height, width, 3), dtype=np.uint8)
    else:
        pixels = np.full((height, width, 3), value, np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format=fmt)
    return buffer.getvalue()


def make_example(encoded, transcript, filename="", lexicon="", keypoints=(), fmt=b"png"):
    """A tf.train.Example of the ASTER schema."""

    def b(v):
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=[v]))

    feature = {
        T.image_encoded: b(encoded),
        T.image_format: b(fmt),
        T.filename: b(filename.encode()),
        T.transcript: b(transcript.encode("utf-8")),
        T.lexicon: b(lexicon.encode("utf-8")),
    }
    if keypoints:
        feature[T.keypoints] = tf.train.Feature(float_list=tf.train.FloatList(value=keypoints))
    return tf.train.Example(features=tf.train.Features(feature=feature))


def write_records(path, records):
    """Writes examples (tf.train.Example) or raw bytes as records of one TFRecord file."""
    with tf.io.TFRecordWriter(str(path)) as writer:
        for record in records:
            writer.write(record if isinstance(record, bytes) else record.SerializeToString())
    return str(path)


def word_records(prefix, count, start=0, fmt="PNG"):
    """`count` valid examples with transcripts f"{prefix}{i}" and filenames f"{prefix}{i}.png"."""
    return [
        make_example(image_bytes(fmt=fmt, seed=i), f"{prefix}{i}", filename=f"{prefix}{i}.png")
        for i in range(start, start + count)
    ]


def write_lmdb(path, samples):
    """Writes (image_bytes or None, label str or None) pairs in the STR LMDB layout (1-based)."""
    import lmdb

    env = lmdb.open(str(path), map_size=1 << 24)
    with env.begin(write=True) as txn:
        txn.put(b"num-samples", str(len(samples)).encode())
        for i, (image, label) in enumerate(samples, start=1):
            if image is not None:
                txn.put(b"image-%09d" % i, image)
            if label is not None:
                txn.put(b"label-%09d" % i, label.encode("utf-8"))
    env.close()
    return str(path)


def run(fetches, num_runs=1):
    """Runs fetches `num_runs` times in one session of the current graph; returns the results."""
    with tf.Session() as sess:
        sess.run([tf.local_variables_initializer(), tf.global_variables_initializer()])
        return [sess.run(fetches) for _ in range(num_runs)]
