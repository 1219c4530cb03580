"""aster-train: trains a model from a pipeline config (also `python -m aster.train`).

    aster-train --pipeline_config_path configs/tiny.config --train_dir /tmp/tiny \\
        --set train_config.num_steps=20 [--num_clones 2 --clone_on_cpu]

Rerunning the same command resumes from the newest checkpoint in --train_dir.

Distributed (TensorFlow's ps/worker runtime): set TF_CONFIG in each process, e.g.
    {"cluster": {"ps": ["host:2222"], "worker": ["host:2223", "host:2224"]},
     "task": {"type": "worker", "index": 0}}
The chief is the "chief" (or "master") task when the cluster has one, else worker 0; it
initializes, writes checkpoints and summaries. ps tasks serve the variables and exit once every
worker has finished (each worker signals them at its end).
"""

import argparse
import collections
import json
import logging
import os
import sys

from aster import trainer
from aster.tf_setup import tf
from aster.utils import cli_logging, config_util, hooks, model_deploy

_LOG = logging.getLogger("aster.train")

_CHIEF_JOBS = ("chief", "master")

ClusterInfo = collections.namedtuple("ClusterInfo", [
    "cluster", "task_type", "task_index", "is_chief", "num_replicas", "replica_id", "num_ps_tasks",
])

LOCAL = ClusterInfo(None, "chief", 0, True, 1, 0, 0)


def parse_tf_config(text):
    """Reads a TF_CONFIG value.

    Args:
      text: the JSON string (None or "" means a local run).

    Returns:
      ClusterInfo; LOCAL when there is no cluster.

    Raises:
      ValueError: malformed JSON, an unknown task type, an index out of range, both a chief and
        a master job, or a cluster without workers.
    """
    if not text:
        return LOCAL
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"TF_CONFIG is not valid JSON: {error}") from error
    cluster = parsed.get("cluster") or {}
    if not cluster:
        return LOCAL
    task = parsed.get("task") or {}
    task_type, task_index = task.get("type"), int(task.get("index", 0))
    if task_type not in cluster:
        raise ValueError(f"TF_CONFIG task.type {task_type!r} is not a job of the cluster "
                         f"{sorted(cluster)}")
    if not 0 <= task_index < len(cluster[task_type]):
        raise ValueError(f"TF_CONFIG task.index {task_index} is out of range for job "
                         f"{task_type!r} with {len(cluster[task_type])} tasks")
    chiefs = [job for job in _CHIEF_JOBS if job in cluster]
    if len(chiefs) > 1:
        raise ValueError("TF_CONFIG cluster has both a 'chief' and a 'master' job; use one")
    if task_type not in ("ps", "worker", *_CHIEF_JOBS):
        raise ValueError(f"TF_CONFIG task.type {task_type!r} is not run by aster-train "
                         "(expected ps, worker, chief or master)")
    num_chief = len(cluster[chiefs[0]]) if chiefs else 0
    num_replicas = num_chief + len(cluster.get("worker", []))
    if num_replicas == 0:
        raise ValueError("TF_CONFIG cluster has no worker, chief or master tasks")
    is_chief = task_type in _CHIEF_JOBS or (not chiefs and task_type == "worker" and
                                            task_index == 0)
    replica_id = task_index + (num_chief if task_type == "worker" else 0)
    return ClusterInfo(cluster, task_type, task_index, is_chief, num_replicas, replica_id,
                       len(cluster.get("ps", [])))


def _done_queue(ps_index, num_workers):
    """A queue on ps task `ps_index` that each worker feeds one token when it finishes."""
    with tf.device(f"/job:ps/task:{ps_index}"):
        return tf.FIFOQueue(num_workers, tf.int32, shared_name=f"aster_done_queue_{ps_index}",
                            name=f"done_queue_{ps_index}")


def _serve_ps(server, info):
    """Serves the variables until every worker has signalled that it is done."""
    _LOG.info("ps task %d serving at %s", info.task_index, server.target)
    with tf.Graph().as_default():
        dequeue = _done_queue(info.task_index, info.num_replicas).dequeue()
        config = tf.ConfigProto(device_filters=[f"/job:ps/task:{info.task_index}"])
        with tf.Session(server.target, config=config) as session:
            for done in range(info.num_replicas):
                session.run(dequeue)
                _LOG.info("ps task %d: %d of %d workers done", info.task_index, done + 1,
                          info.num_replicas)


def _signal_done(server, info, timeout_ms=60000):
    """Tells every ps task that this worker has finished."""
    with tf.Graph().as_default():
        ops = [_done_queue(i, info.num_replicas).enqueue(1) for i in range(info.num_ps_tasks)]
        # Filters: without them the session would wait for every task, even finished workers.
        config = tf.ConfigProto(operation_timeout_in_ms=timeout_ms, device_filters=[
            "/job:ps", f"/job:{info.task_type}/task:{info.task_index}"])
        with tf.Session(server.target, config=config) as session:
            session.run(ops)


def _parse_args(argv):
    parser = argparse.ArgumentParser(prog="aster-train", description=__doc__.splitlines()[0])
    parser.add_argument("--pipeline_config_path", required=True, help="text-format pipeline config")
    parser.add_argument("--train_dir", required=True, help="checkpoints and summaries go here")
    parser.add_argument("--config_override", default="",
                        help="text-format snippet merged over the config")
    parser.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                        help="override one field, e.g. train_config.num_steps=10 (repeatable)")
    parser.add_argument("--num_clones", type=int, default=1, help="model clones on this worker")
    parser.add_argument("--clone_on_cpu", action="store_true",
                        help="put the clones on (logical) CPU devices")
    return parser.parse_args(argv)


def _load_config(args):
    config = config_util.load_pipeline_config(args.pipeline_config_path)
    config = config_util.merge_overrides(config, args.config_override or None, args.set)
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


def _start_server(info, config):
    return tf.distribute.Server(tf.train.ClusterSpec(info.cluster), job_name=info.task_type,
                                task_index=info.task_index, config=config, start=True)


def main(argv=None, build_model=None):
    """Entry point of aster-train; returns the exit code.

    Args:
      argv: command-line arguments (default sys.argv[1:]).
      build_model: optional model builder replacing model_builder.build (tests).
    """
    cli_logging.configure()
    args = _parse_args(sys.argv[1:] if argv is None else argv)
    try:
        config = _load_config(args)
        info = parse_tf_config(os.environ.get("TF_CONFIG"))
    except ValueError as error:
        print(f"aster-train: error: {error}", file=sys.stderr)
        return 2
    if info.task_type == "ps":
        _serve_ps(_start_server(info, tf.ConfigProto()), info)
        return 0
    try:
        deploy = _deploy_config(args, info)
    except ValueError as error:
        print(f"aster-train: error: {error}", file=sys.stderr)
        return 2
    server = _start_server(info, deploy.session_config()) if info.cluster else None
    try:
        trainer.train(config, args.train_dir, deploy, master=server.target if server else "",
                      task=info.task_index, is_chief=info.is_chief, build_model=build_model)
    except (trainer.NonFiniteLossError, hooks.CheckpointWriteError) as error:
        print(f"aster-train: error: {error}", file=sys.stderr)
        return 1
    finally:
        if server is not None and info.num_ps_tasks:
            _signal_done(server, info)
    return 0


if __name__ == "__main__":
    sys.exit(main())
