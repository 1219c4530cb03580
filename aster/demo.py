"""aster-demo: reads the text in word images with a checkpoint or an exported SavedModel.

    aster-demo --checkpoint_path runs/demo_cpu [--pipeline_config_path CONFIG] word1.png word2.jpg
    aster-demo --saved_model_dir exported/aster word1.png [--output_dir out/]

Prints one line per image, `<path>\\t<text>\\t<score>` (score = log-probability), and saves the
rectified image as `<name>_rectified.png` beside each input (or in --output_dir). A checkpoint
path may be a training folder (its newest checkpoint is used); its config defaults to the
pipeline.config beside it. An image that cannot be read is reported on stderr and skipped.

Exit status: 0 when every image was read, 1 when any failed or on a config/checkpoint problem.
"""

import argparse
import io
import logging
import os
import sys

import numpy as np
from PIL import Image

from aster.data_decoders.tf_example_decoder import MAX_PIXELS
from aster.tf_setup import tf
from aster.utils import cli_logging, config_util


class SavedModelPredictor:
    """Runs an aster-export SavedModel in a graph-mode session (same outputs as the checkpoint)."""

    def __init__(self, saved_model_dir):
        from aster import export

        self.graph = tf.Graph()
        self.session = tf.Session(graph=self.graph)
        with self.graph.as_default():
            try:
                meta = tf.saved_model.loader.load(self.session, [tf.saved_model.SERVING],
                                                  saved_model_dir)
            except (OSError, RuntimeError, tf.errors.OpError) as e:
                raise ValueError(f"--saved_model_dir {saved_model_dir!r}: cannot load a "
                                 f"SavedModel: {e}") from e
        signature = meta.signature_def[export.SIGNATURE_KEY]
        self.input_name = signature.inputs[export.INPUT_KEY].name
        self.outputs = {k: v.name for k, v in signature.outputs.items()}

    def predict(self, encoded_images):
        return self.session.run(self.outputs, {self.input_name: list(encoded_images)})

    def close(self):
        self.session.close()


def read_images(paths):
    """Reads image files, checking each decodes. Returns (list of (path, bytes), list of errors)."""
    images, errors = [], []
    for path in paths:
        try:
            with open(path, "rb") as f:
                data = f.read()
            with Image.open(io.BytesIO(data)) as image:
                if image.width * image.height > MAX_PIXELS:  # a decompression bomb: no load()
                    raise ValueError(f"{image.width}x{image.height} pixels is more than "
                                     f"{MAX_PIXELS}")
                image.load()
        except (OSError, ValueError, Image.DecompressionBombError) as e:
            errors.append(f"{path}: cannot read the image ({e})")
            continue
        images.append((path, data))
    return images, errors


def rectified_path(image_path, output_dir=""):
    """Where the rectified image of `image_path` goes."""
    stem = os.path.splitext(os.path.basename(image_path))[0]
    folder = output_dir or os.path.dirname(os.path.abspath(image_path))
    return os.path.join(folder, f"{stem}_rectified.png")


def run_demo(predictor, image_paths, output_dir="", batch_size=16, out=None):
    """Recognizes the images; prints and returns [(path, text, score, rectified_path or None)].

    Unreadable images are reported on stderr and left out.
    """
    from aster.utils import visualization

    out = out or sys.stdout
    images, errors = read_images(image_paths)
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
            if "rectified_images" in outputs:
                saved = rectified_path(path, output_dir)
                pixels = visualization.to_uint8(np.asarray(outputs["rectified_images"][i]),
                                                (-1.0, 1.0))
                Image.fromarray(pixels).save(saved)
            print(f"{path}\t{text}\t{score:.4f}", file=out)
            results.append((path, text, score, saved))
    return results, errors


def build_parser():
    from aster.config_cli import add_override_flags

    parser = argparse.ArgumentParser(prog="aster-demo", description=__doc__.split("\n")[0])
    parser.add_argument("images", nargs="+", help="image files (PNG, JPEG, ...)")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--checkpoint_path", help="checkpoint prefix or training folder")
    source.add_argument("--saved_model_dir", help="a SavedModel written by aster-export")
    parser.add_argument("--pipeline_config_path", default="",
                        help="pipeline config for --checkpoint_path (default: the "
                             "pipeline.config beside the checkpoint)")
    parser.add_argument("--output_dir", default="",
                        help="where rectified images go (default: beside each image)")
    parser.add_argument("--batch_size", type=int, default=16, help="images per run")
    add_override_flags(parser)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.batch_size < 1:
        parser.error(f"--batch_size must be >= 1, got {args.batch_size}")
    cli_logging.configure(logging.WARNING, "%(levelname)s %(message)s")
    from aster import eval_util, export

    try:
        if args.saved_model_dir:
            predictor = SavedModelPredictor(args.saved_model_dir)
        else:
            checkpoint, config = export.resolve_checkpoint(
                args.checkpoint_path, args.pipeline_config_path, args.config_override,
                args.assignments)
            predictor = export.CheckpointPredictor(config, checkpoint)
        try:
            _, errors = run_demo(predictor, args.images, args.output_dir, args.batch_size)
        finally:
            predictor.close()
    except config_util.ConfigError as e:
        from aster.config_cli import config_error

        return config_error("aster-demo", e)
    except (ValueError, eval_util.CheckpointUnavailableError) as e:
        print(f"aster-demo: {e}", file=sys.stderr)
        return 1
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
