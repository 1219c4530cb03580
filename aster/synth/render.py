"""Renders one synthetic word image and the keypoints of its text's top and bottom curves.

Pure NumPy + Pillow (no TensorFlow), so it runs in worker processes. Everything random comes from
the numpy Generator passed in, so an image is a function of (text, font, generator state, style).
The style mix is aster/synth/styles.py; backgrounds are aster/synth/backgrounds.py;
the warps are aster/synth/geometry.py.

Pipeline for one image (optional steps drawn per image with the style's probabilities):
  1. draw the word flat, white on black, at about the output resolution: bold, thin, outline,
     letter spacing, neighbouring text beside it;
  2. compose the warps (slant, arc or sine curve, rotation, perspective) and map the ink box's
     top and bottom lines through them: the keypoints;
  3. crop around the warped ink with random (tight to loose) margins and sample the output
     back through the warps (PIL's MESH transform);
  4. composite a text colour of the drawn contrast, an outline colour and a drop shadow over a
     background kind;
  5. Gaussian or motion blur, down-then-up scaling, noise, JPEG artefacts;
  6. the legibility check (style.min_legibility): an image whose text does not stand out from
     the background around it is drawn again (steps 1-5, the generator going on), at most
     style.legibility_tries times, then once more in the clean style; encode as PNG.
"""

import bisect
import collections
import dataclasses
import functools
import io
import math
import os

import numpy as np
from PIL import Image, ImageChops, ImageDraw, ImageFilter, ImageFont

from aster.synth import backgrounds, geometry
from aster.synth.styles import TRAIN_STYLE, clean

