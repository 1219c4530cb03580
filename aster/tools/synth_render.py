"""Renders one synthetic word image: text mask, geometry, colours, blur and noise.

Pure numpy + PIL (no TensorFlow), so it runs in worker processes. Everything random comes from the
numpy Generator passed in, so an image is a function of (word, font, generator state).

Pipeline for one image (all optional steps are drawn per image):
  1. draw the word in white on black at the font size, optionally with extra letter spacing;
  2. curve it (sine displacement of columns), rotate it a little, warp it in perspective;
  3. crop to the ink with random margins and resize to the output size;
  4. composite a foreground colour over a solid / gradient / noise background with enough
     luminance contrast, optionally with a drop shadow;
  5. gaussian blur and gaussian pixel noise; encode as PNG.
"""

import dataclasses
import io

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

# Font sizes relative to the output height (the text is rendered, warped, then resized).
_FONT_SCALES = (0.9, 1.15, 1.4)


@dataclasses.dataclass(frozen=True)
class RenderOptions:
    """Output size and augmentation strengths.

    height, width: output size in pixels (with keep_aspect, width is the maximum and the image is
      as wide as the text's aspect ratio asks, at least `height` pixels).
    curve_prob, perspective_prob, rotate_prob, blur_prob, noise_prob, shadow_prob: probabilities.
    max_rotation: degrees; max_perspective: corner shift as a fraction of the text height.
    """

    height: int = 32
    width: int = 100
    keep_aspect: bool = False
    curve_prob: float = 0.3
    perspective_prob: float = 0.3
    rotate_prob: float = 0.3
    max_rotation: float = 5.0
    max_perspective: float = 0.25
    blur_prob: float = 0.4
    noise_prob: float = 0.5
    shadow_prob: float = 0.1


_FONT_CACHE = {}


def _font(path, size):
    key = (path, size)
    if key not in _FONT_CACHE:
        _FONT_CACHE[key] = ImageFont.truetype(path, size)
    return _FONT_CACHE[key]


def _text_mask(text, font, spacing):
    """White-on-black 'L' image of the text, padded by half the font size."""
    pad = font.size // 2
    if spacing == 0:
        left, top, right, bottom = font.getbbox(text)
        image = Image.new("L", (right - left + 2 * pad, bottom - top + 2 * pad), 0)
        ImageDraw.Draw(image).text((pad - left, pad - top), text, font=font, fill=255)
        return image
    advances = [font.getlength(c) + spacing for c in text]
    ascent, descent = font.getmetrics()
    image = Image.new("L", (int(sum(advances) + 2 * pad + font.size), ascent + descent + 2 * pad))
    draw, x = ImageDraw.Draw(image), float(pad)
    for char, advance in zip(text, advances, strict=True):
        draw.text((x, pad), char, font=font, fill=255)
        x += advance
    return image


def _curve(mask, rng):
    """Shifts each column vertically along a sine of random amplitude, period and phase."""
    array = np.asarray(mask)
    height, width = array.shape
    amplitude = rng.uniform(0.1, 0.35) * height
    period = rng.uniform(0.8, 2.5) * width
    shift = np.round(amplitude * np.sin(2 * np.pi * np.arange(width) / period
                                        + rng.uniform(0, 2 * np.pi))).astype(np.int64)
    pad = int(np.abs(shift).max()) + 1
    padded = np.pad(array, ((pad, pad), (0, 0)))
    rows = np.arange(height + 2 * pad)[:, None] - shift[None, :]
    return Image.fromarray(np.take_along_axis(padded, np.clip(rows, 0, len(padded) - 1), 0))


def _perspective_coefficients(source, target):
    """PIL PERSPECTIVE coefficients mapping output points `target` to input points `source`."""
    rows = []
    for (x, y), (u, v) in zip(target, source, strict=True):
        rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        rows.append([0, 0, 0, x, y, 1, -v * x, -v * y])
    return np.linalg.solve(np.array(rows, float), np.array(source, float).ravel())


def _perspective(mask, rng, strength):
    width, height = mask.size
    jitter = strength * height * 0.5
    corners = [(0, 0), (width, 0), (width, height), (0, height)]
    moved = [(x + rng.uniform(-jitter, jitter), y + rng.uniform(-jitter, jitter))
             for x, y in corners]
    xs, ys = [p[0] for p in moved], [p[1] for p in moved]
    target = [(x - min(xs), y - min(ys)) for x, y in moved]
    size = (int(np.ceil(max(xs) - min(xs))), int(np.ceil(max(ys) - min(ys))))
    return mask.transform(size, Image.PERSPECTIVE, _perspective_coefficients(corners, target),
                          Image.BILINEAR)


