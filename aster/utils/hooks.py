"""Session-run hooks of the trainer: checkpoints by seconds and/or steps, progress log, profiling,
in-training evaluation.

All are tf.compat.v1 `SessionRunHook`s for a MonitoredSession.
"""

import datetime
import glob
import logging
import os
import subprocess
import sys
import time

from aster.tf_setup import tf
from aster.utils import checkpoints

_LOG = logging.getLogger("aster.trainer")

CHECKPOINT_BASENAME = "model.ckpt"


def _reason(error):
    """The informative line of an error (TF's first line is often "Graph execution error:")."""
    text = error.message if isinstance(error, tf.errors.OpError) else str(error)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    # "Graph execution error: / Detected at node ... / <stack> / Node: 'x' / <the message>"
    after_node = [b for a, b in zip(lines, lines[1:], strict=False) if a.startswith("Node:")]
    return (after_node or lines or [type(error).__name__])[0]


class CheckpointWriteError(RuntimeError):
    """A checkpoint could not be written (e.g. the disk is full); the previous one is intact."""


def _newest_path(checkpoint_dir):
    newest = checkpoints.newest(checkpoint_dir)
    return newest.path if newest else "(none)"


class CheckpointHook(tf.train.SessionRunHook):
    """Saves `model.ckpt-<step>` when either interval has passed, at each multiple, start and end.

    tf.train.CheckpointSaverHook takes seconds or steps, not both. A Saver writes each file under
    a temporary name and renames it, the data shards before the index, so a process killed while
    saving leaves the previous checkpoint as the newest complete one (checkpoints.newest): readers
    never see a half-written one.

    Args:
      checkpoint_dir: where checkpoints go.
      saver: the tf.train.Saver (max_to_keep, keep_checkpoint_every_n_hours).
      save_secs: save when this many seconds have passed since the last save; 0 disables.
      save_steps: save when the global step advanced this much since the last save; 0 disables.
      listeners: callables(session, step, checkpoint_path) run after each save.
      step_multiple: also save at the first step at or past each multiple of this (the steps of
        the in-training evaluation), whatever the intervals; 0 disables.
    """

    def __init__(self, checkpoint_dir, saver, save_secs=0, save_steps=0, listeners=(),
                 step_multiple=0):
        self._dir = checkpoint_dir
        self._saver = saver
        self._save_secs = save_secs
        self._save_steps = save_steps
        self._step_multiple = max(0, step_multiple)
        self._listeners = list(listeners)
        self._last_step = None
        self._last_time = None
        self._meta_graph_written = False
        self._global_step = None

    def begin(self):
        self._global_step = tf.train.get_global_step()
        if self._global_step is None:
            raise RuntimeError("CheckpointHook needs a global step in the graph")

    def after_create_session(self, session, coord):
        del coord
        tf.io.write_graph(tf.get_default_graph().as_graph_def(add_shapes=True), self._dir,
                          "graph.pbtxt")
        self._save(session, session.run(self._global_step))

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        stale_step = run_values.results
        if self._due(stale_step + 1):
            step = run_context.session.run(self._global_step)
            if self._due(step):
                self._save(run_context.session, step)

    def end(self, session):
        step = session.run(self._global_step)
        if step != self._last_step:
            self._save(session, step)

    def _due(self, step):
        if self._last_step is not None and step <= self._last_step:
            return False
        if self._save_steps and step - self._last_step >= self._save_steps:
            return True
        multiple = self._step_multiple
        if multiple and step // multiple > self._last_step // multiple:
            return True
        return bool(self._save_secs) and time.time() - self._last_time >= self._save_secs

    def _save(self, session, step):
        try:
            path = self._saver.save(session, os.path.join(self._dir, CHECKPOINT_BASENAME),
                                    global_step=step, write_meta_graph=not self._meta_graph_written)
        except (tf.errors.OpError, OSError) as error:  # a full disk, a lost mount, permissions
            raise CheckpointWriteError(
                f"writing checkpoint {CHECKPOINT_BASENAME}-{step} in {self._dir} failed: "
                f"{_reason(error)}. The newest complete checkpoint is "
                f"{_newest_path(self._dir)}") from error
        self._meta_graph_written = True
        self._last_step, self._last_time = int(step), time.time()
        _LOG.info("saved checkpoint %s", path)
        for listener in self._listeners:
            listener(session, int(step), path)