KEYPOINTS_PER_CURVE = 10
_THIN_LUT = [max(0, min(255, 2 * v - 200)) for v in range(256)]
_NEIGHBOUR_CHARS = np.array(list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"))


@dataclasses.dataclass(frozen=True)
class Rendered:
    """One image: PNG bytes, size, keypoints [x0, y0, ...] in output pixels (the top curve left
    to right, then the bottom curve), and what was drawn (curve kind, background kind)."""

    png: bytes
    height: int
    width: int
    keypoints: tuple
    curve: str  # "arc", "sine" or ""
    background: str
    redrawn: int = 0  # drafts rejected by the legibility check before this one


# (path, size) -> FreeType font, least recently used first. Bounded: with the Google Fonts
# library (1,500+ faces) and font sizes drawn per image, an unbounded cache grows by gigabytes.
_FONT_CACHE = collections.OrderedDict()
_FONT_CACHE_SIZE = 2048


def _font(path, size):
    key = (path, size)
    font = _FONT_CACHE.get(key)
    if font is None:
        # Basic layout: one glyph per character (no ligatures such as "ae" -> "\u00e6", which
        # would draw a character the label does not have).
        font = ImageFont.truetype(_font_source(path), size,
                                  layout_engine=ImageFont.Layout.BASIC)
        _FONT_CACHE[key] = font
        if len(_FONT_CACHE) > _FONT_CACHE_SIZE:
            _FONT_CACHE.popitem(last=False)
    else:
        _FONT_CACHE.move_to_end(key)
    return font


def _font_source(path):
    """What FreeType opens for a face: for a .woff2 face its TrueType twin (`make fonts-google`
    writes one beside each face the engine uses: FreeType decompresses a .woff2 at every open, up
    to 60 ms for a large face, where a TrueType file opens in ~1 ms), else the path itself."""
    if path.lower().endswith(".woff2"):
        twin = truetype_twin(path)
        if os.path.exists(twin):
            return twin
    return path


def truetype_twin(path):
    """The TrueType file that stands for a .woff2 face: the same name with .ttf."""
    return path[: -len(".woff2")] + ".ttf"


def _uniform(rng, bounds):
    return rng.uniform(bounds[0], bounds[1])


@functools.lru_cache(maxsize=64)
def _cumulative_weights(kinds):
    """Running sums (NumPy's cumsum, as Python floats) of the weights of (name, weight) pairs."""
    return tuple(np.cumsum([w for _, w in kinds]).tolist())


def _pick(rng, kinds):
    """A name of (name, weight) pairs, drawn with the weights (one uniform draw)."""
    cumulative = _cumulative_weights(kinds)
    index = bisect.bisect_right(cumulative, rng.random() * cumulative[-1])
    return kinds[min(index, len(kinds) - 1)][0]


# ------------------------------------------------------------------------------- 1. flat text

def _draw_text(draw, xy, text, font, stroke_width=0):
    """draw.text(xy, text, font=font, fill=255, stroke_width=stroke_width, stroke_fill=255) on
    an 'L' image, as ImageDraw does it (one FreeType render from the fractional start, the mask
    blitted at the integer position) without its per-call Python work."""
    x, y = xy
    start = (math.modf(x)[0], math.modf(y)[0])
    try:
        mask, offset = font.getmask2(text, draw.fontmode, None, None, None, stroke_width, "la",
                                     255, start, stroke_filled=True)
    except OSError:
        if not stroke_width:
            raise
        _draw_dilated(draw, (int(x), int(y)), text, font, stroke_width, start)
        return
    draw.draw.draw_bitmap((int(x) + offset[0], int(y) + offset[1]), mask, 255)


def _draw_dilated(draw, xy, text, font, stroke_width, start):
    """The stroked text for a face FreeType's stroker fails on ("array allocation size too
    large": Rubik Pixels, whose glyphs are hundreds of square contours): the plain text grown by
    stroke_width pixels on every side (a square max filter instead of a round stroke)."""
    mask, offset = font.getmask2(text, draw.fontmode, None, None, None, 0, "la", 255, start)
    pad = stroke_width
    plain = Image.new("L", (mask.size[0] + 2 * pad, mask.size[1] + 2 * pad), 0)
    ImageDraw.Draw(plain).draw.draw_bitmap((pad, pad), mask, 255)
    grown = plain.filter(ImageFilter.MaxFilter(2 * pad + 1))
    draw.bitmap((xy[0] + offset[0] - pad, xy[1] + offset[1] - pad), grown, fill=255)


@functools.lru_cache(maxsize=1 << 16)
def _char_length(font, char):
    """font.getlength(char), remembered (fonts are cached, so the same object comes back)."""
    return font.getlength(char)


def _draw(draw, xy, text, font, spacing, stroke_width=0):
    """The text in white at xy; with `spacing`, character by character that far apart."""
    if not spacing:
        _draw_text(draw, xy, text, font, stroke_width)
        return
    x = xy[0]
    for char in text:
        _draw_text(draw, (x, xy[1]), char, font, stroke_width)
        x += _char_length(font, char) + spacing


def _text_width(text, font, spacing):
    return font.getlength(text) + spacing * len(text)


def _flat_masks(text, font, rng, style):
    """'L' images (fill, outline or None) of the flat text and the main word's ink box."""
    spacing = rng.uniform(0.05, style.max_spacing) * font.size \
        if rng.random() < style.spacing_prob else 0.0
    bold = rng.random() < style.bold_prob
    thin = not bold and rng.random() < style.thin_prob
    outline = rng.random() < style.outline_prob
    ascent, descent = font.getmetrics()
    pad = font.size
    word_w = _text_width(text, font, spacing)
    size = (int(word_w + 2 * pad), ascent + descent + 2 * pad)
    fill = Image.new("L", size, 0)
    stroke = max(1, round(font.size * rng.uniform(0.03, 0.07))) if bold else 0
    _draw(ImageDraw.Draw(fill), (pad, pad), text, font, spacing, stroke)
    if thin:  # erode by a pixel at large sizes; keep only the stroke cores at small ones
        thinner = fill.filter(ImageFilter.MinFilter(3)) if font.size >= 48 else None
        if thinner is None or np.asarray(thinner).sum() < 0.35 * np.asarray(fill).sum():
            thinner = fill.point(_THIN_LUT)
        fill = thinner
    box = fill.getbbox() or (pad, pad, pad + 1, pad + 1)
    if rng.random() < style.neighbour_prob:
        _draw_neighbours(fill, font, rng, box, spacing)
    ring = None
    if outline:
        ring = Image.new("L", size, 0)
        width = max(1, round(font.size * rng.uniform(0.04, 0.1)))
        _draw(ImageDraw.Draw(ring), (pad, pad), text, font, spacing, width)
        ring = ImageChops.subtract(ring, fill)
    return (fill, ring), box


def _draw_neighbours(image, font, rng, box, spacing):
    """Other text left and right of the word, a space away, to be clipped by the crop."""
    draw = ImageDraw.Draw(image)
    gap = _char_length(font, " ") * rng.uniform(0.8, 2.0) + spacing
    for side in (-1, 1):
        chars = "".join(rng.choice(_NEIGHBOUR_CHARS, size=int(rng.integers(2, 6))))
        width = _text_width(chars, font, spacing)
        x = box[0] - gap - width if side < 0 else box[2] + gap
        _draw(draw, (x, font.size), chars, font, spacing)


# ------------------------------------------------------------------------------ 2. the warps

def _warps(box, rng, style):
    """The warps for this image and the kind of curve ("arc", "sine" or "")."""
    left, top, right, bottom = box
    ink_w, ink_h = right - left, bottom - top
    warps, curve = [], ""
    if rng.random() < style.slant_prob:
        warps.append(geometry.Shear(rng.uniform(-style.max_slant, style.max_slant), bottom))
    if rng.random() < style.curve_prob:
        if rng.random() < style.arc_share:
            angle = rng.uniform(style.min_arc, style.max_arc)
            radius = max(ink_w / angle, 2.0 * ink_h)  # short words bend less
            warps.append(geometry.Arc((left + right) / 2, (top + bottom) / 2, radius,
                                            up=rng.random() < 0.5))
            curve = "arc"
        else:
            amplitude = rng.uniform(0.15, max(style.max_sine, 0.15)) * ink_h
            period = rng.uniform(0.8, 2.0) * ink_w
            warps.append(geometry.Sine(amplitude, period, rng.uniform(0, 2 * np.pi)))
            curve = "sine"
    if rng.random() < style.rotate_prob:
        x0, y0, x1, y1 = geometry.bounds(warps, box)
        warps.append(geometry.Rotation(
            rng.uniform(-style.max_rotation, style.max_rotation), (x0 + x1) / 2, (y0 + y1) / 2))
    if rng.random() < style.perspective_prob:
        x0, y0, x1, y1 = geometry.bounds(warps, box)
        corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
        jitter = style.max_perspective * ink_h
        moved = [(x + rng.uniform(-jitter, jitter), y + rng.uniform(-jitter, jitter))
                 for x, y in corners]
        warps.append(geometry.Perspective(corners, moved))
    return warps, curve


def _crop(warps, box, rng, style):
    """(left, top, right, bottom) of the crop around the warped ink box, in the warped plane."""
    x0, y0, x1, y1 = geometry.bounds(warps, box)
    ink_h = box[3] - box[1]
    scale = rng.uniform(1.0, 3.0) if rng.random() < style.loose_prob else 1.0
    mx = [_uniform(rng, style.margin_x) * ink_h * scale for _ in range(2)]
    my = [_uniform(rng, style.margin_y) * ink_h * scale for _ in range(2)]
    left, right = x0 - mx[0], x1 + mx[1]
    top, bottom = y0 - my[0], y1 + my[1]
    return left, top, max(right, left + 4.0), max(bottom, top + 4.0)


def _output_size(crop, style):
    if not style.keep_aspect:
        return style.width, style.height
    aspect = (crop[2] - crop[0]) / max(crop[3] - crop[1], 1e-6)
    return int(np.clip(round(aspect * style.height), style.height, style.width)), style.height


def _sample(masks, warps, crop, size, curved):
    """The masks seen through the warps in the crop, at the output size: [h, w] float32 in
    [0, 1] each (None stays None).

    Sampled piecewise bilinearly at the output size (PIL's MESH transform, exact at the cell
    corners; see geometry.mesh)."""
    cells = geometry.mesh(warps, crop, size, curved)
    out = []
    for mask in masks:
        if mask is not None:
            mask = geometry.transform_mesh(mask, size, cells)
            mask = backgrounds.to_array(mask).astype(np.float32) * np.float32(1 / 255)
        out.append(mask)
    return out


def _keypoints(warps, box, crop, size):
    """Top then bottom line of the ink box through the warps, in output pixels (clipped)."""
    left, top, right, bottom = box
    xs = np.empty((2, KEYPOINTS_PER_CURVE))
    xs[:] = geometry.linspace(left, right, KEYPOINTS_PER_CURVE)
    ys = np.empty((2, KEYPOINTS_PER_CURVE))
    ys[0], ys[1] = top, bottom
    wx, wy = geometry.forward(warps, xs, ys)
    px = np.clip((wx - crop[0]) * size[0] / (crop[2] - crop[0]), 0, size[0])
    py = np.clip((wy - crop[1]) * size[1] / (crop[3] - crop[1]), 0, size[1])
    return tuple(np.stack([px, py], axis=-1).ravel().tolist())


# ------------------------------------------------------------------------------ 4. colours

def _mean_color(channels):
    """The mean colour of [3, height, width] float32 pixels, bit for bit what
    `interleave(channels).reshape(-1, 3).mean(axis=0)` gives: NumPy sums those rows one after
    the other in float32 (the reduced axis is not the contiguous one, so no pairwise summation);
    a running sum along each channel does the same additions in the same order, faster."""
    rows = channels.reshape(3, -1)
    return np.add.accumulate(rows, axis=1)[:, -1] / rows.shape[1]


def _text_colors(rng, background, style):
    """(text colour, outline colour) with the drawn luminance contrast against the background
    ([3, height, width])."""
    bg = float(backgrounds.luminance(_mean_color(background)))
    low = rng.random() < style.low_contrast_prob
    contrast = _uniform(rng, style.low_contrast if low else style.contrast)
    darker, lighter = bg - contrast, bg + contrast
    if darker >= 0 and (lighter > 255 or rng.random() < 0.65):
        target = darker
    elif lighter <= 255:
        target = lighter
    else:
        target = 0.0 if bg > 127 else 255.0
    text = backgrounds.color_at(rng, target)
    outline_luminance = 255.0 - target if abs(255.0 - 2 * target) > 60 else bg
    outline = backgrounds.color_at(rng, outline_luminance, 40.0)
    return text, outline


def _composite(alpha, rng, style):
    """The background with the shadow, outline and text over it: float32 [3, height, width]."""
    fill, ring = alpha
    height, width = fill.shape
    kind = _pick(rng, style.backgrounds)
    image = backgrounds.KINDS[kind](rng, height, width).astype(np.float32)
    text, outline = _text_colors(rng, image, style)
    if rng.random() < style.shadow_prob:
        dx, dy = (int(v) for v in rng.integers(1, 3, 2))
        shadow = np.zeros_like(fill)
        shadow[dy:, dx:] = (fill if ring is None else np.maximum(fill, ring))[:-dy, :-dx]
        image *= 1 - np.float32(rng.uniform(0.4, 0.8)) * shadow
    if ring is not None:
        image += (outline.astype(np.float32)[:, None, None] - image) * ring
    image += (text.astype(np.float32)[:, None, None] - image) * fill
    return image, kind


# ------------------------------------------------------------------------------ 5. photometric

def _motion_kernel(rng):
    kernel = np.zeros((5, 5))
    direction = int(rng.integers(4))
    for i in range(5):
        kernel[((2, i), (i, 2), (i, i), (i, 4 - i))[direction]] = 1.0
    return ImageFilter.Kernel((5, 5), kernel.ravel().tolist(), scale=kernel.sum())


def _photometric(image, rng, style):
    width, height = image.size
    if rng.random() < style.blur_prob:
        image = image.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, style.max_blur)))
    if rng.random() < style.motion_blur_prob:
        image = image.filter(_motion_kernel(rng))
    if rng.random() < style.downscale_prob:
        factor = rng.uniform(style.min_downscale, 0.9)
        small = (max(4, round(width * factor)), max(4, round(height * factor)))
        image = image.resize(small, Image.BILINEAR).resize((width, height), Image.BILINEAR)
    if rng.random() < style.noise_prob:
        pixels = backgrounds.to_array(image).astype(np.float32)
        noisy = pixels + rng.normal(0, rng.uniform(2, style.max_noise), (height, width, 3))
        image = backgrounds.to_image(np.clip(noisy, 0, 255).astype(np.uint8))
    if rng.random() < style.jpeg_prob:
        buffer = io.BytesIO()
        image.save(buffer, format="JPEG", quality=int(rng.integers(*style.jpeg_quality)))
        image = Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")
    return image


