"""benchmarks/common.py: the sections appended to benchmarks/RESULTS.md."""

import importlib.util
import os

PATH = os.path.join(os.path.dirname(__file__), "..", "benchmarks", "common.py")


def _common():
    spec = importlib.util.spec_from_file_location("bench_common", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_append_section_bullets_text_and_keeps_tables_as_tables(tmp_path):
    common = _common()
    common.RESULTS = str(tmp_path / "RESULTS.md")
    common.append_section("Speed", ["Command: `x`", "", "| a | b |", "|---|---:|", "| 1 | 2 |"])
    lines = (tmp_path / "RESULTS.md").read_text().splitlines()
    assert lines[0] == "# Benchmark results"
    assert lines[2].startswith("## Speed (")
    assert lines[4:] == ["- Command: `x`", "", "| a | b |", "|---|---:|", "| 1 | 2 |"]
