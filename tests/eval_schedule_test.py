"""In-training evaluation (train_config.eval_every_n_steps) through trainer.train, on its schedule.

The evaluation command is replaced by a stand-in that records which checkpoint it was given (and
checks that the checkpoint exists); the last test runs the real aster-eval end to end.
"""

import json
import os
import subprocess
import sys

import pytest
import trainer_helpers as helpers

from aster import trainer
from aster.utils import hooks


class _FakeEval:
    """subprocess.Popen of aster-eval: records the step; `finishes` says whether it ends at once."""

    started = []
    finishes = True

    def __init__(self, command, stdout, stderr):
        path = command[command.index("--checkpoint_path") + 1]
        assert os.path.exists(path + ".index"), f"{path} was not saved"
        self.started.append(int(path.rsplit("-", 1)[1]))
        self.code = 0 if self.finishes else None

    def poll(self):
        return self.code

    def wait(self, timeout=None):
        self.code = 0
        return 0


@pytest.fixture
def fake_eval(monkeypatch):
    monkeypatch.setattr(hooks.subprocess, "Popen", _FakeEval)
    monkeypatch.setattr(_FakeEval, "started", [])
    monkeypatch.setattr(_FakeEval, "finishes", True)
    return _FakeEval


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    return helpers.write_records(tmp_path_factory.mktemp("data") / "train.tfrecord", count=16)


def _train(records, train_dir, num_steps, every=2):
    config = helpers.pipeline_config(records, extra_train=f"eval_every_n_steps: {every}")
    config.train_config.ClearField("save_checkpoint_secs")  # the shipped default
    assert config.train_config.save_checkpoint_secs == 600
    config.train_config.num_steps = num_steps
    trainer.train(config, str(train_dir), seams=helpers.STAND_IN)


def test_eval_every_n_steps_evaluates_each_multiple_with_the_default_save_secs(
        records, tmp_path, fake_eval):
    _train(records, tmp_path, num_steps=6)
    assert fake_eval.started == [2, 4, 6]


def test_eval_every_n_steps_evaluates_the_final_step_off_the_schedule(records, tmp_path,
                                                                        fake_eval):
    _train(records, tmp_path, num_steps=5)
    assert fake_eval.started == [2, 4, 5]


def test_eval_while_one_runs_waits_and_the_final_one_always_runs(records, tmp_path, fake_eval):
    fake_eval.finishes = False  # every evaluation runs until training waits for it
    _train(records, tmp_path, num_steps=6)
    assert fake_eval.started == [2, 6]  # 4 waited behind 2 and was replaced by 6


def test_resumed_run_evaluates_its_own_steps_only(records, tmp_path, fake_eval):
    _train(records, tmp_path, num_steps=3)
    fake_eval.started.clear()
    _train(records, tmp_path, num_steps=6)
    assert fake_eval.started == [4, 6]


@pytest.mark.slow
def test_in_training_eval_reports_every_n_steps_end_to_end(tmp_path):
    train_records = helpers.write_records(tmp_path / "train.tfrecord", count=16)
    val_records = helpers.write_records(tmp_path / "val.tfrecord", count=4, seed=1)
    train_dir = tmp_path / "train"
    result = subprocess.run(
        [sys.executable, "-m", "aster.train", "--pipeline_config_path", helpers.TINY_CONFIG,
         "--train_dir", str(train_dir),
         "--set", f"train_input_reader[0].tf_record_input_reader.input_path={train_records}",
         "--set", f"eval_input_reader[0].tf_record_input_reader.input_path={val_records}",
         "--set", "train_config.num_steps=3", "--set", "train_config.eval_every_n_steps=2",
         "--set", "train_config.save_checkpoint_secs=600"],
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"), capture_output=True, text=True,
        timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    for step in (2, 3):
        report = json.loads((train_dir / "eval" / f"step-{step}" / "results.json").read_text())
        assert f"model.ckpt-{step}" in json.dumps(report)
        assert (train_dir / "eval" / f"eval-{step}.log").exists()
