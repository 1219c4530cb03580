"""Cluster faults on 127.0.0.1: an async worker killed and restarted, a ps killed.

Every process is a real aster-train (the slowed stand-in runner of faults_process.py) with its
own TF_CONFIG; ports and TF_CONFIG come from tests/train_test.py. Every wait is bounded and every
process started is killed on the way out.
"""

import contextlib
import datetime
import os
import re
import signal
import time

import faults_process
import train_test
import trainer_helpers as helpers

from aster.tf_setup import tf

Result = faults_process.Result
_STEP = re.compile(r"^(\S+ \S+) INFO aster\.trainer: step (\d+)", re.M)
_READY = re.compile(r"^(\S+ \S+) INFO tensorflow: Done running local_init_op", re.M)
_ERROR = re.compile(r"^aster-train: error: .*$", re.M)


def _time(stamp):
    return datetime.datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp()


def _steps(log):
    """[(time, global step)] of the chief's progress lines."""
    return [(_time(stamp), int(step)) for stamp, step in _STEP.findall(log)]


def _write_config(directory, num_steps, extra=""):
    records = helpers.write_records(os.path.join(directory, "train.tfrecord"), count=16)
    config = helpers.pipeline_config(
        records, f"num_steps: {num_steps} save_checkpoint_steps: 5 save_summaries_steps: 0 "
                 f"log_every_n_steps: 1 worker_recovery_wait_secs: 1 {extra}")
    return helpers.write_config(os.path.join(directory, "pipeline_in.config"), config)


class _Cluster:
    """ps + workers as processes of the slowed runner; `sleeps` = seconds per step per worker."""

    def __init__(self, directory, config_path, num_workers=2):
        ports = train_test._free_ports(num_workers + 1)
        self.spec = {"ps": [f"127.0.0.1:{ports[0]}"],
                     "worker": [f"127.0.0.1:{p}" for p in ports[1:]]}
        self.directory, self.config_path = directory, config_path
        self.train_dir = os.path.join(directory, "train")
        self.processes, self.logs = {}, {}

    def start(self, job, index, sleep=0.05, name=None):
        name = name or f"{job}{index}"
        self.logs[name] = os.path.join(self.directory, f"{name}.log")
        self.processes[name] = faults_process.start(
            self.config_path, self.train_dir, self.logs[name], sleep=sleep,
            extra_env={"TF_CONFIG": train_test._tf_config(self.spec, job, index)})
        return self.processes[name]

    def log(self, name):
        return faults_process.read(self.logs[name])

    def wait_for(self, condition, timeout):
        """Waits for condition(); False after timeout or once any process has exited."""
        def done():
            return condition() or any(p.poll() is not None for p in self.processes.values())
        return faults_process._wait_for(done, timeout, 0.2) and condition()

    def training(self, worker, min_step):
        """True once worker (a non-chief) runs steps and the chief has logged min_step."""
        steps = _steps(self.log("worker0"))
        return bool(_READY.search(self.log(worker))) and bool(steps) and steps[-1][1] >= min_step

    def kill_all(self):
        for process in self.processes.values():
            if process.poll() is None:
                process.kill()
                process.wait()


@contextlib.contextmanager
def _cluster(directory, config_path):
    cluster = _Cluster(directory, config_path)
    try:
        yield cluster
    finally:
        cluster.kill_all()


def _wait_exit(process, deadline):
    try:
        process.wait(timeout=max(0.1, deadline - time.time()))
        return True
    except Exception:  # noqa: BLE001 - subprocess.TimeoutExpired; the caller kills it
        return False


def _final_step(train_dir):
    newest = tf.train.latest_checkpoint(train_dir)
    return (int(tf.train.load_checkpoint(newest).get_tensor("global_step")) if newest else None,
            newest)


