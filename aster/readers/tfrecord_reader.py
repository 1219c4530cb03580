"""TFRecord sources: expanding paths, globs and shards, and reading records interleaved."""

from aster.tf_setup import tf


def expand_paths(input_path, field_path="input_path"):
    """Expands a comma-separated list of paths and glob patterns into a sorted list of files.

    Args:
      input_path: e.g. "data/synth90k_train_*.tfrecord,data/extra-?????-of-00010".
      field_path: where the value came from (e.g. "train_input_reader[1].tf_record_input_reader
        .input_path"), for error messages.

    Returns:
      sorted list of distinct file paths (str).

    Raises:
      ValueError: the value is empty, or one of its patterns matches no file.
    """
    patterns = [p.strip() for p in input_path.split(",") if p.strip()]
    if not patterns:
        raise ValueError(f"{field_path} is empty; give a path or a glob pattern")
    files = []
    for pattern in patterns:
        matches = [m for m in tf.io.gfile.glob(pattern) if not tf.io.gfile.isdir(m)]
        if not matches:
            raise ValueError(f"{field_path}: pattern {pattern!r} matches no file")
        files.extend(matches)
    return sorted(set(files))


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
