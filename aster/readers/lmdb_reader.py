"""LMDB sources in the layout most text recognition datasets ship in.

Keys: `num-samples` (the count as decimal text), `image-%09d` (encoded image bytes) and
`label-%09d` (UTF-8 transcript), indices 1 .. num-samples. Needs the optional `lmdb` package,
imported only when an LMDB database is opened.

    for index, image_bytes, label in LmdbSamples("data/IIIT5k_3000"):
        ...
"""

import os


def _import_lmdb():
    try:
        import lmdb
    except ImportError as e:
        raise ImportError(
            "reading LMDB datasets needs the optional 'lmdb' package: pip install lmdb "
            "(or pip install 'aster-tf[lmdb]')"
        ) from e
    return lmdb


class LmdbSamples:
    """Iterable of (index, image_bytes, label_str) over an LMDB database, index 1-based.

    A missing image yields b"" (the input pipeline drops and counts it as undecodable); a missing
    label yields ""; label bytes that are not UTF-8 are decoded with U+FFFD replacements.
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
        with self._open() as env, env.begin(write=False) as txn:
            raw = txn.get(b"num-samples")
        if raw is None:
            raise ValueError(f"LMDB {self.path!r} has no 'num-samples' key")
        try:
            self.num_samples = int(raw.decode("ascii").strip())
        except (UnicodeDecodeError, ValueError) as e:
            raise ValueError(
                f"LMDB {self.path!r}: 'num-samples' is {raw[:40]!r}, not a count"
            ) from e

    def _open(self):
        lmdb = _import_lmdb()
        try:
            return lmdb.open(
                self.path,
                readonly=True,
                lock=False,
                readahead=False,
                meminit=False,
                max_readers=64,
                subdir=os.path.isdir(self.path),
            )
        except lmdb.Error as e:
            raise ValueError(f"LMDB {self.path!r} cannot be opened: {e}") from e

    def __len__(self):
        return self.num_samples

    def __iter__(self):
        with self._open() as env, env.begin(write=False) as txn:
            for index in range(1, self.num_samples + 1):
                image = txn.get(b"image-%09d" % index)
                label = txn.get(b"label-%09d" % index)
                label = "" if label is None else label.decode("utf-8", errors="replace")
                yield index, (b"" if image is None else bytes(image)), label
