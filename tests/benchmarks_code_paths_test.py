"""benchmarks/code_paths.py: the old code path patched in for "old" runs, restored for the rest."""

import os

import bench_scripts
import pytest

from aster.core import bidirectional_rnn


@pytest.fixture
def code_paths(monkeypatch):
    yield bench_scripts.load("code_paths", monkeypatch)
    bench_scripts.forget_siblings()


PATCH = "aster.core.bidirectional_rnn:is_plain_lstm=code_paths:never"


def test_patch_sets_the_old_value_and_restores_the_original(code_paths):
    original = bidirectional_rnn.is_plain_lstm
    patch = code_paths.Patch(PATCH)
    patch.apply(old=True)
    try:
        assert bidirectional_rnn.is_plain_lstm is not original
        assert bidirectional_rnn.is_plain_lstm(object()) is False
    finally:
        patch.apply(old=False)
    assert bidirectional_rnn.is_plain_lstm is original


def test_patch_reaches_class_attributes(code_paths):
    patch = code_paths.Patch(
        "aster.core.bidirectional_rnn:BidirectionalRnn.output_size=code_paths:never")
    original = bidirectional_rnn.BidirectionalRnn.output_size
    patch.apply(old=True)
    try:
        assert bidirectional_rnn.BidirectionalRnn.output_size() is False  # code_paths.never
    finally:
        patch.apply(old=False)
    assert bidirectional_rnn.BidirectionalRnn.output_size is original


@pytest.mark.parametrize("text, message", [
    ("aster.core.bidirectional_rnn:is_plain_lstm", "expected MODULE:ATTRIBUTE=VALUE"),
    ("aster.core.bidirectional_rnn=1", "expected MODULE:ATTRIBUTE=VALUE"),
    ("aster.no_such_module:x=1", "cannot import aster.no_such_module"),
    ("aster.core.bidirectional_rnn:no_such_name=1", "has no attribute no_such_name"),
    ("aster.core.bidirectional_rnn:is_plain_lstm=code_paths:nothing", "has no attribute nothing"),
    ("aster.core.bidirectional_rnn:is_plain_lstm=False",
     "VALUE must name an object as MODULE:NAME"),
])
def test_bad_patch_names_the_flag(code_paths, text, message):
    with pytest.raises(SystemExit, match=message):
        code_paths.Patch(text)


def test_runs_alternate_old_and_new_per_precision(code_paths, monkeypatch):
    seen = []

    def fake_time_training(config, warmup, steps, words):
        assert words == code_paths.train_throughput.WORDS
        old = bidirectional_rnn.is_plain_lstm(object()) is False  # patched: always False
        seen.append((config.train_config.mixed_precision, old, warmup, steps))
        return {"images_per_sec": 10.0 if old else 12.0, "cpu_ms_per_image": 1.0}

    monkeypatch.setattr(code_paths.train_throughput, "time_training", fake_time_training)
    monkeypatch.setattr(bidirectional_rnn, "is_plain_lstm", lambda cell: True)
    patches = [code_paths.Patch(PATCH)]
    from aster.protos import pipeline_pb2

    rates = code_paths.run(pipeline_pb2.TrainEvalPipelineConfig(), patches, ["fp32", "bf16"],
                           repeats=2, warmup=1, steps=3, report=lambda line: None)
    assert seen == [(False, True, 1, 3), (False, False, 1, 3), (True, True, 1, 3),
                    (True, False, 1, 3)] * 2
    assert rates == {("fp32", "old"): [10.0, 10.0], ("fp32", "new"): [12.0, 12.0],
                     ("bf16", "old"): [10.0, 10.0], ("bf16", "new"): [12.0, 12.0]}
    assert bidirectional_rnn.is_plain_lstm(object()) is True  # restored after the runs
    assert code_paths.summary(rates)[0] == (
        "fp32: old 10.0 (10.0, 10.0), new 12.0 (12.0, 12.0) images/s: new/old 1.20x")


def test_fp32_runs_train_in_float32_even_when_the_config_says_bfloat16(code_paths, monkeypatch):
    """The demo config sets train_config.mixed_precision; "fp32" must turn it off, not inherit it (it did
    until 2026-12-04: the "float32" figures of demo-config comparisons were bfloat16)."""
    seen = []

    def fake_time_training(config, warmup, steps, words):
        del warmup, steps, words
        seen.append(config.train_config.mixed_precision)
        return {"images_per_sec": 1.0, "cpu_ms_per_image": 1.0}

    monkeypatch.setattr(code_paths.train_throughput, "time_training", fake_time_training)
    from aster.protos import pipeline_pb2

    config = pipeline_pb2.TrainEvalPipelineConfig()
    config.train_config.mixed_precision = True
    code_paths.run(config, [], ["fp32", "bf16"], repeats=1, warmup=1, steps=1,
                   report=lambda line: None)
    assert seen == [False, False, True, True]
    assert code_paths.precision_overrides("fp32") == ["train_config.mixed_precision=false"]
    assert code_paths.precision_overrides("bf16") == ["train_config.mixed_precision=true"]


def test_interleave_builds_the_old_graph_with_the_patch_and_alternates_steps(code_paths):
    """Two real trainer graphs of the tiny config: the old one built with the patch (the static
    BiLSTM's per-step products), the new one without; both train, their steps alternate."""
    from aster.utils import config_util

    config = config_util.load_pipeline_config(
        os.path.join(os.path.dirname(__file__), "..", "configs", "tiny.config"))
    config = code_paths.train_throughput.prepare_config(config, batch_size=4)
    lines = []
    old, new = code_paths.interleave(config, [code_paths.Patch(PATCH)], "fp32", warmup=1,
                                     steps=2, report=lines.append)
    assert len(old) == len(new) == 2 and all(s > 0 for s in old + new)
    assert lines[0].startswith("fp32 interleaved, 2 steps each: old ")
    assert bidirectional_rnn.is_plain_lstm(object()) is False  # the original, restored


def test_batch_words_adds_one_word_of_the_longest_length(code_paths):
    assert code_paths.batch_words() == code_paths.train_throughput.WORDS
    words = code_paths.batch_words(30)
    assert words[:-1] == code_paths.train_throughput.WORDS
    assert len(words[-1]) == 30 and words[-1].isalpha() and words[-1].islower()
    assert max(len(w) for w in code_paths.train_throughput.WORDS) <= 9  # what --help says
