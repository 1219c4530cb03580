"""aster-export: writes a checkpoint as a SavedModel, a LiteRT (TFLite) or an ONNX model.

    aster-export --pipeline_config_path CONFIG --checkpoint_path TRAIN_DIR/model.ckpt-1000 \\
                 --output_dir exported/aster [--format saved_model|tflite|onnx] \\
                 [--decoding greedy|beam] [--quantize none|float16|dynamic_int8]
    aster-export --checkpoint_path TRAIN_DIR --output_dir exported/aster    # its newest checkpoint
    aster-export --output_dir exported/aster_base    # the shipped base model

--checkpoint_path takes a checkpoint prefix, a training or model folder (its newest complete
checkpoint) or a shipped model's name (aster/utils/checkpoints.py, resolve); without it
aster-export exports the base model shipped in the package (aster_base). The pipeline config is
the one beside the checkpoint unless --pipeline_config_path is given.

--format saved_model (the default): encoded image bytes in, text out, loadable with TensorFlow
alone (aster/exporters/saved_model_export.py has the signature). tflite and onnx: uint8
[N, h, w, 3] images at the model's input size in, label ids, text (through the recognizer.py
written beside the model), scores and control points out, runnable without TensorFlow
(aster/exporters/lite_export.py, aster/exporters/onnx_export.py; README "Deploying without
TensorFlow"). --decoding and --quantize apply to those two (--quantize to tflite only).
"""

import argparse
import sys

from aster import pretrained
from aster.exporters import lite_export, onnx_export, saved_model_export
from aster.utils import checkpoints, cli, cli_logging, config_util

EXPORTERS = {"tflite": lite_export.export_tflite, "onnx": onnx_export.export_onnx}


def build_parser():
    parser = argparse.ArgumentParser(prog="aster-export", description=__doc__.split("\n")[0])
    parser.add_argument("--pipeline_config_path", default="",
                        help="pipeline config (default: pipeline.config beside the checkpoint)")
    cli.add_checkpoint_flag(parser, pretrained.DEFAULT_MODEL, "the shipped base model")
    parser.add_argument("--output_dir", required=True, help="folder to create")
    parser.add_argument("--format", choices=("saved_model", *EXPORTERS), default="saved_model")
    parser.add_argument("--decoding", choices=lite_export.DECODINGS, default="greedy",
                        help="tflite, onnx: greedy (beam_width 1) or the config's beam search")
    parser.add_argument("--quantize", choices=lite_export.QUANTIZATIONS, default="none",
                        help="tflite: post-training quantisation of the weights")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing output_dir")
    cli.add_override_flags(parser)
    cli.add_verbose_flag(parser)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    cli_logging.configure(verbose=args.verbose)
    try:
        checkpoint = checkpoints.resolve(args.checkpoint_path, "--checkpoint_path")
        args.pipeline_config_path = cli.config_beside(checkpoint, args.pipeline_config_path)
        config = cli.load_with_overrides(args)
        config_util.validate(config)
        if args.format in EXPORTERS:
            EXPORTERS[args.format](config, checkpoint, args.output_dir, args.decoding,
                                   args.quantize, overwrite=args.overwrite)
        else:
            lite_export.check_quantization(args.quantize, args.format)
            saved_model_export.export_saved_model(config, checkpoint, args.output_dir,
                                                  overwrite=args.overwrite)
    except config_util.ConfigError as e:
        return cli.config_error("aster-export", e)
    except (ValueError, checkpoints.CheckpointUnavailableError) as e:
        print(f"aster-export: {e}", file=sys.stderr)
        return 1
    print(f"exported {checkpoint} to {args.output_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