def dilate(mask, radius):
    """A boolean mask grown by `radius` pixels in every direction (a square window: the same as
    Pillow's MaxFilter(2 radius + 1) on it, in two passes of shifted ORs, ~10x faster)."""
    wide = mask.copy()
    for shift in range(1, radius + 1):
        wide[:, shift:] |= mask[:, :-shift]
        wide[:, :-shift] |= mask[:, shift:]
    grown = wide.copy()
    for shift in range(1, radius + 1):
        grown[shift:] |= wide[:-shift]
        grown[:-shift] |= wide[shift:]
    return grown


def legibility(image, alpha):
    """How far the finished text stands out: |mean luminance of the ink core - mean luminance of
    the background ring around the ink| / (standard deviation of the ring + 5), on the image as
    encoded (after blur, noise and JPEG). alpha: the (fill, outline or None) masks at the output
    size; an outline counts as ink. Below ~1.5 the text is mostly unreadable (docs/history,
    "Legibility floor"); inf when the crop leaves no ink core or no ring to compare."""
    fill, ring = alpha
    ink = fill if ring is None else np.maximum(fill, ring)
    core = ink > 0.6
    touched = ink > 0.05
    around = dilate(touched, 2) & ~touched
    if core.sum() < 5 or around.sum() < 5:
        return math.inf
    luminance = backgrounds.luminance(
        backgrounds.to_array(image).astype(np.float32))
    surround = luminance[around]
    return abs(float(luminance[core].mean()) - float(surround.mean())) / (
        float(surround.std()) + 5.0)


