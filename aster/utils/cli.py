"""What every aster command shares: its common flags, config loading and exit statuses.

Exit status, in every command: 0 on success; 2 for bad usage or a config error (one line naming
the field; argparse's usage errors are 2 as well); 1 for a runtime failure (a missing checkpoint,
a loss that became NaN, a failed checkpoint write, a lost ps task).

No TensorFlow here: aster-config and the argument parsers of the other commands use it.
"""

import os
import sys

from aster.utils import config_util

OK_STATUS = 0
RUNTIME_ERROR_STATUS = 1
CONFIG_ERROR_STATUS = 2  # the exit status of a config error or bad usage (argparse's too)


def config_error(prog, error):
    """Prints a config error as one line on stderr; returns CONFIG_ERROR_STATUS."""
    print(f"{prog}: config error: {error}", file=sys.stderr)
    return CONFIG_ERROR_STATUS


def fail(prog, error, status=RUNTIME_ERROR_STATUS):
    """Prints `prog: error: ERROR` on stderr; returns `status`."""
    print(f"{prog}: error: {error}", file=sys.stderr, flush=True)
    return status


def add_override_flags(parser):
    """Adds --config_override and --set, shared by every command that reads a pipeline config."""
    parser.add_argument("--config_override", default="",
                        help="text-format snippet merged into the config "
                             "(repeated fields named in it replace the config's lists)")
    parser.add_argument("--set", dest="assignments", action="append", default=[],
                        metavar="PATH=VALUE",
                        help="dotted assignment, e.g. train_config.num_steps=10 or "
                             "train_input_reader[0].tf_record_input_reader.input_path=a.tfrecord; "
                             "repeatable")


def add_verbose_flag(parser):
    """Adds --verbose, which shows TensorFlow's start-up messages (see aster.utils.cli_logging)."""
    parser.add_argument("--verbose", action="store_true",
                        help="also show TensorFlow's start-up messages and deprecation warnings")


def add_checkpoint_flag(parser, default, help_default):
    """Adds --checkpoint_path: anything checkpoints.resolve takes."""
    parser.add_argument("--checkpoint_path", default=default,
                        help="the checkpoint: a prefix (dir/model.ckpt-500), a training or model "
                             "folder (its newest complete checkpoint) or a shipped model's name "
                             f"(aster_base); default: {help_default}")


def add_model_flags(parser, default_checkpoint):
    """Adds the model a serving command reads: --checkpoint_path (default_checkpoint) or
    --saved_model_dir, and --pipeline_config_path for the checkpoint."""
    source = parser.add_mutually_exclusive_group()
    add_checkpoint_flag(source, default_checkpoint, default_checkpoint)
    source.add_argument("--saved_model_dir", help="a SavedModel written by aster-export")
    parser.add_argument("--pipeline_config_path", default="",
                        help="pipeline config for --checkpoint_path (default: the "
                             "pipeline.config beside the checkpoint)")


def config_beside(checkpoint, pipeline_config_path=""):
    """pipeline_config_path, or else the pipeline.config beside the checkpoint prefix `checkpoint`
    (from checkpoints.resolve: the one its training run saved, or a model folder's own).

    Raises:
      ValueError: none given and none beside the checkpoint.
    """
    if pipeline_config_path:
        return pipeline_config_path
    beside = os.path.join(os.path.dirname(checkpoint), config_util.PIPELINE_FILENAME)
    if not os.path.isfile(beside):
        raise ValueError(f"--pipeline_config_path is required: no {config_util.PIPELINE_FILENAME} "
                         f"beside {checkpoint}")
    return beside


def load_with_overrides(args):
    """Loads args.config (or args.pipeline_config_path) and applies the override flags."""
    path = getattr(args, "config", None) or args.pipeline_config_path
    config = config_util.load_pipeline_config(path)
    return config_util.merge_overrides(config, args.config_override, args.assignments)
