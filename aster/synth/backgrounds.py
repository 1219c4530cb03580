"""Backgrounds for synthetic words, generated at the output size with NumPy (no image files).

Each kind is a function (rng, height, width) -> float32 [3, height, width] in [0, 255]: channels
first, because NumPy runs one inner loop per pixel over a last axis of 3 (broadcasting a colour
or a [height, width] mask over interleaved RGB costs ~10x more). `interleave` turns such an
array into the [height, width, 3] layout of PIL. The kinds in OOD_ONLY are used only by the
out-of-distribution validation style (aster/synth/styles.py), so `val_ood` shows
backgrounds no training image has.
"""

import functools

import numpy as np
from PIL import Image, ImageDraw


def luminance(rgb):
    """Luma (ITU-R 601) of RGB values in the last axis."""
    return 0.299 * rgb[..., 0] + 0.587 * rgb[..., 1] + 0.114 * rgb[..., 2]


def color_at(rng, level, max_chroma=70.0):
    """An RGB colour [3] of luminance about `level` with a random tint of up to max_chroma
    (computed on Python floats: the same float64 operations as on arrays, far cheaper)."""
    direction = rng.uniform(-1, 1, 3).tolist()
    chroma = rng.uniform(0, max_chroma)
    red, green, blue = (d * chroma for d in direction)
    grey = 0.299 * red + 0.587 * green + 0.114 * blue  # luminance of the tint
    level = float(level)
    return np.array([min(max(level + (c - grey), 0.0), 255.0) for c in (red, green, blue)])


def _tinted(rng, lum_low, lum_high, max_chroma=40.0):
    """A colour of luminance in [lum_low, lum_high] with a random tint of up to max_chroma."""
    return color_at(rng, rng.uniform(lum_low, lum_high), max_chroma)


def _fill(color, height, width):
    """[3, height, width] float32 of one colour."""
    image = np.empty((3, height, width), np.float32)
    image[:] = np.asarray(color, np.float32)[:, None, None]
    return image


def _channels(color):
    """A colour [3] as a [3, 1, 1] array, to broadcast over [3, height, width]."""
    return np.asarray(color)[:, None, None]


def planar(pixels):
    """[height, width, 3] -> [3, height, width] (a contiguous copy)."""
    return np.ascontiguousarray(pixels.transpose(2, 0, 1))


def interleave(channels):
    """[3, height, width] -> [height, width, 3] (a contiguous copy), channel by channel (a
    transposing copy runs one inner loop per pixel)."""
    pixels = np.empty(channels.shape[1:] + (3,), channels.dtype)
    for index in range(3):
        pixels[..., index] = channels[index]
    return pixels


def to_image(pixels):
    """The PIL image ('L' or 'RGB') of uint8 [height, width] or [height, width, 3] pixels: what
    Image.fromarray gives, through the cheaper Image.frombytes."""
    mode = "L" if pixels.ndim == 2 else "RGB"
    return Image.frombytes(mode, (pixels.shape[1], pixels.shape[0]), pixels.tobytes())


def to_array(image):
    """np.asarray(image) of an 'L' or 'RGB' image (uint8, read-only), through the cheaper
    image.tobytes()."""
    shape = (image.height, image.width) + (() if image.mode == "L" else (3,))
    return np.frombuffer(image.tobytes(), np.uint8).reshape(shape)


def _image(channels):
    """A PIL RGB image of [3, height, width] values in [0, 255] (truncated to uint8)."""
    return to_image(interleave(channels.astype(np.uint8)))


@functools.lru_cache(maxsize=64)
def _pixel_grid(height, width):
    """(ys, xs): float32 [height, width] row and column indices (read-only: they are shared)."""
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    ys.flags.writeable = xs.flags.writeable = False
    return ys, xs