def _draft(text, font_path, rng, style):
    """Steps 1-5 of the module docstring: (image, legibility, keypoints, curve, background)."""
    if rng.random() < style.clean_prob:
        style = clean(style)
    font = _font(font_path, round(style.height * _uniform(rng, style.font_scale)))
    masks, box = _flat_masks(text, font, rng, style)
    warps, curve = _warps(box, rng, style)
    crop = _crop(warps, box, rng, style)
    size = _output_size(crop, style)
    alpha = _sample(masks, warps, crop, size, bool(curve))
    pixels, background = _composite(alpha, rng, style)
    pixels = np.clip(pixels, 0, 255, out=pixels).astype(np.uint8)
    image = backgrounds.to_image(backgrounds.interleave(pixels))
    image = _photometric(image, rng, style)
    score = legibility(image, alpha) if style.min_legibility > 0 else math.inf
    return image, score, _keypoints(warps, box, crop, size), curve, background


def render(text, font_path, rng, style=TRAIN_STYLE):
    """Renders `text` with the font at `font_path`.

    Args:
      text: str, the word (characters the font can draw: check FontInfo.can_draw first).
      font_path: str, a TrueType/OpenType file.
      rng: numpy.random.Generator, the only source of randomness.
      style: styles.RenderStyle.

    Returns:
      Rendered.
    """
    redrawn = 0
    while True:
        last = redrawn >= style.legibility_tries
        image, score, keypoints, curve, background = _draft(
            text, font_path, rng, clean(style) if last else style)
        if score >= style.min_legibility or last:
            break
        redrawn += 1
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=1)
    return Rendered(buffer.getvalue(), image.size[1], image.size[0], keypoints, curve, background,
                    redrawn)
