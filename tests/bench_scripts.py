"""Imports a script of benchmarks/ as a module, for the tests of the benchmark scripts.

    module = bench_scripts.load("step_profile", monkeypatch)

The scripts run as `python benchmarks/<name>.py` and import their siblings (common,
train_throughput, peaks, step_profile; code_paths.py's --patch values import code_paths) by name, so
benchmarks/ goes on sys.path for the test; `forget_siblings` drops those modules again so that
no other test sees them.
"""

import importlib.util
import os
import sys

BENCHMARKS = os.path.join(os.path.dirname(__file__), "..", "benchmarks")
SIBLINGS = ("common", "train_throughput", "peaks", "code_paths", "step_profile")


def load(name, monkeypatch=None):
    """benchmarks/<name>.py as the module bench_<name> (benchmarks/ on sys.path if monkeypatch)."""
    if monkeypatch is not None:
        monkeypatch.syspath_prepend(BENCHMARKS)
    spec = importlib.util.spec_from_file_location(f"bench_{name}",
                                                  os.path.join(BENCHMARKS, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def forget_siblings():
    for name in SIBLINGS:
        sys.modules.pop(name, None)
