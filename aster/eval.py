"""aster-eval: evaluates training checkpoints on the eval datasets.

    aster-eval --pipeline_config_path CONFIG --checkpoint_dir TRAIN_DIR --eval_dir EVAL_DIR
    aster-eval ... --run_once                      # only the newest checkpoint
    aster-eval ... --checkpoint_path TRAIN_DIR/model.ckpt-1000
    aster-eval --eval_dir out --checkpoint_path aster_base    # a shipped model, by its name
    aster-eval ... --set eval_config.protocol=62 --set eval_config.batch_size=64
    aster-eval ... --run_once --labels_file my_crops/labels.txt   # your own labelled crops
    aster-eval --eval_dir out --labels_file my_crops/labels.txt   # the shipped base model

--checkpoint_path takes a checkpoint prefix, a training or model folder (its newest complete
checkpoint) or a shipped model's name (checkpoints.resolve), read with the pipeline.config beside
the checkpoint unless --pipeline_config_path is given. Without --checkpoint_dir and
--checkpoint_path it evaluates the base model shipped in the package (aster_base) with its own
pipeline.config; that config's datasets are `make pretrain`'s data/base sets, relative to the
repository root.

--labels_file evaluates a folder of word images instead of the config's eval_input_readers:
one `relative/path.png<TAB>text` line per image (the `aster-convert folder` format; paths are
relative to --image_dir, default the labels file's folder). The images are converted once into
EVAL_DIR/<name>.tfrecord (name: the labels file's folder) and reported under that name.

Without --run_once / --checkpoint_path it watches CHECKPOINT_DIR and evaluates every checkpoint
in step order as training writes them (see aster/evaluator.py and checkpoints.checkpoint_loop),
until eval_config.max_evals, eval_config.eval_timeout_secs or the training run's final step.
Every eval_input_reader is evaluated for each checkpoint. After each checkpoint the Markdown
report (also in EVAL_DIR/results.md) is printed.

Exit status: 0 on success, 2 on a config error or bad usage, 1 on a checkpoint or data problem.
"""

import argparse
import os
import sys

from aster import pretrained
from aster.utils import cli_logging
from aster.utils.cli import (
    add_checkpoint_flag,
    add_override_flags,
    add_verbose_flag,
    config_beside,
    config_error,
    load_with_overrides,
)


def build_parser():
    parser = argparse.ArgumentParser(prog="aster-eval", description=__doc__.split("\n")[0])
    parser.add_argument("--pipeline_config_path", default="",
                        help="pipeline config file (required with --checkpoint_dir; "
                             "default: the pipeline.config beside the checkpoint)")
    parser.add_argument("--checkpoint_dir", default="",
                        help="training folder whose checkpoints are evaluated (default, with no "
                             "--checkpoint_path: the shipped base model)")
    parser.add_argument("--eval_dir", required=True, help="where reports and summaries go")
    parser.add_argument("--run_once", action="store_true",
                        help="evaluate only the newest checkpoint of --checkpoint_dir")
    add_checkpoint_flag(parser, "", "the shipped base model when --checkpoint_dir is not given")
    parser.add_argument("--labels_file", default="",
                        help="evaluate the images this path<TAB>text file lists instead of the "
                        "config's eval_input_readers")
    parser.add_argument("--image_dir", default="",
                        help="root of --labels_file's image paths (default: its folder)")
    add_override_flags(parser)
    add_verbose_flag(parser)
    return parser


def use_labelled_folder(config, labels_file, image_dir, eval_dir):
    """Points the config's evaluation at a converted labels-file folder; returns its name.

    Raises:
      ValueError: the labels file is missing or yields no image.
    """
    from aster.tools.converters import folder

    if not os.path.isfile(labels_file):
        raise ValueError(f"--labels_file {labels_file}: no such file")
    root = os.path.dirname(os.path.abspath(labels_file))
    name = os.path.basename(os.path.abspath(image_dir or root)) or "folder"
    output = os.path.join(eval_dir, f"{name}.tfrecord")
    os.makedirs(eval_dir, exist_ok=True)
    stats = folder.convert(labels_file, output, image_dir=image_dir or None,
                           progress_every=0, stream=sys.stderr)
    if not stats.written:
        raise ValueError(f"--labels_file {labels_file}: no image could be read (skipped: "
                         f"{dict(stats.skipped)})")
    from aster.protos import input_reader_pb2

    readers = config.eval_input_reader
    template = input_reader_pb2.InputReader()
    if readers:  # keep the first reader's settings (label length, readers), not its source
        template.CopyFrom(readers[0])
        source = template.WhichOneof("input_reader")
        if source:
            template.ClearField(source)
    template.tf_record_input_reader.input_path = output
    template.shuffle, template.num_epochs = False, 1
    del readers[:]
    readers.add().CopyFrom(template)
    del config.eval_config.dataset_name[:]
    config.eval_config.dataset_name.append(name)
    return name


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.checkpoint_dir and not args.pipeline_config_path:
        parser.error("--pipeline_config_path is required with --checkpoint_dir")
    cli_logging.configure(verbose=args.verbose)
    from aster import eval_reports, evaluator
    from aster.utils import checkpoints, config_util

    try:
        if args.checkpoint_path or not args.checkpoint_dir:
            args.checkpoint_path = checkpoints.resolve(
                args.checkpoint_path or pretrained.DEFAULT_MODEL, "--checkpoint_path")
            args.pipeline_config_path = config_beside(args.checkpoint_path,
                                                      args.pipeline_config_path)
        config = load_with_overrides(args)
        if args.labels_file:
            use_labelled_folder(config, args.labels_file, args.image_dir, args.eval_dir)
        config_util.validate(config)

        def on_result(results):
            print(eval_reports.format_markdown(results), flush=True)

        evaluator.run(config, args.eval_dir, checkpoint_dir=args.checkpoint_dir,
                      run_once=args.run_once, checkpoint_path=args.checkpoint_path,
                      on_result=on_result)
    except config_util.ConfigError as e:
        return config_error("aster-eval", e)
    except (ValueError, checkpoints.CheckpointUnavailableError) as e:
        print(f"aster-eval: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
