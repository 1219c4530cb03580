"""Killed and starved training processes: SIGKILL at random moments, a full disk while saving.

    python tests/reliability/faults_process.py [aster-train flags]   # the runner (stand-in model)

The runner is aster.train.main with the stand-in model of tests/trainer_helpers.py, slowed by
ASTER_TEST_STEP_SLEEP seconds per step so that a kill can land anywhere in a run.
"""

import collections
import os
import random
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]

import trainer_helpers as helpers  # noqa: E402

from aster.tf_setup import tf  # noqa: E402
from aster.utils import checkpoints  # noqa: E402

SLEEP_ENV = "ASTER_TEST_STEP_SLEEP"
Result = collections.namedtuple("Result", "case tried held figure failures")
_SAVED = re.compile(r"saved checkpoint \S*model\.ckpt-(\d+)")


class SlowStandIn(helpers.StandInModel):
    """The stand-in model sleeping a little in every step."""

    def loss(self, predictions_dict, scope=None):
        losses = super().loss(predictions_dict, scope)
        seconds = float(os.environ.get(SLEEP_ENV, "0"))
        if seconds:
            pause = tf.py_func(lambda: time.sleep(seconds) or 0.0, [], tf.float64)
            with tf.control_dependencies([pause]):
                losses = {k: tf.identity(v) for k, v in losses.items()}
        return losses


def build_slow(model_config, is_training):
    del model_config
    return SlowStandIn(is_training)


def write_config(directory, num_steps, extra=""):
    records = helpers.write_records(os.path.join(directory, "train.tfrecord"), count=16)
    config = helpers.pipeline_config(
        records, f"num_steps: {num_steps} save_checkpoint_steps: 2 save_summaries_steps: 0 "
                 f"log_every_n_steps: 1 {extra}")
    return helpers.write_config(os.path.join(directory, "pipeline_in.config"), config)


def start(config_path, train_dir, log_path, sleep=0.05, extra_env=None):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", **{SLEEP_ENV: str(sleep)},
               **(extra_env or {}))
    log = open(log_path, "w")  # noqa: SIM115 - closed after Popen inherits it
    try:
        return subprocess.Popen([sys.executable, os.path.abspath(__file__),
                                 "--pipeline_config_path", config_path, "--train_dir", train_dir],
                                env=env, stdout=log, stderr=subprocess.STDOUT)
    finally:
        log.close()


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def checkpoint_is_complete(path):
    """True when every tensor of the checkpoint reads back."""
    try:
        reader = tf.train.load_checkpoint(path)
        for name in reader.get_variable_to_shape_map():
            reader.get_tensor(name)
        return True
    except (tf.errors.OpError, ValueError):
        return False


def _newest_state(train_dir):
    """The checkpoint a restart resumes from: the newest complete one on disk (checkpoints.newest),
    not the `checkpoint` state file, which lags a run killed between the index and the state."""
    found = checkpoints.newest(train_dir)
    return found.path if found else None


def _wait_for(condition, timeout, poll=0.002):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return True
        time.sleep(poll)
    return False


def _mid_write(train_dir, listed):
    """True while a checkpoint is being written: its files exist but the state does not list it."""
    for name in os.listdir(train_dir):
        match = re.match(r"model\.ckpt-(\d+)[._]", name)
        if match and f"model.ckpt-{match.group(1)}" not in listed:
            return True
    return False


