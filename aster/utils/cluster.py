"""TensorFlow's ps/worker runtime for aster-train: TF_CONFIG, servers, the ps tasks, the watchdog.

Set TF_CONFIG in each process, e.g.
    {"cluster": {"ps": ["host:2222"], "worker": ["host:2223", "host:2224"]},
     "task": {"type": "worker", "index": 0}}
The chief is the "chief" (or "master") task when the cluster has one, else worker 0; it
initializes, writes checkpoints and summaries. ps tasks serve the variables (serve_ps) and exit
once every worker has finished (each worker signals them at its end: worker()).

A lost ps task stops the workers: TensorFlow would wait for it without a time limit (its session
recovery closes the broken session, which blocks on the dead task). Each worker probes the ps
addresses every second (PsWatchdog); once a ps task that was up refuses connections for
train_config.operation_timeout_ms (60 s when 0), the worker exits 1 with an error naming the task,
its address and the newest checkpoint. A ps restarted within that time is recovered as usual.
"""

import collections
import contextlib
import json
import logging
import os
import socket
import sys
import threading
import time

from aster.tf_setup import tf
from aster.utils import checkpoints

_LOG = logging.getLogger("aster.cluster")

_CHIEF_JOBS = ("chief", "master")

# The TensorFlow errors a lost task of the cluster surfaces as.
_CLUSTER_ERRORS = (tf.errors.UnavailableError, tf.errors.DeadlineExceededError,
                   tf.errors.AbortedError)

ClusterInfo = collections.namedtuple("ClusterInfo", [
    "cluster", "task_type", "task_index", "is_chief", "num_replicas", "replica_id", "num_ps_tasks",
])

LOCAL = ClusterInfo(None, "chief", 0, True, 1, 0, 0)

# Seconds a ps task may refuse connections before the workers stop, when operation_timeout_ms is 0.
DEFAULT_PS_LOST_SECS = 60.0


class ClusterLostError(RuntimeError):
    """A TensorFlow error broke the cluster; the message names the ps tasks that are down."""


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


def start_server(info, config):
    """Starts this task's tf.distribute.Server with session ConfigProto `config`."""
    return tf.distribute.Server(tf.train.ClusterSpec(info.cluster), job_name=info.task_type,
                                task_index=info.task_index, config=config, start=True)


def _done_queue(ps_index, num_workers):
    """A queue on ps task `ps_index` that each worker feeds one token when it finishes."""
    with tf.device(f"/job:ps/task:{ps_index}"):
        return tf.FIFOQueue(num_workers, tf.int32, shared_name=f"aster_done_queue_{ps_index}",
                            name=f"done_queue_{ps_index}")


def serve_ps(info):
    """Starts this ps task's server and serves the variables until every worker is done."""
    server = start_server(info, tf.ConfigProto())
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


def _newest_path(train_dir):
    newest = checkpoints.newest(train_dir)
    return newest.path if newest else "(none saved)"


def _probe(address, timeout=2.0):
    """Opens (and closes) a TCP connection to host:port; returns None or the reason it failed."""
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            return None
    except (OSError, ValueError) as error:
        return str(error) or type(error).__name__


class PsWatchdog(threading.Thread):
    """Ends this worker with an error when a ps task that was up stays unreachable.

    Args:
      ps_addresses: host:port of each ps task (index = task index).
      lost_after_secs: how long a ps task may refuse connections before it counts as lost.
      train_dir: where the newest checkpoint is looked up for the message.
      poll_secs: interval between probes.
      on_lost: callable(message) run once a task is lost; default: print the message and
        os._exit(1) (the main thread may be blocked inside TensorFlow, waiting on the dead task).
      probe, clock: injectable for tests (probe(address) -> None or the failure reason).
    """

    def __init__(self, ps_addresses, lost_after_secs, train_dir, poll_secs=1.0, on_lost=None,
                 probe=_probe, clock=time.monotonic):
        super().__init__(name="ps-watchdog", daemon=True)
        self._addresses = list(ps_addresses)
        self._lost_after = max(float(lost_after_secs), poll_secs)
        self._train_dir = train_dir
        self._poll = poll_secs
        self._on_lost = on_lost or _exit_lost
        self._probe, self._clock = probe, clock
        self._seen_up = [False] * len(self._addresses)
        self._down_since = [None] * len(self._addresses)
        self._stop_event = threading.Event()

    def check(self):
        """Probes every ps task once; returns the error message of a lost one, or None."""
        now = self._clock()
        for index, address in enumerate(self._addresses):
            reason = self._probe(address)
            if reason is None:
                self._seen_up[index], self._down_since[index] = True, None
                continue
            if not self._seen_up[index]:  # not started yet: TensorFlow waits for it
                continue
            if self._down_since[index] is None:
                self._down_since[index] = now
                _LOG.warning("ps task %d (%s) unreachable: %s", index, address, reason)
            if now - self._down_since[index] >= self._lost_after:
                return (f"lost ps task {index} ({address}): unreachable for "
                        f"{now - self._down_since[index]:.0f} s ({reason}); training stopped. "
                        f"The newest checkpoint is {_newest_path(self._train_dir)}")
        return None

    def run(self):
        while not self._stop_event.wait(self._poll):
            message = self.check()
            if message:
                self._on_lost(message)
                return

    def stop(self):
        self._stop_event.set()


def _exit_lost(message):
    print(f"aster-train: error: {message}", file=sys.stderr, flush=True)
    logging.shutdown()
    os._exit(1)


def _cluster_error_message(error, info, train_dir):
    """The message for a TensorFlow error that broke the cluster, naming the ps tasks down."""
    down = [(i, a) for i, a in enumerate(info.cluster.get("ps", [])) if _probe(a, 1.0)]
    where = ", ".join(f"ps task {i} ({a})" for i, a in down) or "a task of the cluster"
    detail = (error.message or "").strip().splitlines()
    return (f"lost connection to {where}: {type(error).__name__}: "
            f"{detail[0] if detail else ''}; training stopped. The newest checkpoint is "
            f"{_newest_path(train_dir)}")


def ps_lost_after_secs(operation_timeout_ms):
    """How long a ps task may be unreachable: train_config.operation_timeout_ms, or the default."""
    return operation_timeout_ms / 1000 if operation_timeout_ms > 0 else DEFAULT_PS_LOST_SECS


@contextlib.contextmanager
def worker(info, train_dir, deploy_config, lost_after_secs):
    """Runs the block as this worker of the cluster (or locally); yields the session master.

    Starts the server of a cluster task and, with ps tasks, a PsWatchdog; at the end, tells the
    ps tasks that this worker is done (while the watchdog still guards it: a dead ps blocks it).

    Raises:
      ClusterLostError: the block raised a TensorFlow error that broke the cluster (a local run
        raises the error itself).
    """
    server = start_server(info, deploy_config.session_config()) if info.cluster else None
    watchdog = None
    if info.num_ps_tasks:
        watchdog = PsWatchdog(info.cluster["ps"], lost_after_secs, train_dir)
        watchdog.start()
    lost = False
    try:
        yield server.target if server else ""
    except _CLUSTER_ERRORS as error:
        if not info.cluster:
            raise
        lost = True
        raise ClusterLostError(_cluster_error_message(error, info, train_dir)) from error
    finally:
        if watchdog is not None:
            if not lost:
                _signal_done(server, info)
            watchdog.stop()
