"""Tests for aster/tools/synth_render.py."""

import io

import numpy as np
import pytest
from PIL import Image

from aster.tools import fonts, synth_render


@pytest.fixture(scope="module")
def font_path():
    try:
        return fonts.find_fonts()[0].path
    except fonts.NoFontsError:
        pytest.skip("no usable fonts on this machine")


def _decode(png):
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def test_render_fixed_size_rgb(font_path):
    for seed in range(20):
        png, height, width = synth_render.render("Hello42", font_path,
                                                 np.random.default_rng(seed))
        pixels = _decode(png)
        assert pixels.shape == (32, 100, 3) and (height, width) == (32, 100)
        assert pixels.std() > 5  # text is visible against the background


def test_render_keep_aspect_bounds_width(font_path):
    options = synth_render.RenderOptions(height=64, width=256, keep_aspect=True)
    widths = set()
    for seed, text in enumerate(["a", "extraordinarily"]):
        png, height, width = synth_render.render(text, font_path, np.random.default_rng(seed),
                                                 options)
        assert _decode(png).shape == (64, width, 3) and 64 <= width <= 256
        widths.add(width)
    assert len(widths) == 2


def test_render_same_generator_state_same_image(font_path):
    first = synth_render.render("word", font_path, np.random.default_rng(7))
    again = synth_render.render("word", font_path, np.random.default_rng(7))
    other = synth_render.render("word", font_path, np.random.default_rng(8))
    assert first == again and first != other


def test_render_every_augmentation_on(font_path):
    options = synth_render.RenderOptions(curve_prob=1, perspective_prob=1, rotate_prob=1,
                                         blur_prob=1, noise_prob=1, shadow_prob=1)
    for seed in range(5):
        png, _, _ = synth_render.render("curved", font_path, np.random.default_rng(seed), options)
        assert _decode(png).shape == (32, 100, 3)


def test_perspective_coefficients_identity():
    corners = [(0, 0), (10, 0), (10, 5), (0, 5)]
    coefficients = synth_render._perspective_coefficients(corners, corners)
    np.testing.assert_allclose(coefficients, [1, 0, 0, 0, 1, 0, 0, 0], atol=1e-9)
