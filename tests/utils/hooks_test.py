import logging
import os

import pytest

from aster.tf_setup import tf
from aster.utils import hooks


def _run_steps(make_hooks, steps):
    """A graph whose train op only increments the global step; runs it `steps` times.

    make_hooks(loss) -> list of hooks, called inside the graph.
    """
    with tf.Graph().as_default():
        global_step = tf.train.get_or_create_global_step()
        tf.get_variable("w", [1])
        loss = tf.constant(2.5)
        with tf.control_dependencies([tf.assign_add(global_step, 1)]):
            train_op = tf.identity(loss)
        with tf.train.MonitoredSession(hooks=make_hooks(loss)) as session:
            for _ in range(steps):
                session.run(train_op)


def _saved_steps(directory):
    state = tf.train.get_checkpoint_state(str(directory))
    return [int(p.rsplit("-", 1)[1]) for p in state.all_model_checkpoint_paths]


def _checkpoint_hook(directory, **kwargs):
    return lambda loss: [hooks.CheckpointHook(str(directory), tf.train.Saver(max_to_keep=10),
                                              **kwargs)]


def test_checkpoint_hook_saves_at_start_every_n_steps_and_at_end(tmp_path):
    saved = []
    _run_steps(_checkpoint_hook(tmp_path, save_steps=2, listeners=[
        lambda session, step, path: saved.append((step, path))]), 5)
    assert _saved_steps(tmp_path) == [0, 2, 4, 5]
    assert [s for s, _ in saved] == [0, 2, 4, 5]
    assert saved[1][1].endswith("model.ckpt-2")
    assert os.path.exists(tmp_path / "graph.pbtxt")


def test_checkpoint_hook_by_seconds_only_saves_start_and_end_in_a_short_run(tmp_path):
    _run_steps(_checkpoint_hook(tmp_path, save_secs=3600), 3)
    assert _saved_steps(tmp_path) == [0, 3]


def test_checkpoint_hook_with_secs_and_steps_saves_on_either(tmp_path):
    _run_steps(_checkpoint_hook(tmp_path, save_secs=3600, save_steps=3), 4)
    assert _saved_steps(tmp_path) == [0, 3, 4]


def test_checkpoint_hook_needs_a_global_step():
    with tf.Graph().as_default():
        with pytest.raises(RuntimeError, match="global step"):
            hooks.CheckpointHook("/tmp", None, save_steps=1).begin()


def test_progress_logger_reports_step_loss_rate_and_eta(caplog):
    with caplog.at_level(logging.INFO, logger="aster.trainer"):
        _run_steps(lambda loss: [hooks.ProgressLoggerHook(loss, images_per_step=8, num_steps=10,
                                                          every_n_steps=2)], 5)
    lines = [r.getMessage() for r in caplog.records if r.name == "aster.trainer"]
    assert len(lines) == 2 and lines[0].startswith("step 3/10, loss 2.5000, ")
    assert "images/s" in lines[0] and "ETA" in lines[0]


def test_background_evaluator_runs_every_n_steps_one_at_a_time(tmp_path, monkeypatch):
    started = []

    class _FakeProcess:
        def __init__(self, command, stdout, stderr):
            started.append(command)
            self.running = True

        def poll(self):
            return None if self.running else 0

        def wait(self, timeout=None):
            self.running = False
            return 0

    monkeypatch.setattr(hooks.subprocess, "Popen", _FakeProcess)
    evaluator = hooks.BackgroundEvaluator("p.config", str(tmp_path / "eval"), every_n_steps=10)
    assert evaluator.wait() is None
    evaluator(None, 0, "ckpt-0")
    evaluator(None, 5, "ckpt-5")
    evaluator(None, 10, "ckpt-10")
    evaluator(None, 20, "ckpt-20")  # the first is still running: skipped
    assert len(started) == 1 and "ckpt-10" in started[0] and "--run_once" in started[0]
    assert evaluator.wait() == 0
    evaluator(None, 30, "ckpt-30")
    assert len(started) == 2 and (tmp_path / "eval" / "eval-30.log").exists()
