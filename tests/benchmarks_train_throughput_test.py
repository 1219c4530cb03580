"""benchmarks/train_throughput.py --interleave: variants' graphs in one process, steps alternating."""

import json

import bench_scripts
import pytest


@pytest.fixture
def train_throughput(monkeypatch):
    yield bench_scripts.load("train_throughput", monkeypatch)
    bench_scripts.forget_siblings()


class _Recorder:
    """Stands in for a session: records which run stepped."""

    def __init__(self, name, log):
        self.name, self.log = name, log

    def run(self, train_op):
        self.log.append(self.name)


def test_interleave_steps_rotates_the_order_and_drops_the_warmup(train_throughput):
    log = []
    runs = {name: (_Recorder(name, log), None) for name in ("a", "b", "c")}
    seconds = train_throughput.interleave_steps(runs, warmup=1, steps=3)
    assert log == ["a", "b", "c", "b", "c", "a", "c", "a", "b", "a", "b", "c"]
    assert {name: len(times) for name, times in seconds.items()} == {"a": 3, "b": 3, "c": 3}
    assert all(wall >= 0 and cpu >= 0 for times in seconds.values() for wall, cpu in times)


def test_step_pair_ratios_are_the_first_runs_time_over_the_others(train_throughput):
    first = [(2.0, 0.0), (3.0, 0.0)]
    other = [(1.0, 0.0), (2.0, 0.0)]
    assert train_throughput.step_pair_ratios(first, other) == [2.0, 1.5]


def test_step_pair_ratios_compare_images_per_second_when_the_batches_differ(train_throughput):
    """Twice the batch in the same step time is twice the speed; in 1.6x the time, 1.25x."""
    first = [(1.0, 0.0), (1.0, 0.0)]
    other = [(1.0, 0.0), (1.6, 0.0)]
    assert train_throughput.step_pair_ratios(first, other, 32, 64) == [2.0, 1.25]


def test_interleaved_worker_trains_every_variant_and_reports_pair_ratios(train_throughput,
                                                                         capsys):
    """Two real trainer graphs of the tiny config (two gradient clip norms, two batch sizes) in
    one process; each variant's images/s counts its own batch."""
    train_throughput.main(["--worker", "--configs", "tiny", "--clones", "1", "--input",
                           "excluded", "--batch_size", "4", "--warmup", "1", "--steps", "2",
                           "--interleave", "--variants", "a:",
                           "b:train_config.clip_gradients_by_global_norm=1.0;"
                           "train_config.batch_size=8"])
    results = [json.loads(line[len("RESULT "):]) for line in capsys.readouterr().out.splitlines()
               if line.startswith("RESULT ")]
    assert [r["variant"] for r in results] == ["a", "b"]
    assert all(r["images_per_sec"] > 0 and r["against"] == "a" for r in results)
    assert results[0]["pair_ratio"] == 1.0
    assert [r["batch_size"] for r in results] == [4, 8]
    lines = train_throughput.pair_lines(results)
    assert len(lines) == 1 and lines[0].startswith("tiny clones=1: b / a per step pair: median ")


@pytest.mark.parametrize("argv", [
    ["--interleave", "--variants", "a:", "--input", "excluded"],
    ["--interleave", "--variants", "a:", "b:", "--input", "both"],
])
def test_interleave_needs_two_variants_and_input_excluded(train_throughput, capsys, argv):
    with pytest.raises(SystemExit):
        train_throughput.main(argv)
    assert "--interleave compares --variants" in capsys.readouterr().err
