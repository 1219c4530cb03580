"""The command-line programs are thin: none imports another; they share the libraries."""

import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAMS = ("train", "eval", "export", "demo")


def _imported_modules(path):
    """Every `aster.<name>` module the file imports, at any depth of the code."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            if node.module == "aster":
                found.update(f"aster.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("program", PROGRAMS)
def test_program_imports_no_other_program(program):
    imported = _imported_modules(os.path.join(ROOT, "aster", f"{program}.py"))
    others = sorted(f"aster.{p}" for p in PROGRAMS if p != program and f"aster.{p}" in imported)
    assert not others, f"aster/{program}.py imports {others}"


# Lower layers that import none of the layers above them (builders build from them; the data
# decoders and meta-architectures use them).
_UPPER = ("aster.builders", "aster.data_decoders", "aster.meta_architectures")


@pytest.mark.parametrize("package", ["core", "readers", "utils"])
def test_lower_layers_import_no_builder_decoder_or_model(package):
    folder = os.path.join(ROOT, "aster", package)
    upward = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            imported = _imported_modules(os.path.join(folder, name))
            found = sorted(m for m in imported if m.startswith(_UPPER))
            if found:
                upward[f"aster/{package}/{name}"] = found
    assert not upward, upward


def test_synth_rendering_imports_no_tensorflow():
    """The renderer runs in worker processes: its modules load without TensorFlow."""
    import subprocess
    import sys

    modules = ("render", "geometry", "backgrounds", "styles", "fonts", "font_checks",
               "font_families", "vocabulary", "languages")
    code = ("import sys\n" + "".join(f"import aster.synth.{m}\n" for m in modules)
            + "print('tensorflow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stdout + out.stderr


def test_moved_modules_are_gone_from_their_old_homes():
    """The engine and the exporters have one home each: no shim is left at the old paths."""
    old = [os.path.join("aster", "tools", f"{name}.py") for name in (
        "synth_words", "synth_render", "synth_geometry", "synth_backgrounds", "synth_style",
        "fonts", "font_checks", "font_families", "vocabulary", "languages")]
    old += [os.path.join("aster", f"{name}.py") for name in (
        "saved_model_export", "lite_export", "onnx_export", "lite_runtime", "onnx_runtime")]
    assert [p for p in old if os.path.exists(os.path.join(ROOT, p))] == []
