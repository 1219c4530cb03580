"""The ICDAR ground-truth text formats shared by the IC13 and IC15 converters.

Word crops (`gt.txt`, `test_groundtruth_all.txt`, `Challenge*_Task3_GT.txt`):
    word_1.png, "Tiredness"
Boxes on full images (`gt_img_N.txt` beside `img_N.jpg`), 4 or 8 coordinates, comma or space
separated, then the text; `###` marks don't-care regions, which are skipped:
    38, 43, 920, 215, "Tiredness"
    158 128 411 181 "Footpath"
    377,117,463,117,465,130,378,130,Genaxis Theatre
"""

import glob
import os
import re

from aster.tools import conversion

_NUMBER = r"-?\d+(?:\.\d+)?"
_BOX_LINE = re.compile(rf"^\s*((?:{_NUMBER}[\s,]+){{4}}(?:(?:{_NUMBER}[\s,]+){{4}})?)(.*)$")
_IMAGE_EXTENSIONS = (".jpg", ".png", ".jpeg", ".JPG", ".PNG", ".gif", ".bmp")


def parse_crop_line(line):
    """`word_1.png, "text"` -> (file, text), or None when there is no comma."""
    name, comma, text = line.partition(",")
    if not comma or not name.strip():
        return None
    return name.strip(), conversion.unquote(text)


def parse_box_line(line):
    """A 4- or 8-coordinate box line -> ((x0, y0, x1, y1), text), or None if malformed."""
    match = _BOX_LINE.match(line)
    if not match:
        return None
    values = [float(v) for v in re.findall(_NUMBER, match.group(1))]
    xs, ys = values[0::2], values[1::2]
    return (min(xs), min(ys), max(xs), max(ys)), conversion.unquote(match.group(2))


def read_crop_gt(gt_file, image_dir=None):
    """Yields a Sample per `file, "text"` line (images relative to image_dir or the gt folder)."""
    root = image_dir or os.path.dirname(os.path.abspath(gt_file))
    for number, line in conversion.read_text_lines(gt_file):
        parsed = parse_crop_line(line)
        if parsed is None:
            yield conversion.Skip('expected file, "text"', f"{gt_file}:{number}")
            continue
        name, text = parsed
        yield conversion.Sample(text, image_path=os.path.join(root, name), filename=name)


def _image_for(gt_path, image_dir):
    """gt_img_7.txt -> image_dir/img_7.<ext> (the first extension that exists, else .jpg)."""
    stem = os.path.splitext(os.path.basename(gt_path))[0]
    stem = stem[len("gt_"):] if stem.startswith("gt_") else stem
    for ext in _IMAGE_EXTENSIONS:
        if os.path.exists(os.path.join(image_dir, stem + ext)):
            return stem + ext
    return stem + ".jpg"


def read_box_gt(gt_dir, image_dir=None):
    """Yields a Sample per word box of every `gt_img_*.txt` in gt_dir (crops of img_*.*)."""
    image_dir = image_dir or gt_dir
    gt_files = sorted(glob.glob(os.path.join(gt_dir, "gt_*.txt")))
    if not gt_files:
        raise ValueError(f"no gt_*.txt files in {gt_dir!r}")
    for gt_file in gt_files:
        name = _image_for(gt_file, image_dir)
        for index, (number, line) in enumerate(conversion.read_text_lines(gt_file)):
            parsed = parse_box_line(line)
            if parsed is None:
                yield conversion.Skip("expected coordinates then text", f"{gt_file}:{number}")
            elif parsed[1] == "###":
                yield conversion.Skip("don't-care ### box", f"{gt_file}:{number}")
            else:
                yield conversion.Sample(parsed[1], image_path=os.path.join(image_dir, name),
                                        box=parsed[0], filename=conversion.crop_name(name, index))


def read_samples(gt_file=None, gt_dir=None, image_dir=None):
    """Crop samples from a word-crop gt file, or from per-image box files in gt_dir."""
    if (gt_file is None) == (gt_dir is None):
        raise ValueError(f"give exactly one of gt_file ({gt_file!r}) and gt_dir ({gt_dir!r})")
    return read_crop_gt(gt_file, image_dir) if gt_file else read_box_gt(gt_dir, image_dir)


def convert(name, output_path, gt_file=None, gt_dir=None, image_dir=None, **options):
    """Converts either ICDAR layout; options go to conversion.convert_samples."""
    samples = list(read_samples(gt_file, gt_dir, image_dir))
    return conversion.convert_samples(samples, output_path, name=name, total=len(samples),
                                      **options)


def add_arguments(parser, crop_gt_example):
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--gt_file", help=f"word-crop ground truth, e.g. {crop_gt_example}")
    group.add_argument("--gt_dir", help="folder of gt_img_N.txt box files (full images)")
    parser.add_argument("--image_dir", help="image root (default: the gt file's folder / gt_dir)")


def run(name, args, options):
    return convert(name, args.output, gt_file=args.gt_file, gt_dir=args.gt_dir,
                   image_dir=args.image_dir, **options)
