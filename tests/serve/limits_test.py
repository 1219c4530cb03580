"""Tests for aster/serve/limits.py: the request limits and the check of each image."""

import io
import time

import pytest
from PIL import Image
from serve_fixtures import huge_png, image_bytes

from aster.data_decoders.tf_example_decoder import MAX_PIXELS
from aster.serve import limits

LIMIT = MAX_PIXELS


@pytest.mark.parametrize("fmt, mode", [("PNG", "RGB"), ("PNG", "RGBA"), ("JPEG", "RGB"),
                                       ("JPEG", "L"), ("GIF", "P"), ("BMP", "RGB")])
def test_formats_the_graph_decodes_pass_as_they_came(fmt, mode):
    data = image_bytes(fmt=fmt, mode=mode)
    assert limits.check_image(data, LIMIT) is data


@pytest.mark.parametrize("fmt, mode", [("TIFF", "RGB"), ("WEBP", "RGB"), ("JPEG", "CMYK")])
def test_other_formats_are_reencoded_as_rgb_png(fmt, mode):
    data = limits.check_image(image_bytes(30, 10, 200, fmt, mode), LIMIT)
    with Image.open(io.BytesIO(data)) as image:
        assert (image.format, image.mode, image.size) == ("PNG", "RGB", (30, 10))


@pytest.mark.parametrize("data, message", [
    (b"", "empty file"),
    (b"plain text, not an image", r"not an image \(no format Pillow reads\)"),
    (image_bytes(200, 100)[:80], r"damaged image \("),
])
def test_unreadable_bytes_raise_naming_why(data, message):
    with pytest.raises(limits.ImageError, match=message):
        limits.check_image(data, LIMIT)


def test_decompression_bomb_is_refused_from_its_header_quickly():
    data = huge_png()
    assert len(data) < 100_000
    start = time.monotonic()
    with pytest.raises(limits.ImageError, match=rf"more than the {LIMIT} pixels allowed .*"
                                                r"144000000 pixels"):
        limits.check_image(data, LIMIT)
    assert time.monotonic() - start < 2.0


def test_image_over_the_limit_is_refused_with_its_size():
    with pytest.raises(limits.ImageError, match="^5000x4000 is 20000000 pixels, more than the "
                                                f"{LIMIT} allowed$"):
        limits.check_image(huge_png(5000, 4000), LIMIT)
    with pytest.raises(limits.ImageError, match="60x20 is 1200 pixels, more than the 1000"):
        limits.check_image(image_bytes(60, 20), 1000)


def test_pillow_bomb_warning_is_an_image_error(monkeypatch):
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)  # Pillow warns above it, refuses above 2x
    with pytest.raises(limits.ImageError, match="more than the 1500 pixels allowed"):
        limits.check_image(image_bytes(60, 20), 1500)


def test_limits_default_to_the_data_pipelines_pixel_limit():
    assert limits.Limits().max_pixels == MAX_PIXELS == limits.max_pixels_limit()
    assert limits.Limits(max_pixels=500).max_pixels == 500


@pytest.mark.parametrize("kwargs, message", [
    ({"max_request_bytes": 0}, "max_request_bytes must be >= 1, got 0"),
    ({"max_images": 0}, "max_images must be >= 1, got 0"),
    ({"max_pixels": 0}, "max_pixels must be >= 1, got 0"),
    ({"max_pixels": MAX_PIXELS + 1}, f"max_pixels must be <= {MAX_PIXELS}"),
    ({"timeout_secs": 0}, "timeout_secs must be > 0, got 0"),
])
def test_bad_limits_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        limits.Limits(**kwargs)
