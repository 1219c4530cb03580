"""aster-eval: evaluates training checkpoints on the eval datasets.

    aster-eval --pipeline_config_path CONFIG --checkpoint_dir TRAIN_DIR --eval_dir EVAL_DIR
    aster-eval ... --run_once                      # only the newest checkpoint
    aster-eval ... --checkpoint_path TRAIN_DIR/model.ckpt-1000
    aster-eval ... --set eval_config.protocol=62 --set eval_config.batch_size=64

Without --run_once / --checkpoint_path it watches CHECKPOINT_DIR and evaluates every checkpoint
in step order as training writes them (see aster/evaluator.py and eval_util.checkpoint_loop),
until eval_config.max_evals, eval_config.eval_timeout_secs or the training run's final step.
Every eval_input_reader is evaluated for each checkpoint. After each checkpoint the Markdown
report (also in EVAL_DIR/results.md) is printed.

Exit status: 0 on success, 1 on a config, checkpoint or data problem (the message says which).
"""

import argparse
import sys

from aster.config_cli import add_override_flags, load_with_overrides
from aster.utils import cli_logging


def build_parser():
    parser = argparse.ArgumentParser(prog="aster-eval", description=__doc__.split("\n")[0])
    parser.add_argument("--pipeline_config_path", required=True, help="pipeline config file")
    parser.add_argument("--checkpoint_dir", default="",
                        help="training folder whose checkpoints are evaluated")
    parser.add_argument("--eval_dir", required=True, help="where reports and summaries go")
    parser.add_argument("--run_once", action="store_true",
                        help="evaluate only the newest checkpoint of --checkpoint_dir")
    parser.add_argument("--checkpoint_path", default="",
                        help="evaluate this one checkpoint (path prefix, e.g. dir/model.ckpt-100)")
    add_override_flags(parser)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    cli_logging.configure()
    from aster import eval_util, evaluator
    from aster.utils import config_util

    try:
        config = load_with_overrides(args)
        config_util.validate(config)

        def on_result(results):
            print(eval_util.format_markdown(results), flush=True)

        evaluator.run(config, args.eval_dir, checkpoint_dir=args.checkpoint_dir,
                      run_once=args.run_once, checkpoint_path=args.checkpoint_path,
                      on_result=on_result)
    except (ValueError, eval_util.CheckpointUnavailableError) as e:
        print(f"aster-eval: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