def smooth_noise(rng, height, width, cell, channels=1):
    """Value noise: random values on a grid of `cell` pixels (a number, or (rows, columns) for
    noise stretched along one axis), bilinearly upsampled, in [-1, 1]: float32 [channels,
    height, width]."""
    cell_y, cell_x = (cell, cell) if np.isscalar(cell) else cell
    gh, gw = max(2, int(np.ceil(height / cell_y)) + 1), max(2, int(np.ceil(width / cell_x)) + 1)
    grid = rng.uniform(0, 255, (gh, gw, channels)).astype(np.uint8)
    image = to_image(grid[..., 0] if channels == 1 else grid)
    big = to_array(image.resize((width, height), Image.BILINEAR)).astype(np.float32)
    big = big.reshape(1, height, width) if channels == 1 else planar(big)
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
    ys, xs = _pixel_grid(height, width)
    t = np.cos(angle) * xs / max(width, 1) + np.sin(angle) * ys / max(height, 1)
    t = (t - t.min()) / max(float(t.max() - t.min()), 1e-6)
    return (_channels(a) + t * _channels(b - a)).astype(np.float32)


def noise(rng, height, width):
    base = rng.uniform(0, 255, 3)
    texture = smooth_noise(rng, height, width, rng.uniform(2, 6), 3) * rng.uniform(10, 40)
    return np.clip(_channels(base) + texture, 0, 255)


def paper(rng, height, width):
    """Light paper: a tinted light base, blotches, and fine grain."""
    base = _tinted(rng, 175, 250, 30)
    blotch = smooth_noise(rng, height, width, rng.uniform(8, 30)) * rng.uniform(5, 25)
    grain = rng.normal(0, rng.uniform(2, 8), (1, height, width))
    return np.clip(_channels(base) + blotch + grain, 0, 255).astype(np.float32)


