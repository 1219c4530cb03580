"""ASTER-TF: attentional scene text recognition with TPS rectification, TF1 graph style.

The protos in protos/ are compiled with grpcio-tools' protoc while the package builds (both
`pip install .` and `pip install -e .`); the generated aster/protos/*_pb2.py are never committed.
"""

import glob
import os

from setuptools import Command, find_packages, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def compile_protos():
    """Compiles protos/*.proto into aster/protos/*_pb2.py in the source tree."""
    from grpc_tools import protoc  # build requirement (pyproject.toml)

    sources = sorted(glob.glob(os.path.join(HERE, "protos", "*.proto")))
    if not sources:
        raise RuntimeError(f"no .proto files under {os.path.join(HERE, 'protos')}")
    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    args = [
        "protoc",
        f"--proto_path=aster/protos={os.path.join(HERE, 'protos')}",
        f"--proto_path={include}",
        f"--python_out={HERE}",
        *sources,
    ]
    if protoc.main(args) != 0:
        raise RuntimeError(f"protoc failed on {sources}")


class BuildProtos(Command):
    """`python setup.py build_protos`: compile the protos only (used by `make protos`)."""

    description = "compile protos/*.proto into aster/protos"
    user_options = []

    def initialize_options(self):
        pass

    def finalize_options(self):
        pass

    def run(self):
        compile_protos()


class BuildPyWithProtos(build_py):
    """Compiles the protos before the package's modules are collected, and puts the shipped
    models (models/<name>/ in the repository) into the built package as aster/models/<name>/."""

    def run(self):
        compile_protos()
        super().run()
        for path in sorted(glob.glob(os.path.join(HERE, "models", "*", "*"))):
            target = os.path.join(self.build_lib, "aster", os.path.relpath(path, HERE))
            self.mkpath(os.path.dirname(target))
            self.copy_file(path, target)


# aster-serve's ASGI stack (the serve extra): Starlette on uvicorn, python-multipart for uploads.
SERVE_REQUIRES = ["starlette==1.10.0", "uvicorn==0.55.0", "python-multipart==0.0.34"]

setup(
    name="aster-tf",
    version="0.1.0",
    description="ASTER scene text recognition (TPS + attention) in TF1 graph style on TF 2.21",
    python_requires=">=3.11,<3.12",
    packages=find_packages(include=["aster", "aster.*"]),
    package_data={"aster.serve": ["static/*"]},  # aster-serve's page
    # The shipped base model (make pretrain, models/ in the repository): aster-demo, aster-export
    # and aster-eval read with it by default (aster/pretrained.py), so the sdist carries models/
    # (MANIFEST.in) and BuildPyWithProtos copies it into the wheel as aster/models/.
    install_requires=[
        "tensorflow==2.21.0",
        "tf-keras==2.21.0",
        "tf-slim==1.1.0",
        "protobuf>=7.35.1,<8",
        "numpy>=1.26",
        "pillow>=10",
        "editdistance>=0.8",
        # The dictionary of aster-synth-words (aster/synth/vocabulary.py): pure data, no deps.
        "english-words==2.0.2",
        "fonttools==4.68.0",
        # fontTools reads .woff2 (the Google Fonts library of `make fonts-google`) with brotli.
        "brotli==1.2.1",
    ],
    extras_require={
        "lmdb": ["lmdb>=1.4"],
        # The build requirements of pyproject.toml are in dev too, so that
        # tests/packaging_test.py builds the wheel without an isolated (PyPI) build environment.
        # pytest-xdist: `make test` runs the suite in two processes (Makefile, TEST_WORKERS).
        # The serve extra too (tests/serve/), and selenium, which drives Debian's chromium and
        # chromedriver in tests/serve/browser_test.py (.ci/run installs those two with apt-get).
        "dev": ["pytest>=8", "pytest-xdist==3.8.0", "ruff==0.17.6", "lmdb>=1.4", "scipy>=1.11",
                "grpcio-tools==1.85.1", "setuptools>=70", "wheel", "ai-edge-litert==2.3.0",
                "tf2onnx==1.17.0", "onnx==1.23.2", "onnxruntime==1.32.0", "wordfreq==3.1.1",
                *SERVE_REQUIRES, "selenium==4.51.0"],
        # aster-serve (aster/serve/): the HTTP API and page. Only aster/serve/ imports these.
        "serve": SERVE_REQUIRES,
        # Word lists for aster-synth-words --language el|ru (aster/synth/languages.py).
        "languages": ["wordfreq==3.1.1"],
        # The LiteRT runtime that runs an `aster-export --format tflite` model without TensorFlow
        # (tests/exporters/lite_export_test.py runs it in a fresh interpreter).
        "tflite": ["ai-edge-litert==2.3.0"],
        # `aster-export --format onnx` (tf2onnx, onnx) and the onnxruntime that runs its model
        # without TensorFlow (tests/exporters/onnx_export_test.py).
        "onnx": ["tf2onnx==1.17.0", "onnx==1.23.2", "onnxruntime==1.32.0"],
        # Font families for aster-synth-words (found by aster/synth/fonts.py in the installed
        # font-* distributions): `make train` installs them so that training sees 11 families and
        # validation 3 unseen ones. SIL OFL / Apache 2.0 fonts, no dependencies.
        "fonts": ["font-caladea==0.0.2", "font-fjallaone==0.1.7", "font-fredoka-one==0.0.4",
                  "font-hanken-grotesk==0.0.2", "font-lato==0.1.0", "font-manrope==0.0.2",
                  "font-rhd==0.1.3", "font-roboto==0.0.1", "font-source-sans-pro==0.0.1",
                  "font-source-serif-pro==0.0.1"],
    },
    entry_points={
        "console_scripts": [
            "aster-config=aster.config_cli:main",
            "aster-train=aster.train:main",
            "aster-eval=aster.eval:main",
            "aster-demo=aster.demo:main",
            "aster-export=aster.export:main",
            "aster-synth-words=aster.synth.generator:main",
            "aster-convert=aster.tools.convert:main",
            "aster-serve=aster.serve.cli:main",
        ],
    },
    cmdclass={"build_py": BuildPyWithProtos, "build_protos": BuildProtos},
)
