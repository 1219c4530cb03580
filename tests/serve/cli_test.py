"""Tests for aster/serve/cli.py (aster-serve): flags, the model that cannot load, the default
(shipped) model served for real, and the core install without the serve extra."""

import os
import subprocess
import sys

import pytest
import shipped_stand_in
import uvicorn
from serve_fixtures import ROOT, image_bytes, multipart, request, running_server
from tiny_model import tiny_config

from aster import pretrained
from aster.serve import cli


@pytest.fixture
def no_serving(monkeypatch):
    """uvicorn.run fails the test if called (nothing may bind)."""

    def run(*args, **kwargs):
        raise AssertionError("uvicorn.run was called")

    monkeypatch.setattr(uvicorn, "run", run)


@pytest.mark.parametrize("damage", ["missing", "no data shard"])
def test_model_that_cannot_load_stops_with_one_line_before_binding(
        tmp_path, monkeypatch, capsys, no_serving, damage):
    if damage == "missing":
        argv = ["--checkpoint_path", str(tmp_path / "nowhere")]
    else:
        prefix = shipped_stand_in.install(tmp_path, monkeypatch, tiny_config())
        os.remove(prefix + ".data-00000-of-00001")
        argv = []
    assert cli.main(argv) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("aster-serve: error: cannot load the model: ")


def test_config_error_is_status_2(tmp_path, monkeypatch, capsys, no_serving):
    shipped_stand_in.install(tmp_path, monkeypatch, tiny_config())
    assert cli.main(["--set", "eval_config.no_such_field=1"]) == 2
    assert capsys.readouterr().err.startswith("aster-serve: config error: ")


@pytest.mark.parametrize("flags, message", [
    (["--max_batch_size", "0"], "--max_batch_size must be >= 1, got 0"),
    (["--max_wait_ms", "-1"], "--max_wait_ms must be >= 0, got -1.0"),
    (["--max_images", "0"], "--max_images must be >= 1, got 0"),
    (["--max_pixels", str(1 << 30)], "--max_pixels must be <= 16777216"),
    (["--timeout_secs", "0"], "--timeout_secs must be > 0"),
])
def test_bad_flags_are_usage_errors(flags, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(flags)
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


def test_serves_the_shipped_model_by_default_on_loopback(tmp_path, monkeypatch, capsys):
    shipped_stand_in.install(tmp_path, monkeypatch, tiny_config(), step=3, value=42.0)
    seen = {}

    def run(app, host, port, **kwargs):
        seen.update(host=host, port=port)
        with running_server(app) as real_port:
            seen["model"] = request(real_port, "GET", "/v1/model")[1]
            seen["answer"] = request(real_port, "POST", "/v1/recognize",
                                     *multipart([("a.png", image_bytes())]))

    monkeypatch.setattr(uvicorn, "run", run)
    assert cli.main(["--max_wait_ms", "1"]) == 0
    assert (seen["host"], seen["port"]) == ("127.0.0.1", 8080)
    assert seen["model"]["name"] == pretrained.DEFAULT_MODEL and seen["model"]["step"] == 3
    assert seen["answer"][0] == 200 and seen["answer"][1]["results"][0]["text"] == "42"
    assert "aster-serve: serving aster_base on http://127.0.0.1:8080/" in capsys.readouterr().err


def test_without_the_serve_extra_it_says_what_to_install(monkeypatch, capsys, no_serving):
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # `import uvicorn` raises ImportError
    assert cli.main([]) == 1
    assert "install the serve extra (pip install 'aster-tf[serve]')" in capsys.readouterr().err


_BLOCK_SERVE_EXTRA = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("starlette", "uvicorn", "multipart", "python_multipart"):
            raise ImportError(f"blocked: {name}")
sys.meta_path.insert(0, Block())
"""


def test_core_package_imports_without_the_serve_extra():
    code = _BLOCK_SERVE_EXTRA + """
import aster, aster.demo, aster.export, aster.inference
from aster.serve import batching, cli, limits, loading
try:
    import aster.serve.app
except ImportError as e:
    print("app needs the extra:", e)
cli.build_parser()
"""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "app needs the extra: blocked: starlette" in result.stdout


def test_flags_parse_without_tensorflow():
    code = ("import sys\nfrom aster.serve import cli\ncli.build_parser().parse_args([])\n"
            "print('tensorflow' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, timeout=60)
    assert result.stdout.strip() == "False", result.stderr[-2000:]
