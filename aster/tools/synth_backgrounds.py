"""Backgrounds for synthetic words, generated at the output size with NumPy (no image files).

Each kind is a function (rng, height, width) -> float32 [height, width, 3] in [0, 255]. The
training mix draws from TRAIN_KINDS; OOD_KINDS are used only by the out-of-distribution
validation style (aster/tools/synth_style.py), so `val_ood` shows backgrounds no training image
has.
"""

import numpy as np
from PIL import Image, ImageDraw


def luminance(rgb):
    """Luma (ITU-R 601) of RGB values in the last axis."""
    return 0.299 * rgb[..., 0] + 0.587 * rgb[..., 1] + 0.114 * rgb[..., 2]


def color_at(rng, level, max_chroma=70.0):
    """An RGB colour of luminance about `level` with a random tint of up to max_chroma."""
    tint = rng.uniform(-1, 1, 3) * rng.uniform(0, max_chroma)
    tint -= luminance(tint)
    return np.clip(level + tint, 0, 255)


def _tinted(rng, lum_low, lum_high, max_chroma=40.0):
    """A colour of luminance in [lum_low, lum_high] with a random tint of up to max_chroma."""
    return color_at(rng, rng.uniform(lum_low, lum_high), max_chroma)


def _fill(color, height, width):
    return np.broadcast_to(np.asarray(color, np.float32), (height, width, 3)).copy()


def smooth_noise(rng, height, width, cell, channels=1):
    """Value noise: random values on a grid of `cell` pixels, bilinearly upsampled, in [-1, 1]."""
    gh, gw = max(2, int(np.ceil(height / cell)) + 1), max(2, int(np.ceil(width / cell)) + 1)
    grid = rng.uniform(0, 255, (gh, gw, channels)).astype(np.uint8)
    image = Image.fromarray(grid[..., 0] if channels == 1 else grid)
    big = np.asarray(image.resize((width, height), Image.BILINEAR), np.float32)
    big = big.reshape(height, width, channels)
    return big / 127.5 - 1.0


def plain_light(rng, height, width):
    return _fill(_tinted(rng, 190, 255, 25), height, width)


def plain_dark(rng, height, width):
    return _fill(_tinted(rng, 0, 70, 30), height, width)


def solid(rng, height, width):
    return _fill(rng.uniform(0, 255, 3), height, width)


def gradient(rng, height, width):
    a, b = rng.uniform(0, 255, 3), rng.uniform(0, 255, 3)
    b = a + (b - a) * rng.uniform(0.2, 1.0)
    angle = rng.uniform(0, 2 * np.pi)
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    t = np.cos(angle) * xs / max(width, 1) + np.sin(angle) * ys / max(height, 1)
    t = (t - t.min()) / max(float(t.max() - t.min()), 1e-6)
    return (a + t[..., None] * (b - a)).astype(np.float32)


def noise(rng, height, width):
    base = rng.uniform(0, 255, 3)
    texture = smooth_noise(rng, height, width, rng.uniform(2, 6), 3) * rng.uniform(10, 40)
    return np.clip(base + texture, 0, 255)


def paper(rng, height, width):
    """Light paper: a tinted light base, blotches, and fine grain."""
    base = _tinted(rng, 175, 250, 30)
    blotch = smooth_noise(rng, height, width, rng.uniform(8, 30)) * rng.uniform(5, 25)
    grain = rng.normal(0, rng.uniform(2, 8), (height, width, 1))
    return np.clip(base + blotch + grain, 0, 255).astype(np.float32)


def photo(rng, height, width):
    """A photograph-like crop: overlapping shapes of random colours over a gradient, drawn at
    1/1 to 1/6 of the size and upsampled (sharp edges to out-of-focus blur), with grain."""
    factor = rng.choice([1, 2, 4, 6])
    small_h, small_w = max(2, height // factor), max(2, width // factor)
    image = Image.fromarray(gradient(rng, small_h, small_w).astype(np.uint8))
    draw = ImageDraw.Draw(image)
    for _ in range(int(rng.integers(3, 9))):
        x0, y0 = rng.uniform(-0.3, 1.0) * small_w, rng.uniform(-0.5, 1.0) * small_h
        w, h = rng.uniform(0.1, 0.8) * small_w, rng.uniform(0.3, 1.5) * small_h
        color = tuple(int(c) for c in rng.uniform(0, 255, 3))
        shape = draw.ellipse if rng.random() < 0.5 else draw.rectangle
        shape([x0, y0, x0 + w, y0 + h], fill=color)
    array = np.asarray(image.resize((width, height), Image.BILINEAR), np.float32)
    return np.clip(array + rng.normal(0, rng.uniform(1, 6), (height, width, 1)), 0, 255)


def fibres(rng, height, width):
    """OOD only: light paper with thin dark and light fibres."""
    image = Image.fromarray(paper(rng, height, width).astype(np.uint8))
    draw = ImageDraw.Draw(image)
    for _ in range(int(rng.integers(5, 20))):
        x0, y0 = rng.uniform(0, width), rng.uniform(0, height)
        length, angle = rng.uniform(3, 25), rng.uniform(0, np.pi)
        shade = int(rng.uniform(-60, 40))
        color = tuple(int(np.clip(c + shade, 0, 255)) for c in image.getpixel((int(x0),
                                                                               int(y0))))
        draw.line([x0, y0, x0 + length * np.cos(angle), y0 + length * np.sin(angle)],
                  fill=color, width=1)
    return np.asarray(image, np.float32)


def wood(rng, height, width):
    """OOD only: a light wood grain (stretched noise bands)."""
    base = _tinted(rng, 150, 225, 60)
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    warp = smooth_noise(rng, height, width, rng.uniform(10, 40))[..., 0] * rng.uniform(3, 10)
    bands = np.sin(2 * np.pi * (ys + warp) / rng.uniform(3, 9))[..., None]
    return np.clip(base + bands * rng.uniform(8, 25), 0, 255).astype(np.float32)


KINDS = {"plain_light": plain_light, "plain_dark": plain_dark, "solid": solid,
         "gradient": gradient, "noise": noise, "paper": paper, "photo": photo,
         "fibres": fibres, "wood": wood}
OOD_ONLY = ("fibres", "wood")
