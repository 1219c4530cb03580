"""`imagelist.txt`-style lists (SVT-Perspective, CUTE80): image path, label, optional lexicon.

One image per line: `path label [lexicon]`, whitespace separated, or tab separated when the line
has a tab (so labels may contain spaces). The optional lexicon is the rest of the line: words
separated by commas (or, without commas, by whitespace). Paths are relative to the list's folder.
"""

import os
import re

from aster.tools import conversion


def parse_line(line):
    """-> (path, label, lexicon words) or None when the line has no label."""
    parts = line.split("\t") if "\t" in line else line.split(None, 2)
    parts = [p.strip() for p in parts]
    if len(parts) < 2 or not parts[0] or not parts[1]:
        return None
    rest = " ".join(parts[2:])
    words = re.split(r"\s*,\s*", rest) if "," in rest else rest.split()
    return parts[0], parts[1], tuple(w for w in words if w)


def read_samples(list_file, image_dir=None, use_lexicon=True):
    """Yields a Sample per list line; a Skip for lines without a label."""
    root = image_dir or os.path.dirname(os.path.abspath(list_file))
    for number, line in conversion.read_text_lines(list_file):
        parsed = parse_line(line)
        if parsed is None:
            yield conversion.Skip("expected path and label", f"{list_file}:{number}")
            continue
        path, label, words = parsed
        yield conversion.Sample(label, image_path=os.path.join(root, path), filename=path,
                                lexicon=words if use_lexicon else ())


def convert(name, list_file, output_path, image_dir=None, use_lexicon=True, **options):
    """Converts an image list; `name` labels progress lines (svtp, cute80)."""
    return conversion.convert_samples(
        read_samples(list_file, image_dir, use_lexicon), output_path, name=name,
        total=conversion.count_text_lines(list_file), **options)


def add_arguments(parser):
    parser.add_argument("--list_file", required=True, help="imagelist.txt")
    parser.add_argument("--image_dir", help="image root (default: the list file's folder)")
    parser.add_argument("--no_lexicon", action="store_true", help="ignore lexicon columns")


def run(name, args, options):
    return convert(name, args.list_file, args.output, image_dir=args.image_dir,
                   use_lexicon=not args.no_lexicon, **options)
