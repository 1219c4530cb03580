"""benchmarks/step_profile.py: op-type and scope totals of a traced training step."""

import bench_scripts
import pytest


@pytest.fixture
def step_profile(monkeypatch):
    yield bench_scripts.load("step_profile", monkeypatch)
    bench_scripts.forget_siblings()


def _event(op, name, ts, dur):
    return {"ph": "X", "name": op, "ts": ts, "dur": dur, "args": {"op": op, "name": name}}


def test_scope_of_puts_gradients_under_the_scope_they_differentiate(step_profile):
    assert step_profile.scope_of("FeatureExtractor/ResNet/conv1/Conv2D") == (
        "FeatureExtractor/ResNet", "forward")
    assert step_profile.scope_of("gradients/FeatureExtractor/ResNet/conv1/Conv2D_grad/X") == (
        "FeatureExtractor/ResNet", "backward")
    assert step_profile.scope_of("Adam/update_x") == ("Adam", "forward")


def test_summarize_sums_by_op_type_and_scope_and_takes_the_wall_span(step_profile):
    events = [_event("Conv2D", "Net/a/conv", 0, 300),
              _event("Conv2D", "Net/a/conv_1", 100, 100),
              _event("Conv2DBackpropInput", "gradients/Net/a/conv_grad/x", 400, 600),
              _event("MatMul", "Head/fc/MatMul", 1000, 1000),
              {"ph": "M", "name": "process_name"}]  # metadata events are not ops
    summary = step_profile.summarize(step_profile.complete_events({"traceEvents": events}))
    assert summary["wall_ms"] == pytest.approx(2.0)
    assert summary["op_ms"] == pytest.approx(2.0)
    assert summary["by_op"][0] == ("MatMul", 1.0, 1)
    assert ("Conv2D", 0.4, 2) in summary["by_op"]
    scopes = dict(summary["by_scope"])
    assert scopes[("Net/a", "forward")] == pytest.approx(0.4)
    assert scopes[("Net/a", "backward")] == pytest.approx(0.6)
    lines = step_profile.table(summary, top=2)
    assert lines[0] == "step wall time 2.0 ms, op time 2.0 ms"
    assert "| MatMul | 1.0 | 50.0% | 1 |" in lines
    assert step_profile.table(dict(summary, precision="bfloat16"), top=2)[0] == (
        "step wall time 2.0 ms, op time 2.0 ms, bfloat16")
    assert sum(line.startswith("| Conv2D") for line in lines) == 1  # top 2 op types only


def test_profile_traces_one_step_of_a_config(step_profile):
    summary = step_profile.profile("tiny", batch_size=4, warmup=1, overrides=[])
    assert summary["precision"] == "float32"  # tiny.config trains in float32
    ops = {op for op, _, _ in summary["by_op"]}
    assert any("Conv2D" in op for op in ops) and any("BackpropFilter" in op for op in ops)
    directions = {direction for (_, direction), _ in summary["by_scope"]}
    assert directions == {"forward", "backward"}
    assert 0 < summary["wall_ms"] <= summary["op_ms"] * 2
