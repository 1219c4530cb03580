"""aster-export: writes a checkpoint as a SavedModel with a serving signature (or TFLite, ONNX).

    aster-export --pipeline_config_path CONFIG --checkpoint_path TRAIN_DIR/model.ckpt-1000 \\
                 --output_dir exported/aster [--format saved_model|tflite|onnx] [--decoding ...]

`--format tflite` (`onnx`) writes a LiteRT (ONNX) model on uint8 [N, h, w, 3] images that runs
without TensorFlow (aster/lite_export.py, aster/onnx_export.py, README "Deploying without ...").

The SavedModel (TF1 graph, tags ["serve"]) has one signature, "serving_default":

    inputs:  images            [B] string   encoded PNG, JPEG, GIF or BMP bytes, any size
    outputs: text              [B] string   UTF-8 transcription
             scores            [B] float32  its log-probability (higher is better)
             rectified_images  [B, h, w, 3] float32 in [-1, 1] (absent without rectification)
             control_points    [B, K, 2] float32, normalised (x, y) (absent without rectification)

Decoding and preprocessing happen in the graph (built by aster/inference.py): each image is
decoded to RGB, passed through eval_config.data_preprocessing_steps (as aster-eval does) and
resized (bilinear) to the model's input size (model.*.input_height x input_width); an
undecodable image fails the whole call with InvalidArgumentError. The weights are the
checkpoint's moving averages when eval_config.use_moving_averages is set. The pipeline config is
copied to OUTPUT_DIR/pipeline.config.

Loading it needs TensorFlow only, not this package:

    import tensorflow as tf
    serve = tf.saved_model.load("exported/aster").signatures["serving_default"]
    out = serve(images=tf.constant([open("word.png", "rb").read()]))
    print(out["text"].numpy()[0].decode(), out["scores"].numpy()[0])

`aster-demo --saved_model_dir exported/aster IMAGE...` runs it too. tests/export_test.py checks
that the SavedModel, loaded this way in a process that never imports `aster`, gives the
checkpoint's texts and scores.
"""

import argparse
import logging
import os
import shutil
import sys

from aster import lite_export, onnx_export
from aster.inference import INPUT_KEY, SIGNATURE_KEY, CheckpointPredictor, resolve_checkpoint
from aster.tf_setup import tf
from aster.utils import checkpoints, cli, cli_logging, config_util

logger = logging.getLogger(__name__)

EXPORTERS = {"tflite": lite_export.export_tflite, "onnx": onnx_export.export_onnx}


def export_saved_model(pipeline_config, checkpoint_path, output_dir, model_fn=None,
                       overwrite=False):
    """Writes the SavedModel described in the module docstring.

    Args:
      pipeline_config: pipeline_pb2.TrainEvalPipelineConfig.
      checkpoint_path: checkpoint prefix.
      output_dir: the SavedModel folder; must not exist unless overwrite.
      model_fn: see aster.inference.CheckpointPredictor.
      overwrite: replace an existing output_dir.

    Returns:
      output_dir.

    Raises:
      ValueError: output_dir exists (without overwrite), or see CheckpointPredictor.
    """
    if os.path.exists(output_dir):
        if not overwrite:
            raise ValueError(f"--output_dir {output_dir!r} already exists (use --overwrite)")
        shutil.rmtree(output_dir)
    with CheckpointPredictor(pipeline_config, checkpoint_path, model_fn) as predictor:
        with predictor.graph.as_default():
            signature = tf.saved_model.predict_signature_def(
                inputs={INPUT_KEY: predictor.inputs}, outputs=predictor.outputs)
            builder = tf.saved_model.Builder(output_dir)
            builder.add_meta_graph_and_variables(
                predictor.session, [tf.saved_model.SERVING],
                signature_def_map={SIGNATURE_KEY: signature},
                main_op=predictor.tables_init, strip_default_attrs=True)
            builder.save()
    config_util.save_pipeline_config(pipeline_config, os.path.join(output_dir, "pipeline.config"))
    logger.info("exported %s to %s", checkpoint_path, output_dir)
    return output_dir


def build_parser():
    parser = argparse.ArgumentParser(prog="aster-export", description=__doc__.split("\n")[0])
    parser.add_argument("--pipeline_config_path", default="",
                        help="pipeline config (default: pipeline.config beside the checkpoint)")
    parser.add_argument("--checkpoint_path", required=True,
                        help="checkpoint prefix, or a training folder (its newest checkpoint)")
    parser.add_argument("--output_dir", required=True, help="folder to create")
    parser.add_argument("--format", choices=("saved_model", *EXPORTERS), default="saved_model")
    parser.add_argument("--decoding", choices=lite_export.DECODINGS, default="greedy",
                        help="tflite, onnx: greedy (beam_width 1) or the config's beam search")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing output_dir")
    cli.add_override_flags(parser)
    cli.add_verbose_flag(parser)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    cli_logging.configure(verbose=args.verbose)
    try:
        checkpoint, config = resolve_checkpoint(args.checkpoint_path, args.pipeline_config_path,
                                                args.config_override, args.assignments)
        if args.format in EXPORTERS:
            EXPORTERS[args.format](config, checkpoint, args.output_dir, args.decoding,
                                   overwrite=args.overwrite)
        else:
            export_saved_model(config, checkpoint, args.output_dir, overwrite=args.overwrite)
    except config_util.ConfigError as e:
        return cli.config_error("aster-export", e)
    except (ValueError, checkpoints.CheckpointUnavailableError) as e:
        print(f"aster-export: {e}", file=sys.stderr)
        return 1
    print(f"exported {checkpoint} to {args.output_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