class ProgressLoggerHook(tf.train.SessionRunHook):
    """Logs `step S/N, loss L, X images/s, ETA H:MM:SS` every `every_n_steps` global steps.

    Args:
      loss: scalar tensor to report.
      images_per_step: images consumed per global step (all clones and replicas).
      num_steps: the last step (0 = forever: no ETA).
      every_n_steps: logging interval.
    """

    def __init__(self, loss, images_per_step, num_steps, every_n_steps):
        self._loss = loss
        self._images_per_step = images_per_step
        self._num_steps = num_steps
        self._every = every_n_steps
        self._last = None  # (step, time)
        self._global_step = None

    def begin(self):
        self._global_step = tf.train.get_global_step()

    def before_run(self, run_context):
        return tf.train.SessionRunArgs([self._global_step, self._loss])

    def after_run(self, run_context, run_values):
        # The fetched step is read either before or after the train op's increment (the read and
        # the increment are not ordered), so it is one short at most; when a line may be due the
        # completed step is read again after the run, as CheckpointHook does.
        stale_step, loss = run_values.results
        if self._last is not None and stale_step + 1 - self._last[0] < self._every:
            return
        step = int(run_context.session.run(self._global_step))
        now = time.time()
        if self._last is None:
            self._last = (step, now)
            return
        if step - self._last[0] < self._every:
            return
        rate = (step - self._last[0]) / max(now - self._last[1], 1e-9)
        line = (f"step {step}" + (f"/{self._num_steps}" if self._num_steps else "") +
                f", loss {loss:.4f}, {rate * self._images_per_step:.1f} images/s")
        if self._num_steps:
            eta = datetime.timedelta(seconds=int(max(self._num_steps - step, 0) / rate))
            line += f", ETA {eta}"
        _LOG.info("%s", line)
        self._last = (step, now)


class ProfileAtStepHook(tf.train.SessionRunHook):
    """Writes a Chrome trace (`timeline-<step>.json`) of one step around `at_step` into output_dir.

    Delegates to tf.train.ProfilerHook for two runs: the first arms it, the second is traced.
    Does nothing when training resumes past at_step.
    """

    def __init__(self, at_step, output_dir):
        self._at_step = at_step
        self._inner = tf.train.ProfilerHook(save_steps=1, output_dir=output_dir)
        self._armed_runs = 0
        self._next_step = None
        self._done = False
        self._global_step = None

    def begin(self):
        self._inner.begin()
        self._global_step = tf.train.get_global_step()

    def after_create_session(self, session, coord):
        self._next_step = int(session.run(self._global_step)) + 1
        self._done = self._next_step > self._at_step

    def before_run(self, run_context):
        if self._done:
            return None
        if self._next_step + 1 >= self._at_step:
            self._armed_runs += 1
            return self._inner.before_run(run_context)
        return tf.train.SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        if self._done:
            return
        if self._armed_runs:
            self._inner.after_run(run_context, run_values)
            self._done = self._armed_runs >= 2
            return
        # The fetched step may be read before or after this run's increment (see
        # ProgressLoggerHook): near at_step the step is read again after the run.
        stale_step = int(run_values.results)
        if stale_step + 3 >= self._at_step:
            stale_step = int(run_context.session.run(self._global_step))
        self._next_step = stale_step + 1


