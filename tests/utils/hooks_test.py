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


class _FakeRun:
    """run_context and run_values of one step for calling a hook's after_run directly."""

    def __init__(self, fetched, step):
        self.results = fetched
        self.session = self
        self._step = step

    def run(self, tensor):
        del tensor
        return self._step


@pytest.mark.parametrize("read_after_increment", [False, True])
def test_progress_logger_lines_do_not_depend_on_when_the_step_was_read(caplog,
                                                                      read_after_increment):
    # The step fetched with the train op may be read before or after its increment.
    hook = hooks.ProgressLoggerHook(loss=None, images_per_step=8, num_steps=10, every_n_steps=2)
    with caplog.at_level(logging.INFO, logger="aster.trainer"):
        for step in range(1, 6):
            fetched = step if read_after_increment else step - 1
            run = _FakeRun([fetched, 2.5], step)
            hook.after_run(run, run)
    lines = [r.getMessage() for r in caplog.records if r.name == "aster.trainer"]
    assert [line.split(",")[0] for line in lines] == ["step 3/10", "step 5/10"]


class _FakeProfiler:
    """Stands in for tf.train.ProfilerHook: records the steps of the runs it saw."""

    def __init__(self):
        self.runs = []

    def before_run(self, run_context):
        self.runs.append(run_context.step_to_complete)

    def after_run(self, run_context, run_values):
        pass


@pytest.mark.parametrize("read_after_increment", [False, True])
def test_profile_hook_traces_the_run_that_completes_at_step(read_after_increment):
    hook = hooks.ProfileAtStepHook(at_step=6, output_dir="/unused")
    hook._inner = _FakeProfiler()
    hook.after_create_session(_FakeRun(None, 0), None)
    for step in range(1, 9):
        run = _FakeRun(None, step)
        run.step_to_complete = step
        hook.before_run(run)
        run.results = step if read_after_increment else step - 1
        hook.after_run(run, run)
    assert hook._inner.runs == [5, 6]  # armed by step 5's run, step 6's run traced


def test_checkpoint_hook_saves_at_each_multiple_whatever_the_intervals(tmp_path):
    _run_steps(_checkpoint_hook(tmp_path, save_secs=3600, step_multiple=2), 5)
    assert _saved_steps(tmp_path) == [0, 2, 4, 5]


class _FakeEval:
    """Stands in for subprocess.Popen of aster-eval: records the steps; done when wait()ed."""

    started = []  # steps, in start order
    processes = []
    exit_code = 0

    def __init__(self, command, stdout, stderr):
        path = command[command.index("--checkpoint_path") + 1]
        self.started.append(int(path.rsplit("-", 1)[1]))
        self.processes.append(self)
        self.code = None

    def poll(self):
        return self.code

    def wait(self, timeout=None):
        self.code = self.exit_code
        return self.code


@pytest.fixture
def fake_eval(monkeypatch):
    monkeypatch.setattr(hooks.subprocess, "Popen", _FakeEval)
    monkeypatch.setattr(_FakeEval, "started", [])
    monkeypatch.setattr(_FakeEval, "processes", [])
    monkeypatch.setattr(_FakeEval, "exit_code", 0)
    return _FakeEval


def _saved(evaluator, *steps):
    for step in steps:
        evaluator(None, step, f"model.ckpt-{step}")


def test_background_evaluator_queues_one_and_a_newer_one_replaces_it(tmp_path, fake_eval, caplog):
    evaluator = hooks.BackgroundEvaluator("p.config", str(tmp_path / "eval"), every_n_steps=10)
    assert evaluator.wait() is None
    with caplog.at_level(logging.INFO, logger="aster.trainer"):
        _saved(evaluator, 0, 5, 10, 15, 20, 30)  # 10 runs; 20 waits; 30 replaces it
    assert fake_eval.started == [10]
    assert "step 20 dropped: step 30 replaces it" in caplog.text
    assert evaluator.finish() == 0
    assert fake_eval.started == [10, 30] and (tmp_path / "eval" / "eval-30.log").exists()


def test_background_evaluator_starts_the_waiting_one_after_a_step(tmp_path, fake_eval):
    evaluator = hooks.BackgroundEvaluator("p.config", str(tmp_path / "eval"), every_n_steps=2)
    _saved(evaluator, 0, 2, 4)
    evaluator.after_run(None, None)  # 2 still running
    assert fake_eval.started == [2]
    fake_eval.processes[0].code = 0  # 2 finished
    evaluator.after_run(None, None)
    assert fake_eval.started == [2, 4]


def test_background_evaluator_finish_evaluates_the_final_checkpoint(tmp_path, fake_eval):
    evaluator = hooks.BackgroundEvaluator("p.config", str(tmp_path / "eval"), every_n_steps=2)
    _saved(evaluator, 6, 7, 8, 9)  # resumed at 6: 6 itself is not evaluated again
    evaluator.finish()
    assert fake_eval.started == [8, 9]
    evaluator.finish()  # nothing new
    assert fake_eval.started == [8, 9]


def test_background_evaluator_wait_drops_the_waiting_one(tmp_path, fake_eval):
    evaluator = hooks.BackgroundEvaluator("p.config", str(tmp_path / "eval"), every_n_steps=2)
    _saved(evaluator, 0, 2, 4)
    assert evaluator.wait() == 0
    evaluator.after_run(None, None)
    assert fake_eval.started == [2]


def test_background_evaluator_logs_a_failed_evaluation(tmp_path, fake_eval, caplog):
    evaluator = hooks.BackgroundEvaluator("p.config", str(tmp_path / "eval"), every_n_steps=2)
    fake_eval.exit_code = 3
    _saved(evaluator, 0, 2)
    with caplog.at_level(logging.WARNING, logger="aster.trainer"):
        assert evaluator.finish() == 3
    assert "in-training eval of step 2 failed (exit code 3); see " in caplog.text
    assert "eval-2.log" in caplog.text
