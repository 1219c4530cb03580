"""aster-train: trains a model from a pipeline config (also `python -m aster.train`).

    aster-train --pipeline_config_path configs/tiny.config --train_dir /tmp/tiny \\
        --set train_config.num_steps=20 [--num_clones 2 --clone_on_cpu]

Rerunning the same command resumes from the newest checkpoint in --train_dir.

Distributed (TensorFlow's ps/worker runtime): set TF_CONFIG in each process, e.g.
    {"cluster": {"ps": ["host:2222"], "worker": ["host:2223", "host:2224"]},
     "task": {"type": "worker", "index": 0}}
and run the same command in each; see aster/utils/cluster.py for the chief, the ps tasks and how
a lost ps task stops the workers (exit 1, naming the task and the newest checkpoint).

Exit status: 0 on success, 2 for bad usage or a config error, 1 for a runtime failure (a loss
that became NaN, a failed checkpoint write, a lost task of the cluster).
"""

import argparse
import logging
import os
import sys

from aster import trainer
from aster.tf_setup import tf
from aster.utils import cli, cli_logging, cluster, config_util, hooks, model_deploy

_LOG = logging.getLogger("aster.train")

PROG = "aster-train"


def build_parser():
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("--pipeline_config_path", required=True, help="text-format pipeline config")
    parser.add_argument("--train_dir", required=True, help="checkpoints and summaries go here")
    cli.add_override_flags(parser)
    parser.add_argument("--num_clones", type=int, default=1, help="model clones on this worker")
    parser.add_argument("--clone_on_cpu", action="store_true",
                        help="put the clones on (logical) CPU devices")
    cli.add_verbose_flag(parser)
    return parser


def _load_config(args):
    config = cli.load_with_overrides(args)
    # The training files must exist now, before any graph is built (a missing one used to
    # surface as a traceback from the input builder); eval readers need not exist for training.
    config_util.validate(config, check_files="train")
    return config


def _deploy_config(args, info):
    clone_on_cpu = args.clone_on_cpu
    if not clone_on_cpu and not tf.config.list_physical_devices("GPU"):
        _LOG.info("no GPU visible: the clones run on CPU devices")
        clone_on_cpu = True
    return model_deploy.DeploymentConfig(
        num_clones=args.num_clones, clone_on_cpu=clone_on_cpu, replica_id=info.replica_id,
        num_replicas=info.num_replicas, num_ps_tasks=info.num_ps_tasks,
        worker_job_name=info.task_type, worker_task_index=info.task_index)


def _train(config, args, info, build_model):
    """Trains as this task of the cluster (or locally); returns the exit code."""
    try:
        deploy = _deploy_config(args, info)
    except ValueError as error:
        return cli.fail(PROG, error, cli.CONFIG_ERROR_STATUS)
    lost_after = cluster.ps_lost_after_secs(config.train_config.operation_timeout_ms)
    try:
        with cluster.worker(info, args.train_dir, deploy, lost_after) as master:
            role = trainer.ClusterRole(master=master, task=info.task_index,
                                       is_chief=info.is_chief)
            trainer.train(config, args.train_dir, deploy, cluster=role,
                          seams=trainer.Seams(build_model=build_model))
    except config_util.ConfigError as error:  # a builder's: the same rules as validate
        return cli.config_error(PROG, error)
    except (trainer.NonFiniteLossError, hooks.CheckpointWriteError,
            cluster.ClusterLostError) as error:
        return cli.fail(PROG, error)
    return cli.OK_STATUS


def main(argv=None, build_model=None):
    """Entry point of aster-train; returns the exit code.

    Args:
      argv: command-line arguments (default sys.argv[1:]).
      build_model: optional model builder replacing model_builder.build (tests).
    """
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    cli_logging.configure(verbose=args.verbose)
    try:
        config = _load_config(args)
        info = cluster.parse_tf_config(os.environ.get("TF_CONFIG"))
    except config_util.ConfigError as error:
        return cli.config_error(PROG, error)
    except ValueError as error:
        return cli.fail(PROG, error, cli.CONFIG_ERROR_STATUS)
    if info.task_type == "ps":
        cluster.serve_ps(info)
        return cli.OK_STATUS
    return _train(config, args, info, build_model)


if __name__ == "__main__":
    sys.exit(main())
