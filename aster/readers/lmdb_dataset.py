"""tf.data source of the records of LMDB databases, read by index.

    records = lmdb_records(["data/mjsynth_lmdb"], num_readers=4, shuffle=True, seed=7)
    # elements: {"image/encoded", "image/transcript", "image/filename"} string scalars,
    # decoded by TfExampleDecoder.decode like a serialized TFRecord Example

The databases' records form one index space 0 .. N-1 (database after database). Each epoch reads a
permutation of it (tf.random.experimental.index_shuffle seeded with (seed, epoch): every record
once per epoch, a different order each epoch, the same orders for the same seed), in blocks of
BLOCK_SIZE indices that a parallel map (num_readers calls) reads in one LMDB transaction each.
Label bytes are kept as they are (the decoder marks invalid UTF-8 and the pipeline drops and counts
it); the filename is "<database folder name>:<1-based index>". A block that LMDB fails to read (a
corrupt page) is logged and gives empty images, which the pipeline drops and counts as
undecodable (and a reader that drops everything stops at its stall limit) instead of losing them
silently.
"""

import logging
import os
import random

import numpy as np

from aster.core.standard_fields import TfExampleFields as T
from aster.readers import lmdb_reader
from aster.tf_setup import tf

# Indices read per call of the reading function: a Python call per record would cost more than
# the LMDB reads it makes.
BLOCK_SIZE = 64
_LOG = logging.getLogger("aster.lmdb_dataset")


class _Reader:
    """Reads global record indices from the databases (called through tf.numpy_function)."""

    def __init__(self, databases):
        self.databases = databases
        self.names = [os.path.basename(os.path.normpath(d.path)).encode() for d in databases]
        self.starts = np.cumsum([0] + [len(d) for d in databases])

    def __call__(self, indices):
        which = np.searchsorted(self.starts, indices, side="right") - 1
        images = np.empty(len(indices), object)
        labels = np.empty(len(indices), object)
        filenames = np.empty(len(indices), object)
        for d in np.unique(which):
            rows = np.flatnonzero(which == d)
            local = indices[rows] - self.starts[d] + 1
            try:
                images[rows], labels[rows] = self.databases[d].read(local.tolist())
            except lmdb_reader.lmdb_errors() as e:
                _LOG.warning("LMDB %r: records %s cannot be read (%s); they are dropped",
                             self.databases[d].path, local.tolist(), e)
                images[rows], labels[rows] = b"", b""
            filenames[rows] = [b"%s:%d" % (self.names[d], i) for i in local]
        return images, labels, filenames


def _epoch_indices(total, shuffle, seed):
    """epoch -> dataset of [<= BLOCK_SIZE] int64 index blocks: 0 .. total-1, permuted if shuffle."""

    def indices(epoch):
        blocks = tf.data.Dataset.range(total).batch(BLOCK_SIZE)
        if not shuffle:
            return blocks
        key = tf.stack([tf.constant(seed, tf.int64), epoch])
        return blocks.map(
            lambda block: tf.random.experimental.index_shuffle(block, key, total - 1))

    return indices


def lmdb_records(paths, num_readers=1, shuffle=False, num_epochs=0, seed=None):
    """A dataset of the records of LMDB databases, read by index in parallel.

    Args:
      paths: list of LMDB directories (each is opened here once to fail early).
      num_readers: parallel calls of the reading function.
      shuffle: read each epoch in a permutation of the records of all databases; else in order.
      num_epochs: passes; 0 repeats forever.
      seed: seed of the permutations (None: a random one).

    Returns:
      tf.data.Dataset of {TfExampleFields.image_encoded, transcript, filename: string scalar}.

    Raises:
      ValueError: a path is not a readable LMDB database in the expected layout, or the databases
        hold no records.
      ImportError: lmdb is not installed.
    """
    databases = [lmdb_reader.LmdbSamples(p) for p in paths]
    total = sum(len(d) for d in databases)
    if total == 0:
        raise ValueError(f"LMDB databases {[d.path for d in databases]} hold no records "
                         "(num-samples is 0)")
    if seed is None:
        seed = random.SystemRandom().getrandbits(31)
    epochs = tf.data.Dataset.range(num_epochs) if num_epochs > 0 else tf.data.Dataset.counter()
    blocks = epochs.flat_map(_epoch_indices(total, shuffle, seed))
    reader = _Reader(databases)

    def read(block):
        images, labels, filenames = tf.numpy_function(
            reader, [block], [tf.string] * 3, stateful=False, name="read_lmdb")
        return {
            T.image_encoded: tf.ensure_shape(images, [None]),
            T.transcript: tf.ensure_shape(labels, [None]),
            T.filename: tf.ensure_shape(filenames, [None]),
        }

    calls = max(1, int(num_readers))
    records = blocks.map(read, num_parallel_calls=calls if calls > 1 else None,
                         deterministic=True)
    return records.unbatch()
