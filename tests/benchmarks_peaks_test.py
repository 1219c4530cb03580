"""benchmarks/peaks.py: matmul peaks per precision and a run's fraction of its peak."""

import bench_scripts
import pytest
from google.protobuf import text_format

from aster.core import session_options
from aster.protos import pipeline_pb2


@pytest.fixture
def peaks(monkeypatch):
    yield bench_scripts.load("peaks", monkeypatch)  # it imports common
    bench_scripts.forget_siblings()


def test_matmul_peak_is_a_positive_rate(peaks):
    assert peaks.matmul_peak("float32", size=64, runs=2, iterations=2) > 0
    assert peaks.matmul_peak("bfloat16", size=64, runs=2, iterations=2) > 0


def test_bfloat16_peak_only_where_the_cpu_has_it(peaks, monkeypatch):
    monkeypatch.setattr(peaks, "matmul_peak", lambda dtype="float32": {"float32": 100.0,
                                                                        "bfloat16": 500.0}[dtype])
    monkeypatch.setattr(session_options, "cpu_supports_bfloat16", lambda flags=None: False)
    measured = peaks.measure_peaks()
    assert measured == {"float32": 100.0, "bfloat16": None}
    assert peaks.describe(measured).endswith("bfloat16 not measured (no native bfloat16 on this "
                                             "CPU)")
    monkeypatch.setattr(session_options, "cpu_supports_bfloat16", lambda flags=None: True)
    measured = peaks.measure_peaks()
    assert measured == {"float32": 100.0, "bfloat16": 500.0}
    assert peaks.describe(measured) == ("matmul peak (TF, 2048x2048, CPU): float32 100 GFLOP/s, "
                                        "bfloat16 500 GFLOP/s")


def test_a_run_is_compared_with_the_peak_of_its_precision(peaks, monkeypatch):
    config = text_format.Parse("train_config { mixed_precision: true }",
                               pipeline_pb2.TrainEvalPipelineConfig())
    monkeypatch.setattr(session_options, "cpu_supports_bfloat16", lambda flags=None: True)
    assert peaks.precision(config) == "bfloat16"
    assert peaks.precision(pipeline_pb2.TrainEvalPipelineConfig()) == "float32"
    monkeypatch.setattr(session_options, "cpu_supports_bfloat16", lambda flags=None: False)
    assert peaks.precision(config) == "float32"  # the trainer falls back to float32 there
    # 10 images/s x 3 x 1 GFLOP forward = 30 GFLOP/s.
    assert peaks.achieved_gflops(10.0, 1e9) == pytest.approx(30.0)
    machine = {"float32": 100.0, "bfloat16": 300.0}
    assert peaks.fraction_of_peak(10.0, 1e9, machine, "float32") == pytest.approx(0.3)
    assert peaks.fraction_of_peak(10.0, 1e9, machine, "bfloat16") == pytest.approx(0.1)
    assert peaks.fraction_of_peak(10.0, 1e9, {"float32": 100.0, "bfloat16": None},
                                  "bfloat16") is None


def test_a_run_on_a_gpu_is_named_so_and_has_no_cpu_peak(peaks, monkeypatch):
    """One clone goes to GPU:0 where the machine has a GPU (the prepared GPU check): there
    train_config.mixed_precision means float16 mixed precision, and the CPU's peaks do not apply."""
    from aster.utils import train_session

    config = text_format.Parse("train_config { mixed_precision: true }",
                               pipeline_pb2.TrainEvalPipelineConfig())
    monkeypatch.setattr(session_options, "cpu_supports_bfloat16", lambda flags=None: True)
    monkeypatch.setattr(train_session, "_num_gpus", lambda: 1)
    assert peaks.precision(config) == "float16 (GPU)"
    assert peaks.precision(pipeline_pb2.TrainEvalPipelineConfig()) == "float32 (GPU)"
    assert peaks.precision(config, num_clones=2) == "bfloat16"  # clones on logical CPU devices
    machine = {"float32": 100.0, "bfloat16": 300.0}
    assert peaks.fraction_of_peak(10.0, 1e9, machine, peaks.precision(config)) is None
