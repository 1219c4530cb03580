"""LMDB sources in the layout most text recognition datasets ship in.

Keys: `num-samples` (the count as decimal text), `image-%09d` (encoded image bytes) and
`label-%09d` (UTF-8 transcript), indices 1 .. num-samples. Needs the optional `lmdb` package,
imported only when an LMDB database is opened.

    for index, image_bytes, label in LmdbSamples("data/IIIT5k_3000"):   # in order, labels as str
        ...
    images, labels = LmdbSamples("data/IIIT5k_3000").read([7, 3])     # by index, raw bytes
"""

import os
import threading

# Read-only environments, one per (process, database file), never closed: lmdb refuses a second
# environment of a database in one process, an environment must not be used across fork, and
# opening one per read would cost more than the read. Parallel reads open them under the lock.
_ENVIRONMENTS = {}
_OPENING = threading.Lock()


def _import_lmdb():
    try:
        import lmdb
    except ImportError as e:
        raise ImportError(
            "reading LMDB datasets needs the optional 'lmdb' package: pip install lmdb "
            "(or pip install 'aster-tf[lmdb]')"
        ) from e
    return lmdb


def lmdb_errors():
    """The exception class lmdb raises for a failed operation (lmdb.Error)."""
    return _import_lmdb().Error


class LmdbSamples:
    """The samples of one LMDB database, index 1-based: iterated in order, or read by index.

    A missing image gives b"" (the input pipeline drops and counts it as undecodable); a missing
    label gives "" (b"" from `read`). Iteration decodes label bytes that are not UTF-8 with U+FFFD
    replacements; `read` returns them as they are.
    """

    def __init__(self, path):
        """Opens the database once to read num-samples.

        Args:
          path: the database directory (holding data.mdb), or the data.mdb file.

        Raises:
          ValueError: no database at path, or no valid `num-samples` entry.
          ImportError: lmdb is not installed.
        """
        self.path = str(path)
        if not os.path.exists(self.path):
            raise ValueError(f"LMDB path {self.path!r} does not exist")
        with self._environment().begin(write=False) as txn:
            raw = txn.get(b"num-samples")
        if raw is None:
            raise ValueError(f"LMDB {self.path!r} has no 'num-samples' key")
        try:
            self.num_samples = int(raw.decode("ascii").strip())
        except (UnicodeDecodeError, ValueError) as e:
            raise ValueError(
                f"LMDB {self.path!r}: 'num-samples' is {raw[:40]!r}, not a count"
            ) from e
        if self.num_samples < 0:
            raise ValueError(f"LMDB {self.path!r}: 'num-samples' is {self.num_samples}, below 0")

    def _environment(self):
        """This process's read-only environment of the database, opened on first use."""
        subdir = os.path.isdir(self.path)
        data = os.path.join(self.path, "data.mdb") if subdir else self.path
        key = (os.getpid(), os.path.realpath(data))
        env = _ENVIRONMENTS.get(key)
        if env is not None:
            return env
        lmdb = _import_lmdb()
        with _OPENING:
            if key not in _ENVIRONMENTS:
                try:
                    _ENVIRONMENTS[key] = lmdb.open(
                        self.path,
                        readonly=True,
                        lock=False,
                        readahead=False,
                        meminit=False,
                        max_readers=64,
                        subdir=subdir,
                    )
                except lmdb.Error as e:
                    raise ValueError(f"LMDB {self.path!r} cannot be opened: {e}") from e
            return _ENVIRONMENTS[key]

    def __len__(self):
        return self.num_samples

    def __iter__(self):
        with self._environment().begin(write=False) as txn:
            for index in range(1, self.num_samples + 1):
                image = txn.get(b"image-%09d" % index)
                label = txn.get(b"label-%09d" % index)
                label = "" if label is None else label.decode("utf-8", errors="replace")
                yield index, (b"" if image is None else bytes(image)), label

    def read(self, indices):
        """Reads samples by index in one read transaction.

        Args:
          indices: iterable of 1-based indices.

        Returns:
          (list of image bytes, list of label bytes), b"" where a key is missing.
        """
        images, labels = [], []
        with self._environment().begin(write=False) as txn:
            for index in indices:
                images.append(txn.get(b"image-%09d" % index) or b"")
                labels.append(txn.get(b"label-%09d" % index) or b"")
        return images, labels
