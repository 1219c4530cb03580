"""IIIT5K (`traindata.mat` / `testdata.mat`: ImgName, GroundTruth, smallLexi, mediumLexi).

`lexicon="small"` stores each image's 50-word lexicon, `"medium"` its 1,000-word one, `"none"`
none. Image paths (e.g. `test/1002_1.png`) are relative to the .mat file's folder by default.
"""

import os

import numpy as np

from aster.tools import conversion
from aster.tools.converters import mat_utils

LEXICON_FIELDS = {"none": None, "small": "smallLexi", "medium": "mediumLexi"}


def _records(gt, mat_path):
    keys = [k for k in gt if not k.startswith("__")]
    if not keys:
        raise ValueError(f"{mat_path}: no data variable (expected traindata or testdata)")
    key = "testdata" if "testdata" in gt else "traindata" if "traindata" in gt else keys[0]
    records = np.asarray(gt[key]).ravel()
    if records.dtype.names is None or "ImgName" not in records.dtype.names:
        raise ValueError(f"{mat_path}: {key!r} is not a struct array with ImgName/GroundTruth")
    return records


def read_samples(mat_path, image_dir=None, lexicon="small"):
    """Yields a Sample per record of an IIIT5K .mat file."""
    if lexicon not in LEXICON_FIELDS:
        raise ValueError(f"lexicon {lexicon!r}; expected one of {sorted(LEXICON_FIELDS)}")
    root = image_dir or os.path.dirname(os.path.abspath(mat_path))
    records = _records(mat_utils.load(mat_path), mat_path)
    field = LEXICON_FIELDS[lexicon]
    if field and field not in records.dtype.names:
        raise ValueError(f"{mat_path}: no {field!r} field for lexicon={lexicon!r}")
    for number, record in enumerate(records):
        name = mat_utils.string(record["ImgName"])
        text = mat_utils.string(record["GroundTruth"])
        if not name:
            yield conversion.Skip("record without ImgName", f"{mat_path}[{number}]")
            continue
        words = mat_utils.strings(record[field]) if field else ()
        yield conversion.Sample(text, image_path=os.path.join(root, name), filename=name,
                                lexicon=tuple(w.strip() for w in words if w.strip()))


def convert(mat_path, output_path, image_dir=None, lexicon="small", **options):
    """Converts one IIIT5K .mat file; options go to conversion.convert_samples."""
    samples = list(read_samples(mat_path, image_dir, lexicon))
    return conversion.convert_samples(samples, output_path, name="iiit5k", total=len(samples),
                                      **options)


def add_arguments(parser):
    parser.add_argument("--mat_file", required=True, help="traindata.mat or testdata.mat")
    parser.add_argument("--image_dir", help="image root (default: the .mat file's folder)")
    parser.add_argument("--lexicon", choices=sorted(LEXICON_FIELDS), default="small",
                        help="small: 50 words, medium: 1k words, none")


def run(args, options):
    return convert(args.mat_file, args.output, image_dir=args.image_dir, lexicon=args.lexicon,
                   **options)
