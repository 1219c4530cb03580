"""The LMDB layout most STR releases ship in (`num-samples`, `image-%09d`, `label-%09d`).

Reading is `aster.readers.lmdb_reader.LmdbSamples(path)`, which yields (index, image_bytes,
label_str); this module only maps its entries to samples.
"""

import os

from aster.tools import conversion


def read_samples(lmdb_path):
    """Yields a Sample per LMDB entry, named `<database folder>/image-<index>`."""
    from aster.readers.lmdb_reader import LmdbSamples

    name = os.path.basename(os.path.normpath(lmdb_path))
    for index, image_bytes, label in LmdbSamples(lmdb_path):
        yield conversion.Sample(label, image_bytes=image_bytes,
                                filename=f"{name}/image-{int(index):09d}")


def convert(lmdb_path, output_path, **options):
    """Converts one LMDB database (a folder with data.mdb); options go to convert_samples."""
    return conversion.convert_samples(read_samples(lmdb_path), output_path, name="lmdb",
                                      total=_num_samples(lmdb_path), **options)


def _num_samples(lmdb_path):
    """The database's `num-samples` entry, for progress percentages (None if unreadable)."""
    try:
        import lmdb

        with lmdb.open(lmdb_path, readonly=True, lock=False) as env, env.begin() as txn:
            value = txn.get(b"num-samples")
        return int(value) if value else None
    except Exception:  # progress only; the reader reports real errors
        return None


def add_arguments(parser):
    parser.add_argument("--lmdb_path", required=True, help="LMDB folder (with data.mdb)")


def run(args, options):
    return convert(args.lmdb_path, args.output, **options)
