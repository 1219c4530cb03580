"""MJSynth / Synth90k: `annotation*.txt` lines `./2911/6/77_heretical_35885.jpg 35885`.

The label is the middle part of the file name (between its first and last underscore); paths are
relative to the annotation file's folder.
"""

import glob
import os

from aster.tools import conversion


def label_from_path(path):
    """`./2911/6/77_heretical_35885.jpg` -> `heretical`; None when the name has no such part."""
    parts = os.path.splitext(os.path.basename(path))[0].split("_")
    return "_".join(parts[1:-1]) if len(parts) >= 3 else None


def read_samples(annotation_files):
    """Yields a Sample per annotation line; a Skip for lines whose file name carries no label."""
    for annotation_file in annotation_files:
        root = os.path.dirname(os.path.abspath(annotation_file))
        for number, line in conversion.read_text_lines(annotation_file):
            path = line.split()[0]
            label = label_from_path(path)
            if not label:
                yield conversion.Skip("no label in file name", f"{annotation_file}:{number}")
                continue
            rel = os.path.normpath(path)
            yield conversion.Sample(label, image_path=os.path.join(root, rel), filename=rel)


def expand_annotation_files(patterns):
    """Expands globs; raises ValueError naming any pattern that matches nothing."""
    files = []
    for pattern in patterns:
        matched = sorted(glob.glob(pattern))
        if not matched:
            raise ValueError(f"--annotation_files: {pattern!r} matches no file")
        files.extend(matched)
    return files


def convert(annotation_files, output_path, **options):
    """Converts the images listed in the annotation files (globs allowed)."""
    files = expand_annotation_files(annotation_files)
    total = sum(conversion.count_text_lines(f) for f in files)
    return conversion.convert_samples(read_samples(files), output_path, name="synth90k",
                                      total=total, **options)


def add_arguments(parser):
    parser.add_argument("--annotation_files", nargs="+", required=True,
                        help="annotation files or globs, e.g. mnt/ramdisk/max/90kDICT32px/"
                        "annotation_train.txt")


def run(args, options):
    return convert(args.annotation_files, args.output, **options)