class BackgroundEvaluator(tf.train.SessionRunHook):
    """Evaluates the checkpoint of every N-th step and the final one, one at a time, in background.

    A listener of CheckpointHook (give that hook step_multiple=N so that those steps are saved)
    and a hook: after each training step it starts the waiting evaluation once the running one has
    finished. An evaluation is `aster-eval --run_once` on one checkpoint in a subprocess (the same
    reports as a separate aster-eval job, under eval_dir/step-<step>; its output in
    eval_dir/eval-<step>.log). The checkpoint a run starts from is not evaluated; a later one is
    when its step passes a multiple of N. One due while an evaluation runs waits; a newer one
    replaces the waiting one (logged). `finish()` adds the newest checkpoint when it is not
    evaluated yet (the final one of a run) and waits for everything; `wait()` waits for the
    running evaluation only.

    Args:
      pipeline_config_path: the config aster-eval reads.
      eval_dir: where the reports and logs go.
      every_n_steps: N (> 0).
    """

    def __init__(self, pipeline_config_path, eval_dir, every_n_steps):
        self._config_path = pipeline_config_path
        self._eval_dir = eval_dir
        self._every = every_n_steps
        self._requested = None  # step of the newest checkpoint started or waiting (first: start)
        self._newest = None  # (step, path) of the newest checkpoint saved
        self._waiting = None  # (step, path) to evaluate once the running one is done
        self._running = None  # (step, subprocess.Popen)
        self._last_code = None

    def __call__(self, session, step, checkpoint_path):
        del session
        self._newest = (step, checkpoint_path)
        if self._requested is None:
            self._requested = step
        elif step // self._every > self._requested // self._every:
            self._request(step, checkpoint_path)

    def after_run(self, run_context, run_values):
        self._poll()

    def finish(self):
        """Queues the newest checkpoint unless requested, then runs and waits for every evaluation.

        Returns:
          the exit code of the last evaluation (None if none ran).
        """
        if self._newest is not None and self._newest[0] > self._requested:
            self._request(*self._newest)
        while self._running is not None:
            _LOG.info("waiting for the in-training eval of step %d", self._running[0])
            self._done(self._running[1].wait())
            self._poll()
        return self._last_code

    def wait(self, timeout=None):
        """Waits for the running evaluation (a waiting one is dropped); returns the last exit code.

        Returns None if no evaluation ran.
        """
        if self._waiting is not None:
            _LOG.info("in-training eval of step %d not run: training stopped", self._waiting[0])
            self._waiting = None
        if self._running is not None:
            self._done(self._running[1].wait(timeout=timeout))
        return self._last_code

    def _request(self, step, checkpoint_path):
        self._requested = step
        self._poll()
        if self._running is None:
            self._start(step, checkpoint_path)
            return
        if self._waiting is not None:
            _LOG.info("in-training eval of step %d dropped: step %d replaces it in the queue",
                      self._waiting[0], step)
        else:
            _LOG.info("in-training eval of step %d queued behind step %d", step,
                      self._running[0])
        self._waiting = (step, checkpoint_path)

    def _poll(self):
        """Notes a finished evaluation and starts the waiting one."""
        if self._running is not None:
            code = self._running[1].poll()
            if code is not None:
                self._done(code)
        if self._running is None and self._waiting is not None:
            waiting, self._waiting = self._waiting, None
            self._start(*waiting)

    def _start(self, step, checkpoint_path):
        command = [sys.executable, "-m", "aster.eval", "--pipeline_config_path", self._config_path,
                   "--checkpoint_path", checkpoint_path, "--eval_dir", self._eval_dir,
                   "--run_once"]
        os.makedirs(self._eval_dir, exist_ok=True)
        log = open(self._log_path(step), "w")  # noqa: SIM115
        _LOG.info("in-training eval of %s started (log %s)", checkpoint_path, log.name)
        self._running = (step, subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT))
        log.close()

    def _done(self, code):
        step, self._running = self._running[0], None
        self._last_code = code
        if code:
            _LOG.warning("in-training eval of step %d failed (exit code %s); see %s", step, code,
                         self._log_path(step))

    def _log_path(self, step):
        return os.path.join(self._eval_dir, f"eval-{step}.log")


def trace_files(directory):
    """The Chrome trace files a ProfileAtStepHook wrote into directory."""
    return sorted(glob.glob(os.path.join(directory, "timeline-*.json")))
