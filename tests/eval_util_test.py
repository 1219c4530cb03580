"""Tests for aster/eval_util.py: checkpoint discovery, the checkpoint loop, names and reports."""

import json
import logging
import os

import pytest

from aster import eval_util


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
    assert eval_util.checkpoint_step("/a/model.ckpt-1200") == 1200
    assert eval_util.checkpoint_step("/a/model.ckpt-7.index") == 7


def test_checkpoint_step_without_step_raises():
    with pytest.raises(ValueError, match="does not end in -<global step>"):
        eval_util.checkpoint_step("/a/model.ckpt")


def test_list_checkpoints_sorted_by_step_and_only_complete(tmp_path):
    d = str(tmp_path)
    _touch_checkpoint(d, 100)
    _touch_checkpoint(d, 20)
    _touch_checkpoint(d, 3, shards=2)
    _touch_checkpoint(d, 50, index=False)  # being written: no index yet
    partial = _touch_checkpoint(d, 60, shards=2)
    os.remove(partial + ".data-00001-of-00002")  # a shard missing
    os.makedirs(os.path.join(d, "model.ckpt-70_temp"))
    steps = [c.step for c in eval_util.list_checkpoints(d)]
    assert steps == [3, 20, 100]
    assert eval_util.newest_checkpoint(d).path == os.path.join(d, "model.ckpt-100")


