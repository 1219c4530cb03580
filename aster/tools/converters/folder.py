"""Image folder + labels file: one `relative/path.png<TAB>text` line per image."""

import os

from aster.tools import conversion


def read_samples(labels_file, image_dir=None):
    """Yields a Sample per `path<TAB>text` line (paths relative to image_dir, default the
    labels file's folder) and a Skip per line without a tab or path."""
    root = image_dir or os.path.dirname(os.path.abspath(labels_file))
    for number, line in conversion.read_text_lines(labels_file):
        path, tab, text = line.partition("\t")
        if not tab or not path.strip():
            yield conversion.Skip("expected path<TAB>text", f"{labels_file}:{number}")
            continue
        path = path.strip()
        yield conversion.Sample(text, image_path=os.path.join(root, path), filename=path)


def convert(labels_file, output_path, image_dir=None, **options):
    """Converts a labels file and its images; options go to conversion.convert_samples."""
    return conversion.convert_samples(
        read_samples(labels_file, image_dir), output_path, name="folder",
        total=conversion.count_text_lines(labels_file), **options)


def add_arguments(parser):
    parser.add_argument("--labels_file", required=True, help="file of path<TAB>text lines")
    parser.add_argument("--image_dir", help="root of the image paths (default: the labels "
                        "file's folder)")


def run(args, options):
    return convert(args.labels_file, args.output, image_dir=args.image_dir, **options)
