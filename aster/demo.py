"""aster-demo: reads the text in word images with the shipped model, a checkpoint or a SavedModel.

    aster-demo word1.png word2.jpg                     # the shipped base model (aster_base)
    aster-demo --checkpoint_path runs/demo_cpu [--pipeline_config_path CONFIG] word1.png
    aster-demo --saved_model_dir exported/aster word1.png [--output_dir out/]

Prints one line per image, `<path>\\t<text>\\t<score>` (score = log-probability). Writes no
file unless --output_dir is given; then the rectified image of each input goes there as
`<name>_rectified.png`. Without a model flag it reads with the base model shipped in the package
(models/aster_base, see its MODEL_CARD.md). --checkpoint_path takes a checkpoint prefix, a
training or model folder (its newest complete checkpoint) or a shipped model's name
(checkpoints.resolve); its config defaults to the pipeline.config beside the checkpoint. An
image that cannot be read is reported on stderr and skipped.

Exit status: 0 when every image was read, 2 on a config error or bad usage, 1 when any image
failed or on a checkpoint problem.
"""

import argparse
import logging
import os
import sys

import numpy as np
from PIL import Image

from aster import pretrained
from aster.utils import cli, cli_logging, config_util


def rectified_path(image_path, output_dir):
    """Where the rectified image of `image_path` goes in output_dir."""
    stem = os.path.splitext(os.path.basename(image_path))[0]
    return os.path.join(output_dir, f"{stem}_rectified.png")


def run_demo(predictor, image_paths, output_dir="", batch_size=16, out=None):
    """Recognizes the images; prints and returns [(path, text, score, rectified_path or None)].

    The rectified images are written only when output_dir is given. Unreadable images are
    reported on stderr and left out.
    """
    from aster import inference
    from aster.utils import visualization

    out = out or sys.stdout
    images, errors = inference.read_image_files(image_paths)
    for message in errors:
        print(message, file=sys.stderr)
    if output_dir:
        os.makedirs(output_dir, exist_ok=True)
    results = []
    for start in range(0, len(images), batch_size):
        chunk = images[start:start + batch_size]
        outputs = predictor.predict([data for _, data in chunk])
        for i, (path, _) in enumerate(chunk):
            text = outputs["text"][i].decode("utf-8", errors="replace")
            score = float(outputs["scores"][i])
            saved = None
            if output_dir and "rectified_images" in outputs:
                saved = rectified_path(path, output_dir)
                pixels = visualization.to_uint8(np.asarray(outputs["rectified_images"][i]),
                                                (-1.0, 1.0))
                Image.fromarray(pixels).save(saved)
            print(f"{path}\t{text}\t{score:.4f}", file=out)
            results.append((path, text, score, saved))
    return results, errors


def build_parser():
    parser = argparse.ArgumentParser(prog="aster-demo", description=__doc__.split("\n")[0])
    parser.add_argument("images", nargs="+", help="image files (PNG, JPEG, ...)")
    cli.add_model_flags(parser, pretrained.DEFAULT_MODEL)
    parser.add_argument("--output_dir", default="",
                        help="write each image's rectified image here as <name>_rectified.png "
                             "(default: write no file)")
    parser.add_argument("--batch_size", type=int, default=16, help="images per run")
    cli.add_override_flags(parser)
    cli.add_verbose_flag(parser)
    return parser


def main(argv=None):
    # This process restores one model and never changes its weights, so TensorFlow's oneDNN
    # convolutions may keep their reordered filters between calls: without it they reorder them
    # on every call, which made batch-1 recognition ~4x slower than Eigen's (demo_cpu greedy:
    # 12.6 ms Eigen, 49.0 oneDNN, 10.0 with this; docs/history, "oneDNN on CPUs without
    # AVX-512"). Only in effect before TensorFlow is imported; never set in training processes.
    os.environ.setdefault("TF_ONEDNN_ASSUME_FROZEN_WEIGHTS", "1")
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.batch_size < 1:
        parser.error(f"--batch_size must be >= 1, got {args.batch_size}")
    cli_logging.configure(logging.WARNING, "%(levelname)s %(message)s", verbose=args.verbose)
    from aster import inference
    from aster.utils import checkpoints

    try:
        if args.saved_model_dir:
            predictor = inference.SavedModelPredictor(args.saved_model_dir)
        else:
            checkpoint = checkpoints.resolve(args.checkpoint_path, "--checkpoint_path")
            args.pipeline_config_path = cli.config_beside(checkpoint, args.pipeline_config_path)
            config = cli.load_with_overrides(args)
            config_util.validate(config)
            predictor = inference.CheckpointPredictor(config, checkpoint)
        try:
            _, errors = run_demo(predictor, args.images, args.output_dir, args.batch_size)
        finally:
            predictor.close()
    except config_util.ConfigError as e:
        return cli.config_error("aster-demo", e)
    except (ValueError, checkpoints.CheckpointUnavailableError) as e:
        print(f"aster-demo: {e}", file=sys.stderr)
        return 1
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
