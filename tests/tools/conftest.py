"""Fixtures shared by the tools tests: tiny images on disk (read_records and machine_fonts are
in tests/conftest.py)."""

import io

import pytest
from PIL import Image


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
