"""The LMDB layout most STR releases ship in (`num-samples`, `image-%09d`, `label-%09d`).

Reading is `aster.readers.lmdb_reader.LmdbSamples(path)`, which yields (index, image_bytes,
label_str); this module only maps its entries to samples.
"""

import os

from aster.tools import conversion


def read_samples(lmdb_samples):
    """Yields a Sample per entry of an LmdbSamples, named `<database folder>/image-<index>`."""
    name = os.path.basename(os.path.normpath(lmdb_samples.path))
    for index, image_bytes, label in lmdb_samples:
        yield conversion.Sample(label, image_bytes=image_bytes,
                                filename=f"{name}/image-{int(index):09d}")


def convert(lmdb_path, output_path, **options):
    """Converts one LMDB database (a folder with data.mdb); options go to convert_samples.

    Raises:
      ValueError: when there is no database at lmdb_path or it has no num-samples entry.
    """
    from aster.readers.lmdb_reader import LmdbSamples

    samples = LmdbSamples(lmdb_path)
    return conversion.convert_samples(read_samples(samples), output_path, name="lmdb",
                                      total=len(samples), **options)


def add_arguments(parser):
    parser.add_argument("--lmdb_path", required=True, help="LMDB folder (with data.mdb)")


def run(args, options):
    return convert(args.lmdb_path, args.output, **options)