def test_newest_checkpoint_of_empty_dir_is_none(tmp_path):
    assert eval_util.newest_checkpoint(str(tmp_path)) is None


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
    done = eval_util.checkpoint_loop(d, lambda c: seen.append(c.step), poll_secs=5,
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
    eval_util.checkpoint_loop(d, lambda c: seen.append(c.step), poll_secs=1, timeout_secs=10,
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
    with caplog.at_level(logging.WARNING, logger="aster.eval_util"):
        eval_util.checkpoint_loop(d, evaluate, poll_secs=1, timeout_secs=3, sleep=clock.sleep,
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
            raise eval_util.CheckpointUnavailableError("gone")
        seen.append(ckpt.step)

    clock = _FakeClock()
    with caplog.at_level(logging.WARNING, logger="aster.eval_util"):
        done = eval_util.checkpoint_loop(d, evaluate, poll_secs=1, timeout_secs=3,
                                         sleep=clock.sleep, clock=clock)
    assert seen == [2] and [c.step for c in done] == [2]
    assert any("became unavailable" in r.getMessage() for r in caplog.records)


def test_checkpoint_loop_stops_at_max_evals_and_final_step(tmp_path):
    d = str(tmp_path)
    for step in (1, 2, 3, 4):
        _touch_checkpoint(d, step)
    seen = []
    eval_util.checkpoint_loop(d, lambda c: seen.append(c.step), max_evals=2,
                              sleep=pytest.fail)
    assert seen == [1, 2]
    seen.clear()
    eval_util.checkpoint_loop(d, lambda c: seen.append(c.step), final_step=3, sleep=pytest.fail)
    assert seen == [1, 2, 3]


def test_checkpoint_loop_timeout_counts_from_the_last_new_checkpoint(tmp_path):
    clock = _FakeClock()
    done = eval_util.checkpoint_loop(str(tmp_path), pytest.fail, poll_secs=2, timeout_secs=7,
                                     sleep=clock.sleep, clock=clock)
    assert done == [] and clock.now == 8


def test_checkpoint_loop_other_errors_propagate(tmp_path):
    _touch_checkpoint(str(tmp_path), 1)

    def evaluate(ckpt):
        raise ValueError("model config does not match")

    with pytest.raises(ValueError, match="does not match"):
        eval_util.checkpoint_loop(str(tmp_path), evaluate, sleep=pytest.fail)


def test_dataset_names_from_paths_configured_and_deduplicated():
    paths = ["data/iiit5k_test.tfrecord", "data/svt-00000-of-00004.tfrecord",
             "/x/ic13_*.tfrecord,/y/other.tfrecord", "data/iiit5k_test.tfrecord", ""]
    names = eval_util.dataset_names(paths, ["", "svt_test"])
    assert names == ["iiit5k_test", "svt_test", "ic13", "iiit5k_test_2", "dataset4"]
    assert eval_util.dataset_names(["a/svt-00001-of-00004.tfrecord"]) == ["svt"]
    assert eval_util.dataset_names(["a.tfrecord"], ["my set/1"]) == ["my_set_1"]


def _results(step=7):
    return {
        "checkpoint": "/t/model.ckpt-7", "step": step, "protocol": 36,
        "use_moving_averages": False, "evaluated_at": "2025-01-01T00:00:00",
        "decoding": [{"predictor": "Forward", "type": "attention_predictor", "beam_width": 5,
                      "max_num_steps": 30}],
        "datasets": [{
            "name": "iiit5k", "size": 3000, "accuracy": 0.934, "one_minus_ned": 0.97,
            "lexicon_accuracy": None, "num_with_lexicon": 0, "num_empty_groundtruth": 2,
            "dropped": {"undecodable": 1, "empty_label": 0}, "images_per_sec": 123.4,
            "protocols": {p: {"accuracy": 0.9, "one_minus_ned": 0.95, "lexicon_accuracy": None}
                          for p in ("36", "62", "94")},
        }],
    }


def test_write_reports_per_step_and_newest(tmp_path):
    step_dir = eval_util.write_reports(_results(), str(tmp_path))
    assert step_dir == os.path.join(str(tmp_path), "step-7")
    for folder in (step_dir, str(tmp_path)):
        with open(os.path.join(folder, "results.json")) as f:
            assert json.load(f)["datasets"][0]["accuracy"] == 0.934
        md = open(os.path.join(folder, "results.md")).read()
        assert "| iiit5k | 3000 | 93.40% | 97.00% | n/a | 2 | 1 (undecodable 1) | 123.4 |" in md
        assert "- step: 7" in md and "- protocol: 36" in md and "beam_width 5" in md


def test_decoding_settings_reads_each_predictor():
    from aster.protos import model_pb2  # tests may import protos directly

    model = model_pb2.Model()
    predictor = model.multi_predictors_recognition_model.predictor.add(name="Backward")
    predictor.attention_predictor.beam_width = 5
    predictor.attention_predictor.reverse = True
    settings = eval_util.decoding_settings(model)
    assert settings == [{"predictor": "Backward", "type": "attention_predictor", "beam_width": 5,
                         "max_num_steps": 40, "reverse": True, "length_penalty": 0.0}]
    assert eval_util.decoding_settings(model_pb2.Model()) == []
    auxiliary = model.multi_predictors_recognition_model.predictor.add(name="Ctc", auxiliary=True)
    auxiliary.ctc_predictor.beam_width = 1
    assert [s["predictor"] for s in eval_util.decoding_settings(model)] == ["Backward"]


def test_format_markdown_shows_rectifier_columns_and_dashes_where_absent():
    results = _results()
    plain = dict(results["datasets"][0], name="svt", size=647)
    results["datasets"][0].update(
        rectifier={"mean_displacement": 0.01, "mean_displacement_px": 1.234,
                   "max_displacement": 0.02, "max_displacement_px": 2.5,
                   "num_control_points": 20},
        identity_rectification={"accuracy": 0.9, "one_minus_ned": 0.95, "num_correct": 2700},
        rectification_gain=0.034)
    results["datasets"].append(plain)
    md = eval_util.format_markdown(results)
    assert ("| dataset | size | accuracy | 1 - NED | lexicon accuracy | identity-rect. accuracy "
            "| rectification gain | control-point displacement (px) | empty ground truth "
            "| dropped/corrupt | images/s |") in md
    assert "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|" in md
    assert ("| iiit5k | 3000 | 93.40% | 97.00% | n/a | 90.00% | +3.40 pp | 1.23 (max 2.50) "
            "| 2 | 1 (undecodable 1) | 123.4 |") in md
    assert "| svt | 647 | 93.40% | 97.00% | n/a | - | - | - | 2 | 1 (undecodable 1) | 123.4 |" in md
    assert "forced to the identity" in md and "initial ones in pixels" in md


def test_format_markdown_displacement_column_alone_and_missing_gain():
    results = _results()
    results["datasets"][0]["rectifier"] = {"mean_displacement_px": 0.0,
                                           "max_displacement_px": 0.0}
    md = eval_util.format_markdown(results)
    assert "identity-rect." not in md
    assert "| n/a | 0.00 (max 0.00) | 2 |" in md
    results["datasets"][0].update(identity_rectification={"accuracy": None},
                                  rectification_gain=None)
    md = eval_util.format_markdown(results)
    assert "| n/a | n/a | n/a | 0.00 (max 0.00) | 2 |" in md
