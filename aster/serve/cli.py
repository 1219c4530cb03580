"""aster-serve: serves a recognizer over HTTP on 127.0.0.1 (an API and a web page).

    aster-serve                                              # the shipped model, port 8080
    aster-serve --checkpoint_path runs/demo_cpu [--pipeline_config_path CONFIG]
    aster-serve --saved_model_dir exported/aster --port 9000

Loads the model first: one that cannot load (no checkpoint, a damaged model folder, a config that
does not match) stops the command with one line on stderr before any port is bound, exit status 1
(2 for a config error or bad usage, as in every aster command). Then serves until interrupted:
the page at `/`, POST /v1/recognize, GET /v1/model and GET /healthz (aster/serve/app.py;
docs/deploying.md, "HTTP API"). Needs the `serve` extra: pip install 'aster-tf[serve]'.
"""

import argparse
import logging
import os
import sys

from aster import pretrained
from aster.utils import cli, cli_logging

PROG = "aster-serve"


def build_parser():
    from aster.serve import limits

    defaults = limits.Limits  # the dataclass's defaults, without building one (no TensorFlow)
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    source = parser.add_mutually_exclusive_group()
    cli.add_checkpoint_flag(source, pretrained.DEFAULT_MODEL, "the shipped base model")
    source.add_argument("--saved_model_dir", help="a SavedModel written by aster-export")
    parser.add_argument("--pipeline_config_path", default="",
                        help="pipeline config for --checkpoint_path (default: the "
                             "pipeline.config beside the checkpoint)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default: 127.0.0.1, this machine only)")
    parser.add_argument("--port", type=int, default=8080, help="port (default: 8080)")
    parser.add_argument("--max_batch_size", type=int, default=32,
                        help="most images the model runs at once (default: 32)")
    parser.add_argument("--max_wait_ms", type=float, default=5.0,
                        help="longest wait for more images to fill a batch (default: 5)")
    parser.add_argument("--max_request_bytes", type=int, default=defaults.max_request_bytes,
                        help=f"largest request body (default: {defaults.max_request_bytes})")
    parser.add_argument("--max_images", type=int, default=defaults.max_images,
                        help=f"most images in one request (default: {defaults.max_images})")
    parser.add_argument("--max_pixels", type=int, default=None,
                        help="most pixels in one image (default and largest: the data "
                             "pipeline's decompression-bomb limit, MAX_PIXELS of "
                             "aster/data_decoders/tf_example_decoder.py)")
    parser.add_argument("--timeout_secs", type=float, default=defaults.timeout_secs,
                        help="longest wait for a request's body, and for the model's answer "
                             f"(default: {defaults.timeout_secs:g})")
    cli.add_override_flags(parser)
    cli.add_verbose_flag(parser)
    return parser


def _check_flags(parser, args):
    """The limits of the flags; parser.error (exit 2) on a bad value."""
    from aster.serve import limits

    if args.max_batch_size < 1:
        parser.error(f"--max_batch_size must be >= 1, got {args.max_batch_size}")
    if args.max_wait_ms < 0:
        parser.error(f"--max_wait_ms must be >= 0, got {args.max_wait_ms}")
    try:
        return limits.Limits(args.max_request_bytes, args.max_images, args.max_pixels,
                             args.timeout_secs)
    except ValueError as e:
        parser.error(f"--{e}")


def main(argv=None):
    # As in aster-demo: this process never changes the weights, so oneDNN may keep its reordered
    # filters between calls (batch-1 recognition ~4x faster on CPUs without AVX-512).
    os.environ.setdefault("TF_ONEDNN_ASSUME_FROZEN_WEIGHTS", "1")
    parser = build_parser()
    args = parser.parse_args(argv)
    request_limits = _check_flags(parser, args)
    cli_logging.configure(logging.WARNING, "%(levelname)s %(message)s", verbose=args.verbose)
    try:
        import uvicorn

        from aster.serve import app, batching, loading
    except ImportError as e:
        return cli.fail(PROG, f"{e}: install the serve extra (pip install 'aster-tf[serve]')")
    from aster.utils import checkpoints, config_util

    try:
        predictor, info = loading.load_model(
            args.checkpoint_path, args.pipeline_config_path, args.saved_model_dir or "",
            args.config_override, args.assignments)
    except config_util.ConfigError as e:
        return cli.config_error(PROG, e)
    except (ValueError, checkpoints.CheckpointUnavailableError) as e:
        return cli.fail(PROG, f"cannot load the model: {_one_line(e)}")
    batcher = batching.Batcher(predictor, args.max_batch_size, args.max_wait_ms / 1000.0)
    try:
        application = app.build_app(batcher, info, request_limits)
        print(f"{PROG}: serving {info['name']} on http://{args.host}:{args.port}/",
              file=sys.stderr, flush=True)
        uvicorn.run(application, host=args.host, port=args.port, log_level="warning",
                    timeout_graceful_shutdown=5)
    finally:
        batcher.close()
        predictor.close()
    return 0


def _one_line(error):
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


if __name__ == "__main__":
    sys.exit(main())