def sigkill_run(directory, kills=5, num_steps=40, seed=0, timeout=180):
    """Kills a training run `kills` times and restarts it each time; returns a Result."""
    rng = random.Random(seed)
    config_path = write_config(directory, num_steps)
    train_dir = os.path.join(directory, "train")
    failures, notes, resumed_from = [], [], None
    for attempt in range(kills + 1):
        log_path = os.path.join(directory, f"run{attempt}.log")
        process = start(config_path, train_dir, log_path)
        try:
            if attempt < kills:
                started = _wait_for(lambda p=log_path: _SAVED.search(read(p)), timeout, 0.05)
                if not started:
                    failures.append(f"run {attempt}: no checkpoint within {timeout}s")
                    break
                if attempt % 2:  # during a checkpoint write
                    state = tf.train.get_checkpoint_state(train_dir)
                    listed = {os.path.basename(p) for p in state.all_model_checkpoint_paths}
                    hit = _wait_for(lambda listed=listed: _mid_write(train_dir, listed), 60)
                    moment = "during a checkpoint write" if hit else "after a checkpoint write"
                else:
                    time.sleep(rng.uniform(0.0, 1.5))
                    moment = "at a random moment"
                process.send_signal(signal.SIGKILL)
                process.wait(timeout=30)
                newest = _newest_state(train_dir)
                ok = newest is not None and checkpoint_is_complete(newest)
                notes.append(f"kill {attempt + 1} {moment}: newest {os.path.basename(newest)}")
                if not ok:
                    failures.append(f"kill {attempt + 1}: newest checkpoint {newest} unreadable")
                log = read(log_path)
            else:
                process.wait(timeout=timeout)
                log = read(log_path)
                if process.returncode != 0:
                    failures.append(f"final run exited {process.returncode}: {log[-1500:]}")
            first = _SAVED.search(log)
            if resumed_from is not None and (not first or int(first.group(1)) != resumed_from):
                failures.append(f"run {attempt} did not resume from step {resumed_from}: "
                                f"{first.group(0) if first else 'no checkpoint saved'}")
            newest = _newest_state(train_dir)
            resumed_from = int(newest.rsplit("-", 1)[1]) if newest else None
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    final = _newest_state(train_dir)
    final_step = int(final.rsplit("-", 1)[1]) if final else None
    if final_step != num_steps:
        failures.append(f"finished at step {final_step}, expected {num_steps}")
    mid = sum("during a checkpoint write" in n for n in notes)
    held = kills - len([f for f in failures if f.startswith("kill") or " did not resume" in f])
    figure = (f"{kills} SIGKILLs ({mid} during a checkpoint write) of a {num_steps}-step run: "
              f"{held} restarts resumed from a complete checkpoint; run finished at step "
              f"{final_step}")
    return Result("SIGKILL and restart", kills, held if not failures else min(held, kills - 1),
                  figure, failures + notes if failures else [])


# --------------------------------------------------------------------------- full disk


def mount_small_disk(path, size_kb):
    """Mounts a size-limited tmpfs at path; returns False when this machine does not allow it."""
    os.makedirs(path, exist_ok=True)
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", path],
                            capture_output=True, check=False)
    return result.returncode == 0


def unmount(path):
    subprocess.run(["umount", "-l", path], capture_output=True, check=False)


def _fill(directory):
    """Writes a file until the disk is full."""
    try:
        with open(os.path.join(directory, "filler"), "wb") as f:
            while True:
                f.write(b"\0" * 4096)
                f.flush()
    except OSError:  # full (possibly already before the open)
        pass


def full_disk_run(directory, timeout=180):
    """Fills a small disk after the first checkpoints; returns a Result (None: cannot mount)."""
    disk = os.path.join(directory, "disk")
    if not mount_small_disk(disk, 32768):
        return None
    process = None
    try:
        config_path = write_config(directory, 400)
        train_dir = os.path.join(disk, "train")
        log_path = os.path.join(directory, "full_disk.log")
        process = start(config_path, train_dir, log_path, sleep=0.02)
        _wait_for(lambda: len(_SAVED.findall(read(log_path))) >= 2, timeout, 0.05)
        before = _newest_state(train_dir)
        _fill(disk)
        process.wait(timeout=timeout)
        log = read(log_path)
        after = _newest_state(train_dir)
        failures = []
        if process.returncode != 1:
            failures.append(f"exit code {process.returncode}, expected 1")
        if "aster-train: error: writing checkpoint" not in log or "Traceback" in log:
            failures.append(f"no clear error: {log[-1500:]}")
        if not after or not checkpoint_is_complete(after):
            failures.append(f"newest checkpoint {after} is not complete")
        if after and before and int(after.rsplit("-", 1)[1]) < int(before.rsplit("-", 1)[1]):
            failures.append(f"newest checkpoint went back from {before} to {after}")
        message = [line for line in log.splitlines() if "aster-train: error" in line]
        figure = (f"disk filled during a run (32 MB tmpfs): exit {process.returncode}, newest "
                  f"checkpoint {os.path.basename(after or '-')} complete; message: "
                  f"{message[0][:160] if message else '(none)'}")
        return Result("Full disk during a checkpoint write", 1, 0 if failures else 1, figure,
                      failures)
    finally:
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        unmount(disk)


if __name__ == "__main__":
    from aster import train

    sys.exit(train.main(sys.argv[1:], build_model=build_slow))
