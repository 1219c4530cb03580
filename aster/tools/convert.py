"""`aster-convert <format> [format args] --output PATH [--num_shards N]`: datasets to TFRecords.

    aster-convert folder --labels_file data/words/labels.txt --output data/words.tfrecord
    aster-convert synth90k --annotation_files 90kDICT32px/annotation_train.txt \\
        --output data/synth90k.tfrecord --num_shards 64
    aster-convert iiit5k --mat_file IIIT5K/testdata.mat --lexicon small \\
        --output data/iiit5k.tfrecord

Formats (see each module in aster/tools/converters/): folder, lmdb, synth90k, synthtext, iiit5k,
svt, ic03, ic13, ic15, svtp, cute80. Shards are named `<stem>-00000-of-00004.tfrecord`
(tfrecord_utils). Skipped entries are counted and summarised at the end.
"""

import argparse
import functools
import sys

from aster.tools.converters import (
    folder,
    ic03,
    ic13,
    ic15,
    iiit5k,
    image_list,
    lmdb_str,
    svt,
    synth90k,
    synthtext,
)
from aster.utils import cli, cli_logging

# name -> (help, add_arguments(parser), run(args, options) -> ConversionStats)
_CONVERTERS = {
    "folder": ("image folder + labels file (path<TAB>text lines)", folder.add_arguments,
               folder.run),
    "lmdb": ("LMDB STR layout (num-samples, image-%%09d, label-%%09d)", lmdb_str.add_arguments,
             lmdb_str.run),
    "synth90k": ("MJSynth annotation*.txt (label from the file name)", synth90k.add_arguments,
                 synth90k.run),
    "synthtext": ("SynthText gt.mat: word crops + curve keypoints", synthtext.add_arguments,
                  synthtext.run),
    "iiit5k": ("IIIT5K traindata.mat/testdata.mat with 50/1k lexicons", iiit5k.add_arguments,
               iiit5k.run),
    "svt": ("SVT test.xml: one record per tagged rectangle", svt.add_arguments, svt.run),
    "ic03": ("IC03 words.xml with full/50-word lexicons", ic03.add_arguments, ic03.run),
    "ic13": ("IC13 gt.txt word crops or gt_img_N.txt boxes", ic13.add_arguments, ic13.run),
    "ic15": ("IC15 test_groundtruth_all.txt word crops", ic15.add_arguments, ic15.run),
    "svtp": ("SVT-Perspective imagelist.txt", image_list.add_arguments,
             functools.partial(image_list.run, "svtp")),
    "cute80": ("CUTE80 imagelist.txt", image_list.add_arguments,
               functools.partial(image_list.run, "cute80")),
}


def _add_common_arguments(parser):
    parser.add_argument("--output", required=True,
                        help="output TFRecord path (shard names derive from it)")
    parser.add_argument("--num_shards", type=int, default=1, help="number of output files")
    parser.add_argument("--crop_format", choices=("png", "jpeg"), default="png",
                        help="encoding of cropped word images (whole images keep theirs)")
    parser.add_argument("--progress_every", type=int, default=1000,
                        help="entries between progress lines on stderr (0: none)")
    parser.add_argument("--limit", type=int, help="stop after writing this many records")
    cli.add_verbose_flag(parser)


def build_parser():
    """The argparse parser with one subcommand per registered converter."""
    parser = argparse.ArgumentParser(prog="aster-convert", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    subparsers = parser.add_subparsers(dest="format", required=True, metavar="FORMAT",
                                       help=", ".join(_CONVERTERS))
    for name, (help_text, add_arguments, _) in _CONVERTERS.items():
        subparser = subparsers.add_parser(name, help=help_text,
                                          description=help_text.replace("%%", "%"))
        add_arguments(subparser)
        _add_common_arguments(subparser)
    return parser


def main(argv=None):
    """Runs one converter; returns 0, or 2 with a message on stderr for a bad input."""
    args = build_parser().parse_args(argv)
    if args.verbose:
        cli_logging.configure(verbose=True)
    if args.num_shards < 1:
        print(f"aster-convert: error: --num_shards must be >= 1, got {args.num_shards}",
              file=sys.stderr)
        return 2
    options = {"num_shards": args.num_shards, "crop_format": args.crop_format,
               "progress_every": args.progress_every, "limit": args.limit}
    try:
        _CONVERTERS[args.format][2](args, options)
    except ValueError as err:
        print(f"aster-convert {args.format}: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
