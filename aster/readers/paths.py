"""Input paths of the readers: a comma-separated list of paths and glob patterns, expanded."""

from aster.tf_setup import tf


def expand_paths(value, field_path, what="file", directories=False):
    """Expands a comma-separated list of paths and glob patterns into a sorted list.

    Args:
      value: e.g. "data/synth90k_train_*.tfrecord,data/extra-?????-of-00010".
      field_path: where the value came from (e.g. "train_input_reader[1].tf_record_input_reader
        .input_path"), for error messages.
      what: what a match is, for the messages ("file", "LMDB database").
      directories: keep the directories a pattern matches (an LMDB database is one); otherwise
        they are skipped.

    Returns:
      sorted list of distinct paths (str).

    Raises:
      ValueError: the value is empty, or one of its patterns matches nothing.
    """
    patterns = [p.strip() for p in value.split(",") if p.strip()]
    if not patterns:
        raise ValueError(f"{field_path} is empty; give a path or a glob pattern")
    found = []
    for pattern in patterns:
        matches = [m for m in tf.io.gfile.glob(pattern)
                   if directories or not tf.io.gfile.isdir(m)]
        if not matches:
            raise ValueError(f"{field_path}: pattern {pattern!r} matches no {what}")
        found.extend(matches)
    return sorted(set(found))