def _crop_to_ink(mask, rng, height):
    box = mask.getbbox()
    if box is None:
        return mask
    ink_h = box[3] - box[1]
    mx, my = rng.uniform(0.0, 0.25, 2) * ink_h, rng.uniform(0.0, 0.2, 2) * ink_h
    return mask.crop((int(box[0] - mx[0]), int(box[1] - my[0]), int(box[2] + mx[1]) + 1,
                      int(box[3] + my[1]) + 1))


def _output_size(mask, options):
    if not options.keep_aspect:
        return options.width, options.height
    aspect = mask.width / max(mask.height, 1)
    return int(np.clip(round(aspect * options.height), options.height, options.width)), \
        options.height


def _luminance(rgb):
    return 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]


def _colors(rng):
    """A background base colour and a foreground colour at least 70 levels apart in luminance."""
    background = rng.uniform(0, 255, 3)
    for _ in range(20):
        foreground = rng.uniform(0, 255, 3)
        if abs(_luminance(foreground) - _luminance(background)) >= 70:
            return background, foreground
    return background, 255.0 - background if _luminance(background) < 128 else background * 0.2


def _background(rng, base, height, width):
    kind = rng.integers(3)
    if kind == 0:  # solid
        return np.broadcast_to(base, (height, width, 3)).astype(np.float32)
    if kind == 1:  # linear gradient to a nearby colour
        other = np.clip(base + rng.uniform(-60, 60, 3), 0, 255)
        ramp = np.linspace(0, 1, width if rng.random() < 0.5 else height, dtype=np.float32)
        ramp = ramp[None, :, None] if len(ramp) == width else ramp[:, None, None]
        return np.broadcast_to(base + ramp * (other - base), (height, width, 3)).astype(np.float32)
    small = rng.normal(0, rng.uniform(10, 35), (max(2, height // 4), max(2, width // 4), 3))
    texture = np.asarray(Image.fromarray(np.clip(small + 128, 0, 255).astype(np.uint8)).resize(
        (width, height), Image.BILINEAR), np.float32) - 128
    return np.clip(base + texture, 0, 255)


def _composite(alpha, rng, options):
    height, width = alpha.shape
    base, foreground = _colors(rng)
    image = _background(rng, base, height, width)
    if rng.random() < options.shadow_prob:
        dx, dy = rng.integers(1, 3, 2)
        shadow = np.zeros_like(alpha)
        shadow[dy:, dx:] = alpha[:-dy, :-dx]
        image = image * (1 - 0.6 * shadow[..., None])
    return image * (1 - alpha[..., None]) + foreground * alpha[..., None]


def render(text, font_path, rng, options=RenderOptions()):
    """Renders `text` with the font at `font_path`.

    Args:
      text: str, the word (characters the font can draw).
      font_path: str, a TrueType/OpenType file.
      rng: numpy.random.Generator, the only source of randomness.
      options: RenderOptions.

    Returns:
      (png_bytes, height, width): the encoded RGB image and its size.
    """
    font = _font(font_path, round(options.height * _FONT_SCALES[rng.integers(len(_FONT_SCALES))]))
    spacing = rng.uniform(0.05, 0.3) * font.size if rng.random() < 0.15 else 0
    mask = _text_mask(text, font, spacing)
    if rng.random() < options.curve_prob:
        mask = _curve(mask, rng)
    if rng.random() < options.rotate_prob:
        angle = rng.uniform(-options.max_rotation, options.max_rotation)
        mask = mask.rotate(angle, resample=Image.BILINEAR, expand=True)
    if rng.random() < options.perspective_prob:
        mask = _perspective(mask, rng, options.max_perspective)
    mask = _crop_to_ink(mask, rng, font.size)
    size = _output_size(mask, options)
    alpha = np.asarray(mask.resize(size, Image.BILINEAR), np.float32) / 255.0
    image = Image.fromarray(np.clip(_composite(alpha, rng, options), 0, 255).astype(np.uint8))
    if rng.random() < options.blur_prob:
        image = image.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 1.0)))
    if rng.random() < options.noise_prob:
        noisy = np.asarray(image, np.float32) + rng.normal(0, rng.uniform(2, 10), (size[1],
                                                                                   size[0], 3))
        image = Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue(), size[1], size[0]
