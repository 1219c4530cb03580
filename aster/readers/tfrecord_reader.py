"""TFRecord sources: reading records interleaved (paths: aster/readers/paths.py)."""

from aster.tf_setup import tf


def interleaved_records(files, num_readers=1, shuffle=False, num_epochs=0, seed=None):
    """A dataset of serialized records read from `files`, `num_readers` files at a time.

    Args:
      files: list of TFRecord paths.
      num_readers: files open at once; their records alternate.
      shuffle: shuffle the file order (again each epoch).
      num_epochs: passes over the files; 0 repeats forever.
      seed: seed of the file shuffle (None: random).

    Returns:
      tf.data.Dataset of string scalars.
    """
    dataset = tf.data.Dataset.from_tensor_slices(list(files))
    if shuffle and len(files) > 1:
        dataset = dataset.shuffle(len(files), seed=seed, reshuffle_each_iteration=True)
    dataset = dataset.repeat(num_epochs if num_epochs > 0 else None)
    cycle = max(1, min(int(num_readers), len(files)))
    return dataset.interleave(
        tf.data.TFRecordDataset,
        cycle_length=cycle,
        block_length=1,
        num_parallel_calls=cycle if cycle > 1 else None,
    )