def worker_restart_run(directory, num_steps=160, timeout=240):
    """Async ps + 2 workers; worker 1 SIGKILLed mid-training and restarted. Returns a Result.

    The chief is slowed (0.3 s a step) so that the run outlasts the restart; the restarted worker
    has rejoined when the chief's global step advances by more than its own steps.
    """
    config_path = _write_config(directory, num_steps, "operation_timeout_ms: 10000")
    failures, figure = [], "no run"
    with _cluster(directory, config_path) as cluster:
        cluster.start("ps", 0)
        cluster.start("worker", 0, sleep=0.3)
        cluster.start("worker", 1)
        if not cluster.wait_for(lambda: cluster.training("worker1", 10), timeout):
            return Result("Async worker killed and restarted", 1, 0, "cluster did not start",
                          [f"{n}: {cluster.log(n)[-1500:]}" for n in cluster.logs])
        cluster.processes["worker1"].send_signal(signal.SIGKILL)
        cluster.processes["worker1"].wait(timeout=30)
        killed_at, killed_time = _steps(cluster.log("worker0"))[-1][1], time.time()
        cluster.start("worker", 1, name="worker1_restarted")
        deadline = time.time() + timeout
        for name in ("worker1_restarted", "worker0", "ps0"):
            if not _wait_exit(cluster.processes[name], deadline):
                failures.append(f"{name} still running after {timeout} s")
        codes = {n: p.returncode for n, p in cluster.processes.items() if n != "worker1"}
        logs = {n: cluster.log(n) for n in cluster.logs}
    if any(code != 0 for code in codes.values()):
        failures.append(f"exit codes {codes}: " + " | ".join(
            f"{n}: {log[-800:]}" for n, log in logs.items() if codes.get(n)))
    ready = _READY.search(logs["worker1_restarted"])
    steps = _steps(logs["worker0"])
    joined = sum(b - a - 1 for (_, a), (t, b) in zip(steps, steps[1:], strict=False)
                 if ready and t >= _time(ready.group(1)))
    if not joined:
        failures.append("the restarted worker ran no steps (it joined after the chief finished?)")
    if "2 of 2 workers done" not in logs["ps0"]:
        failures.append("the ps did not get both workers' done signal")
    step, newest = _final_step(os.path.join(directory, "train"))
    if step is None or step < num_steps:
        failures.append(f"finished at step {step}, expected {num_steps}")
    rejoin_secs = (_time(ready.group(1)) - killed_time) if ready else float("nan")
    figure = (f"worker 1 of 2 SIGKILLed at step {killed_at} of {num_steps}, restarted: rejoined "
              f"after {rejoin_secs:.0f} s and ran {joined} of the remaining steps; chief "
              f"finished at step {step}; ps and both workers exited 0")
    return Result("Async worker killed and restarted", 1, 0 if failures else 1, figure, failures)


def ps_kill_run(directory, lost_after_secs=5, timeout=240):
    """Async ps + 2 workers; the ps SIGKILLed mid-training. Returns a Result (tried = workers).

    Held per worker: it exits 1 within lost_after_secs + 30 s with an error line naming the ps
    task and its address, and the newest checkpoint reads back completely.
    """
    config_path = _write_config(directory, 100000,
                                f"operation_timeout_ms: {int(lost_after_secs * 1000)}")
    failures, stopped = [], {}
    with _cluster(directory, config_path) as cluster:
        cluster.start("ps", 0)
        cluster.start("worker", 0)
        cluster.start("worker", 1)
        if not cluster.wait_for(lambda: cluster.training("worker1", 6), timeout):
            return Result("Killed ps", 2, 0, "cluster did not start",
                          [f"{n}: {cluster.log(n)[-1500:]}" for n in cluster.logs])
        cluster.processes["ps0"].send_signal(signal.SIGKILL)
        killed = time.time()
        killed_at = _steps(cluster.log("worker0"))[-1][1]
        cluster.processes["ps0"].wait(timeout=30)
        bound = lost_after_secs + 30
        for name in ("worker0", "worker1"):
            if _wait_exit(cluster.processes[name], killed + bound):
                stopped[name] = time.time() - killed
        codes = {n: cluster.processes[n].returncode for n in ("worker0", "worker1")}
        logs = {n: cluster.log(n) for n in ("worker0", "worker1")}
    address = cluster.spec["ps"][0]
    held, messages = 0, []
    for name in ("worker0", "worker1"):
        error = _ERROR.search(logs[name])
        if name not in stopped:
            failures.append(f"{name} still running {bound} s after the ps was killed")
        elif codes[name] != 1 or not error or f"ps task 0 ({address})" not in error.group(0):
            failures.append(f"{name}: exit {codes[name]}, no clear error: {logs[name][-1500:]}")
        elif "Traceback" in logs[name]:
            failures.append(f"{name}: a traceback: {logs[name][-1500:]}")
        else:
            held += 1
            messages.append(error.group(0))
    newest = tf.train.latest_checkpoint(os.path.join(directory, "train"))
    if not newest or not faults_process.checkpoint_is_complete(newest):
        failures.append(f"newest checkpoint {newest} is not complete")
        held = 0
    seconds = ", ".join(f"{stopped[n]:.1f} s" for n in sorted(stopped))
    figure = (f"ps killed at step {killed_at} of a 2-worker async run: workers exited 1 after "
              f"{seconds or '-'} (ps lost after {lost_after_secs:g} s unreachable); newest "
              f"checkpoint {os.path.basename(newest or '-')} complete; message: "
              f"{messages[0].replace(directory, '<dir>') if messages else '(none)'}")
    return Result("Killed ps", 2, held, figure, failures)
