"""The source distribution builds a wheel whose generated protos work.

The sdist is built from a copy of the checkout (setuptools' PEP 517 `build_sdist`), a wheel from
the sdist alone (`pip wheel --no-deps`; without an isolated build environment when this one
already has pyproject.toml's build requirements, as the dev extra installs them, else pip fetches
them from PyPI), and the wheel is installed with `--no-deps` into a fresh virtualenv. That
virtualenv sees this environment's packages (protobuf) through a path line in a .pth file only:
the editable install's import hook there does not run, so `aster` can only come from the wheel.
The import runs from an empty temporary folder, never from the source tree.
"""

import glob
import os
import subprocess
import sys
import tarfile
import tomllib
from importlib import metadata

import google.protobuf
import pytest
import source_tree
from packaging.requirements import Requirement

from aster.utils import config_util

ROOT = source_tree.ROOT
TINY = os.path.join(ROOT, "configs", "tiny.config")

# Run by the fresh virtualenv's Python: the generated modules import and parse a shipped config.
IMPORT_CHECK = """
import sys
from google.protobuf import text_format
from aster.protos import pipeline_pb2
with open(sys.argv[1]) as f:
    config = text_format.Parse(f.read(), pipeline_pb2.TrainEvalPipelineConfig())
print(pipeline_pb2.__file__)
print(config.SerializeToString(deterministic=True).hex())
"""


def _run(args, cwd=None):
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run([str(a) for a in args], cwd=cwd, env=environment,
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, f"{args}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result.stdout


def _build_requirements_met():
    """Whether this environment has every build requirement of pyproject.toml."""
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        requires = tomllib.load(f)["build-system"]["requires"]
    for text in requires:
        requirement = Requirement(text)
        try:
            version = metadata.version(requirement.name)
        except metadata.PackageNotFoundError:
            return False
        if not requirement.specifier.contains(version, prereleases=True):
            return False
    return True


def _build_sdist(tree, output_dir):
    code = f"from setuptools import build_meta; print(build_meta.build_sdist({str(output_dir)!r}))"
    name = _run([sys.executable, "-c", code], cwd=tree).strip().splitlines()[-1]
    return os.path.join(output_dir, name)


def _sdist_files(sdist):
    """The sdist's file paths relative to its top folder."""
    with tarfile.open(sdist) as archive:
        return {m.name.split("/", 1)[1] for m in archive.getmembers() if m.isfile()}


def _build_wheel(sdist, output_dir):
    offline = ["--no-build-isolation", "--no-index"] if _build_requirements_met() else []
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-cache-dir", *offline,
          "-w", output_dir, sdist])
    (wheel,) = glob.glob(os.path.join(output_dir, "aster_tf-*.whl"))
    return wheel


def _fresh_venv(path):
    """A virtualenv without pip that sees this environment's packages; (python, site-packages)."""
    _run([sys.executable, "-m", "venv", "--without-pip", path])
    python = os.path.join(path, "bin", "python")
    site_packages = _run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
    outside = os.path.dirname(os.path.dirname(os.path.dirname(google.protobuf.__file__)))
    with open(os.path.join(site_packages.strip(), "outside.pth"), "w") as f:
        f.write(outside + "\n")
    return python, site_packages.strip()


@pytest.mark.slow
def test_wheel_built_from_the_sdist_has_working_protos(tmp_path):
    tree = source_tree.copy_source_tree(tmp_path / "tree")
    (tmp_path / "sdist").mkdir()
    sdist = _build_sdist(tree, tmp_path / "sdist")

    files = _sdist_files(sdist)
    protos = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "protos", "*")))
    assert protos and set(protos) <= files, f"missing from the sdist: {set(protos) - files}"
    assert {"README.md", "pyproject.toml", "setup.py", "configs/tiny.config",
            "configs/demo_cpu_el.config", "configs/charsets/el.txt"} <= files
    assert not [f for f in files if f.endswith("_pb2.py")], "generated modules are built, not shipped"

    wheel = _build_wheel(sdist, tmp_path / "wheel")
    python, site_packages = _fresh_venv(tmp_path / "venv")
    _run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps",
          "--no-index", wheel])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    module_file, parsed = _run([python, "-c", IMPORT_CHECK, TINY], cwd=elsewhere).split()
    assert os.path.commonpath([module_file, site_packages]) == site_packages, module_file
    expected = config_util.load_pipeline_config(TINY).SerializeToString(deterministic=True)
    assert bytes.fromhex(parsed) == expected

    # The shipped model is package data: the wheel's aster-demo reads with it, from elsewhere.
    shipped = {f for f in files if f.startswith("models/")}
    assert {os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "models", "*",
                                                                      "*"))} == shipped
    word = elsewhere / "word.png"
    _render_word("hello", word)
    printed = _run([os.path.join(os.path.dirname(python), "aster-demo"), word.name],
                   cwd=elsewhere)
    assert printed.split("\t")[:2] == ["word.png", "hello"], printed
    assert sorted(os.listdir(elsewhere)) == ["word.png"]


def _render_word(text, path):
    """`text` in black on white with Pillow's own font (no font file needed)."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default(size=40)
    image = Image.new("RGB", (200, 64), "white")
    draw = ImageDraw.Draw(image)
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    draw.text(((200 - right - left) / 2, (64 - bottom - top) / 2), text, fill="black", font=font)
    image.save(path)
