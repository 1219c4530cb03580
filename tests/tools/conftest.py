"""Fixtures shared by the tools tests: tiny images on disk, reading TFRecords back, the machine's
fonts."""

import io

import pytest
from PIL import Image

from aster.tools import fonts, tfrecord_utils


def encode_image(size=(12, 8), color=(200, 30, 40), image_format="PNG"):
    """Encoded bytes of a solid `size` = (width, height) RGB image."""
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, format=image_format)
    return buffer.getvalue()


@pytest.fixture
def write_image():
    """write_image(path, size=(w, h), color=..., image_format="PNG") -> path (dirs created)."""

    def write(path, size=(12, 8), color=(200, 30, 40), image_format="PNG"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(encode_image(size, color, image_format))
        return path

    return write


@pytest.fixture
def read_records():
    """read_records(path_or_glob) -> list of example dicts (tfrecord_utils.example_to_dict)."""

    def read(pattern):
        return [tfrecord_utils.example_to_dict(e) for e in tfrecord_utils.read_examples(pattern)]

    return read


@pytest.fixture(scope="session")
def machine_fonts():
    """The usable fonts aster-synth-words finds on this machine; skips the test where none."""
    try:
        return fonts.find_fonts()
    except fonts.NoFontsError:
        pytest.skip("no usable fonts on this machine")
