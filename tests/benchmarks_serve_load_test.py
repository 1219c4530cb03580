"""benchmarks/serve_load.py: a short run against aster-serve (a subprocess on 127.0.0.1) with a
random tiny checkpoint: every request answered with the direct predictor's text, the table and
the soak's memory samples printed."""

import json

import bench_scripts
import pytest
from tiny_model import random_tiny_checkpoint, tiny_config

from aster.utils import config_util


def _tiny_model(tmp_path):
    """(checkpoint, config path) of a random tiny model."""
    _, checkpoint = random_tiny_checkpoint(str(tmp_path))
    config = str(tmp_path / "pipeline.config")
    config_util.save_pipeline_config(tiny_config(), config)
    return checkpoint, config


@pytest.fixture
def serve_load(monkeypatch):
    yield bench_scripts.load("serve_load", monkeypatch)
    bench_scripts.forget_siblings()


@pytest.mark.slow
def test_short_run_reports_each_client_count_and_the_soak(serve_load, tmp_path, capsys):
    checkpoint, config = _tiny_model(tmp_path)
    assert serve_load.main(["--checkpoint_path", checkpoint, "--pipeline_config_path", config,
                            # seconds enough for a request to be sent and answered inside each
                            # window on a loaded machine (a CI run beside training counted 0)
                            "--clients", "1", "4", "--duration_secs", "3", "--warmup_secs", "0.5",
                            "--direct_secs", "0.5", "--soak_secs", "3", "--soak_clients", "2",
                            "--rss_every_secs", "0.5", "--max_batch_size", "4"]) == 0
    out = capsys.readouterr().out
    figures = json.loads(out.strip().splitlines()[-1])
    assert [row["clients"] for row in figures["load"]] == [1, 4]
    for row in figures["load"] + [figures["soak"]]:
        assert row["requests"] > 0 and row["errors"] == 0 and row["ok"] == row["requests"]
        assert row["server_cores"] > 0 and row["client_cores"] > 0
    assert figures["soak"]["rss_samples"] >= 2 and figures["soak"]["rss_first_mb"] > 50
    assert figures["direct_images_per_sec"] > 0 and figures["batch1_ms"] > 0
    assert "| 4 | 3 |" in out and "| 2 (soak) | 3 |" in out
    assert "target 1-client p99 <= 3x batch-1 latency:" in out


def test_percentile_is_nearest_rank(serve_load):
    values = list(range(1, 101))
    assert serve_load.percentile(values, 0.5) == 50
    assert serve_load.percentile(values, 0.99) == 99
    assert serve_load.percentile([7], 0.99) == 7


def test_client_count_is_bounded(serve_load):
    with pytest.raises(SystemExit, match="between 1 and 64"):
        serve_load.main(["--clients", "100"])


def test_server_that_cannot_start_is_an_error(serve_load, tmp_path, monkeypatch):
    monkeypatch.setattr(serve_load, "run_direct", lambda args, image: (1.0, 0.01, "x"))
    with pytest.raises(RuntimeError, match="aster-serve exited with 1: aster-serve: error: "
                                           "cannot load the model"):
        serve_load.main(["--checkpoint_path", str(tmp_path / "nothing"), "--soak_secs", "0"])


def test_server_that_does_not_answer_in_time_is_stopped_and_an_error(serve_load, tmp_path,
                                                                      monkeypatch):
    checkpoint, config = _tiny_model(tmp_path)
    monkeypatch.setattr(serve_load, "run_direct", lambda args, image: (1.0, 0.01, "x"))
    with pytest.raises(RuntimeError, match="aster-serve did not answer within 0.3 s"):
        serve_load.main(["--checkpoint_path", checkpoint, "--pipeline_config_path", config,
                         "--start_timeout_secs", "0.3", "--soak_secs", "0"])
