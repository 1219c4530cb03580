"""ICDAR 2013 (focused scene text): word crops with `gt.txt` (`word_1.png, "Tiredness"`), or full
images `img_N.jpg` with boxes in `gt_img_N.txt` (`38, 43, 920, 215, "Tiredness"`). See icdar.py."""

from aster.tools.converters import icdar

read_samples = icdar.read_samples


def convert(output_path, gt_file=None, gt_dir=None, image_dir=None, **options):
    """Converts IC13 (give gt_file for crops or gt_dir for box files)."""
    return icdar.convert("ic13", output_path, gt_file, gt_dir, image_dir, **options)


def add_arguments(parser):
    icdar.add_arguments(parser, "Challenge2_Test_Task3_GT.txt")


def run(args, options):
    return icdar.run("ic13", args, options)
