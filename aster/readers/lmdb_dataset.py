"""tf.data source of serialized tf.train.Example records read from LMDB databases.

The records carry image/encoded, image/transcript and image/filename ("<db path>:<index>"), so they
go through the same TfExampleDecoder as TFRecord input.
"""

import os

from aster.core.standard_fields import TfExampleFields as T
from aster.readers import lmdb_reader
from aster.tf_setup import tf


def _bytes_feature(value):
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))


def serialized_examples(path):
    """Yields one serialized tf.train.Example per sample of the LMDB database at path."""
    path = path.decode("utf-8") if isinstance(path, bytes) else path
    name = os.path.basename(os.path.normpath(path))
    for index, image, label in lmdb_reader.LmdbSamples(path):
        feature = {
            T.image_encoded: _bytes_feature(image),
            T.transcript: _bytes_feature(label.encode("utf-8")),
            T.filename: _bytes_feature(f"{name}:{index}".encode()),
        }
        example = tf.train.Example(features=tf.train.Features(feature=feature))
        yield example.SerializeToString()


def lmdb_records(paths, shuffle=False, num_epochs=0, seed=None):
    """A dataset of serialized Examples from LMDB databases, read one after the other.

    Args:
      paths: list of LMDB directories (each is opened here once to fail early).
      shuffle: shuffle the database order each epoch (records are shuffled downstream).
      num_epochs: passes; 0 repeats forever.
      seed: seed of the database-order shuffle.

    Returns:
      tf.data.Dataset of string scalars.

    Raises:
      ValueError: a path is not a readable LMDB database in the expected layout.
      ImportError: lmdb is not installed.
    """
    for p in paths:
        lmdb_reader.LmdbSamples(p)  # validates now, not inside the input pipeline
    dataset = tf.data.Dataset.from_tensor_slices(list(paths))
    if shuffle and len(paths) > 1:
        dataset = dataset.shuffle(len(paths), seed=seed, reshuffle_each_iteration=True)
    dataset = dataset.repeat(num_epochs if num_epochs > 0 else None)
    return dataset.flat_map(
        lambda p: tf.data.Dataset.from_generator(
            serialized_examples,
            output_signature=tf.TensorSpec([], tf.string),
            args=(p,),
        )
    )
