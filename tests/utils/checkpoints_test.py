"""Tests for aster/utils/checkpoints.py: checkpoint discovery and the checkpoint loop."""

import logging
import os

import pytest

from aster.utils import checkpoints


def _touch_checkpoint(directory, step, prefix="model.ckpt", shards=1, index=True):
    path = os.path.join(directory, f"{prefix}-{step}")
    for i in range(shards):
        open(f"{path}.data-{i:05d}-of-{shards:05d}", "w").close()
    if index:
        open(f"{path}.index", "w").close()
    return path


def _delete_checkpoint(path):
    for name in os.listdir(os.path.dirname(path)):
        if name.startswith(os.path.basename(path) + "."):
            os.remove(os.path.join(os.path.dirname(path), name))


def test_checkpoint_step_parses_prefix_and_index_names():
    assert checkpoints.checkpoint_step("/a/model.ckpt-1200") == 1200
    assert checkpoints.checkpoint_step("/a/model.ckpt-7.index") == 7


def test_checkpoint_step_without_step_raises():
    with pytest.raises(ValueError, match="does not end in -<global step>"):
        checkpoints.checkpoint_step("/a/model.ckpt")


def test_list_checkpoints_sorted_by_step_and_only_complete(tmp_path):
    d = str(tmp_path)
    _touch_checkpoint(d, 100)
    _touch_checkpoint(d, 20)
    _touch_checkpoint(d, 3, shards=2)
    _touch_checkpoint(d, 50, index=False)  # being written: no index yet
    partial = _touch_checkpoint(d, 60, shards=2)
    os.remove(partial + ".data-00001-of-00002")  # a shard missing
    os.makedirs(os.path.join(d, "model.ckpt-70_temp"))
    steps = [c.step for c in checkpoints.list_checkpoints(d)]
    assert steps == [3, 20, 100]
    assert checkpoints.newest_checkpoint(d).path == os.path.join(d, "model.ckpt-100")


def test_newest_checkpoint_of_empty_dir_is_none(tmp_path):
    assert checkpoints.newest_checkpoint(str(tmp_path)) is None


class _FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, secs):
        self.now += secs


def test_checkpoint_loop_evaluates_backlog_in_order_without_skipping(tmp_path):
    d = str(tmp_path)
    for step in (30, 10, 20):
        _touch_checkpoint(d, step)
    seen = []
    clock = _FakeClock()
    done = checkpoints.checkpoint_loop(d, lambda c: seen.append(c.step), poll_secs=5,
                                     timeout_secs=20, sleep=clock.sleep, clock=clock)
    assert seen == [10, 20, 30]
    assert [c.step for c in done] == [10, 20, 30]


def test_checkpoint_loop_picks_up_checkpoints_written_while_polling(tmp_path):
    d = str(tmp_path)
    to_write = [5, 6, 7]
    clock = _FakeClock()

    def sleep(secs):
        clock.sleep(secs)
        if to_write:
            _touch_checkpoint(d, to_write.pop(0))

    seen = []
    checkpoints.checkpoint_loop(d, lambda c: seen.append(c.step), poll_secs=1, timeout_secs=10,
                              sleep=sleep, clock=clock)
    assert seen == [5, 6, 7]


def test_checkpoint_loop_skips_checkpoint_deleted_before_its_turn(tmp_path, caplog):
    d = str(tmp_path)
    paths = [_touch_checkpoint(d, step) for step in (1, 2, 3)]
    seen = []

    def evaluate(ckpt):
        seen.append(ckpt.step)
        if ckpt.step == 1:
            _delete_checkpoint(paths[1])

    clock = _FakeClock()
    with caplog.at_level(logging.WARNING, logger="aster.utils.checkpoints"):
        checkpoints.checkpoint_loop(d, evaluate, poll_secs=1, timeout_secs=3, sleep=clock.sleep,
                                  clock=clock)
    assert seen == [1, 3]
    assert any("model.ckpt-2 was deleted before its turn" in r.getMessage()
               for r in caplog.records)


def test_checkpoint_loop_moves_on_when_checkpoint_becomes_unavailable(tmp_path, caplog):
    d = str(tmp_path)
    for step in (1, 2):
        _touch_checkpoint(d, step)
    seen = []

    def evaluate(ckpt):
        if ckpt.step == 1:
            raise checkpoints.CheckpointUnavailableError("gone")
        seen.append(ckpt.step)

    clock = _FakeClock()
    with caplog.at_level(logging.WARNING, logger="aster.utils.checkpoints"):
        done = checkpoints.checkpoint_loop(d, evaluate, poll_secs=1, timeout_secs=3,
                                         sleep=clock.sleep, clock=clock)
    assert seen == [2] and [c.step for c in done] == [2]
    assert any("became unavailable" in r.getMessage() for r in caplog.records)


def test_checkpoint_loop_stops_at_max_evals_and_final_step(tmp_path):
    d = str(tmp_path)
    for step in (1, 2, 3, 4):
        _touch_checkpoint(d, step)
    seen = []
    checkpoints.checkpoint_loop(d, lambda c: seen.append(c.step), max_evals=2,
                              sleep=pytest.fail)
    assert seen == [1, 2]
    seen.clear()
    checkpoints.checkpoint_loop(d, lambda c: seen.append(c.step), final_step=3, sleep=pytest.fail)
    assert seen == [1, 2, 3]


def test_checkpoint_loop_timeout_counts_from_the_last_new_checkpoint(tmp_path):
    clock = _FakeClock()
    done = checkpoints.checkpoint_loop(str(tmp_path), pytest.fail, poll_secs=2, timeout_secs=7,
                                     sleep=clock.sleep, clock=clock)
    assert done == [] and clock.now == 8


def test_checkpoint_loop_other_errors_propagate(tmp_path):
    _touch_checkpoint(str(tmp_path), 1)

    def evaluate(ckpt):
        raise ValueError("model config does not match")

    with pytest.raises(ValueError, match="does not match"):
        checkpoints.checkpoint_loop(str(tmp_path), evaluate, sleep=pytest.fail)


def test_find_checkpoint_takes_a_prefix_or_a_folder_s_newest(tmp_path):
    d = str(tmp_path)
    for step in (3, 12):
        _touch_checkpoint(d, step)
    assert checkpoints.find_checkpoint(d) == os.path.join(d, "model.ckpt-12")
    assert checkpoints.find_checkpoint(os.path.join(d, "model.ckpt-3")) == os.path.join(
        d, "model.ckpt-3")
    with pytest.raises(ValueError, match="no complete checkpoint there"):
        checkpoints.find_checkpoint(str(tmp_path / "empty_or_missing"))
    os.makedirs(tmp_path / "empty")
    with pytest.raises(ValueError, match="no complete checkpoint there"):
        checkpoints.find_checkpoint(str(tmp_path / "empty"))
