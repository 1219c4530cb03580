"""ICDAR 2015 (incidental scene text): word crops listed in `test_groundtruth_all.txt` / `gt.txt`
(`word_1.png, "Genaxis Theatre"`), or full images with 8-coordinate `gt_img_N.txt` boxes (`###`
boxes skipped). See icdar.py."""

from aster.tools.converters import icdar

read_samples = icdar.read_samples


def convert(output_path, gt_file=None, gt_dir=None, image_dir=None, **options):
    """Converts IC15 (give gt_file for crops or gt_dir for box files)."""
    return icdar.convert("ic15", output_path, gt_file, gt_dir, image_dir, **options)


def add_arguments(parser):
    icdar.add_arguments(parser, "test_groundtruth_all.txt")


def run(args, options):
    return icdar.run("ic15", args, options)