def photo(rng, height, width):
    """A photograph-like crop: overlapping shapes of random colours over a gradient, drawn at
    1/1 to 1/6 of the size and upsampled (sharp edges to out-of-focus blur), with grain."""
    factor = rng.choice([1, 2, 4, 6])
    small_h, small_w = max(2, height // factor), max(2, width // factor)
    image = _image(gradient(rng, small_h, small_w))
    draw = ImageDraw.Draw(image)
    for _ in range(int(rng.integers(3, 9))):
        x0, y0 = rng.uniform(-0.3, 1.0) * small_w, rng.uniform(-0.5, 1.0) * small_h
        w, h = rng.uniform(0.1, 0.8) * small_w, rng.uniform(0.3, 1.5) * small_h
        color = tuple(int(c) for c in rng.uniform(0, 255, 3))
        shape = draw.ellipse if rng.random() < 0.5 else draw.rectangle
        shape([x0, y0, x0 + w, y0 + h], fill=color)
    channels = planar(to_array(image.resize((width, height), Image.BILINEAR)).astype(np.float32))
    grain = rng.normal(0, rng.uniform(1, 6), (1, height, width))
    return np.clip(channels + grain, 0, 255)


def stripes(rng, height, width):
    """Parallel bands at any angle (ruled paper, fabric, hatching), one set or two crossing:
    sine or hard-edged, 3-18 px apart, in a second colour over a plain base."""
    base = _tinted(rng, 30, 240, 50)
    ys, xs = _pixel_grid(height, width)
    image = _fill(base, height, width)
    for _ in range(1 if rng.random() < 0.7 else 2):
        angle, period = rng.uniform(0, np.pi), rng.uniform(3, 18)
        phase = (np.cos(angle) * xs + np.sin(angle) * ys) / period + rng.uniform(0, 1)
        if rng.random() < 0.5:
            band = 0.5 + 0.5 * np.sin(2 * np.pi * phase)
        else:
            band = (phase - np.floor(phase) < rng.uniform(0.15, 0.5)).astype(np.float32)
        other = _tinted(rng, 0, 255, 60)
        image += (_channels(other) - _channels(base)) * (band * rng.uniform(0.1, 0.35))
    return np.clip(image, 0, 255).astype(np.float32)


def clutter(rng, height, width):
    """Marks around the text: scribbles, arcs, dots and box outlines in shades of a paper or
    plain base (stains, doodles and printing on a surface)."""
    base = paper(rng, height, width) if rng.random() < 0.5 else _fill(
        _tinted(rng, 20, 245, 50), height, width)
    image = _image(base)
    draw = ImageDraw.Draw(image)
    mean = base.reshape(3, -1).mean(axis=1)
    for _ in range(int(rng.integers(4, 20))):
        shade = rng.uniform(-90, 70)
        color = tuple(int(min(max(c + shade, 0), 255)) for c in mean)
        line_width = 1 if rng.random() < 0.7 else 2
        x0, y0 = rng.uniform(-0.1, 1.0) * width, rng.uniform(-0.2, 1.0) * height
        size = rng.uniform(2, 0.8 * height)
        mark = rng.random()
        if mark < 0.35:  # a scribble: a polyline of 3-5 points
            points = [(x0, y0)]
            for _ in range(int(rng.integers(2, 5))):
                points.append((points[-1][0] + rng.uniform(-1, 1) * size,
                               points[-1][1] + rng.uniform(-1, 1) * size))
            draw.line(points, fill=color, width=line_width, joint="curve")
        elif mark < 0.65:
            start = rng.uniform(0, 360)
            draw.arc([x0, y0, x0 + size, y0 + size * rng.uniform(0.4, 1.5)], start,
                     start + rng.uniform(40, 300), fill=color, width=line_width)
        elif mark < 0.85:
            radius = rng.uniform(0.5, 2.0)
            draw.ellipse([x0 - radius, y0 - radius, x0 + radius, y0 + radius], fill=color)
        else:
            draw.rectangle([x0, y0, x0 + size * rng.uniform(0.5, 3), y0 + size],
                           outline=color, width=line_width)
    return planar(to_array(image).astype(np.float32))


def fractal(rng, height, width):
    """Three octaves of value noise, stretched along a random axis (stone, concrete, fabric),
    blending two colours."""
    stretch = rng.uniform(1, 4)
    along_x = rng.random() < 0.5
    total, weight = np.zeros((1, height, width), np.float32), 1.0
    for octave in range(3):
        cell = rng.uniform(6, 16) / 2 ** octave
        cells = (cell, cell * stretch) if along_x else (cell * stretch, cell)
        total += weight * smooth_noise(rng, height, width, cells)
        weight *= 0.5
    t = np.clip(0.5 + total * rng.uniform(0.4, 0.9), 0, 1)
    a, b = _tinted(rng, 30, 240, 50), _tinted(rng, 30, 240, 50)
    return (_channels(a) + t * (_channels(b) - _channels(a))).astype(np.float32)


def fibres(rng, height, width):
    """OOD only: light paper with thin dark and light fibres."""
    image = _image(paper(rng, height, width))
    draw = ImageDraw.Draw(image)
    for _ in range(int(rng.integers(5, 20))):
        x0, y0 = rng.uniform(0, width), rng.uniform(0, height)
        length, angle = rng.uniform(3, 25), rng.uniform(0, np.pi)
        shade = int(rng.uniform(-60, 40))
        color = tuple(int(np.clip(c + shade, 0, 255)) for c in image.getpixel((int(x0),
                                                                               int(y0))))
        draw.line([x0, y0, x0 + length * np.cos(angle), y0 + length * np.sin(angle)],
                  fill=color, width=1)
    return planar(to_array(image).astype(np.float32))


def wood(rng, height, width):
    """OOD only: a light wood grain (stretched noise bands)."""
    base = _tinted(rng, 150, 225, 60)
    ys, _ = _pixel_grid(height, width)
    warp = smooth_noise(rng, height, width, rng.uniform(10, 40))[0] * rng.uniform(3, 10)
    bands = np.sin(2 * np.pi * (ys + warp) / rng.uniform(3, 9))
    return np.clip(_channels(base) + bands * rng.uniform(8, 25), 0, 255).astype(np.float32)


KINDS = {"plain_light": plain_light, "plain_dark": plain_dark, "solid": solid,
         "gradient": gradient, "noise": noise, "paper": paper, "photo": photo,
         "stripes": stripes, "clutter": clutter, "fractal": fractal,
         "fibres": fibres, "wood": wood}
OOD_ONLY = ("fibres", "wood")
