"""Pictures of recognition examples (PIL only, no TensorFlow).

One sheet row per example: the input image with the predicted TPS control points drawn on it
(top edge points in yellow, bottom edge points in cyan), the rectified image, and the prediction
against the ground truth (green when correct, red when wrong).
"""

import importlib.util
import io
import os
import string

import numpy as np
from PIL import Image, ImageDraw, ImageFont

ROW_HEIGHT = 64
_TEXT_WIDTH = 300
_MARGIN = 4
_CORRECT = (0, 140, 0)
_WRONG = (200, 0, 0)
_NEUTRAL = (60, 60, 60)
# Tried in order for a sheet whose text Pillow's default font cannot draw (Greek, Cyrillic, ...:
# it would show boxes): wide-coverage fonts of the Debian packages and of matplotlib.
WIDE_FONTS = ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
              "/usr/share/fonts/truetype/freefont/FreeSans.ttf",
              "/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf",
              "/usr/share/fonts/truetype/liberation2/LiberationSans-Regular.ttf",
              "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf")


def to_uint8(image, value_range=(0.0, 255.0)):
    """Converts an [H, W, C] float array in `value_range` to uint8 RGB [H, W, 3]."""
    image = np.asarray(image, dtype=np.float32)
    low, high = value_range
    image = (image - low) * (255.0 / (high - low))
    image = np.clip(np.round(image), 0, 255).astype(np.uint8)
    if image.ndim == 2:
        image = image[..., None]
    if image.shape[-1] == 1:
        image = np.repeat(image, 3, axis=-1)
    return image


def _resize_to_height(pil_image, height):
    w, h = pil_image.size
    width = max(1, int(round(w * height / max(h, 1))))
    return pil_image.resize((width, height), Image.BILINEAR)


def draw_control_points(image, control_points, height=ROW_HEIGHT):
    """Draws control points on an image scaled to `height` pixels.

    Args:
      image: [H, W, 3] uint8 array.
      control_points: [K, 2] float array of normalised (x, y) in [0, 1]; the first K/2 points
        are the top edge, the rest the bottom edge. None draws nothing.
      height: output height in pixels (aspect ratio kept).

    Returns:
      PIL.Image (RGB).
    """
    pil = _resize_to_height(Image.fromarray(to_uint8(image, (0, 255))), height)
    if control_points is None or len(control_points) == 0:
        return pil
    draw = ImageDraw.Draw(pil)
    w, h = pil.size
    points = [(float(x) * (w - 1), float(y) * (h - 1)) for x, y in np.asarray(control_points)]
    half = len(points) // 2
    for edge, color in ((points[:half], (255, 220, 0)), (points[half:], (0, 220, 255))):
        if len(edge) > 1:
            draw.line(edge, fill=color, width=1)
        for x, y in edge:
            draw.ellipse([x - 2, y - 2, x + 2, y + 2], outline=color, fill=color)
    return pil


def select_examples(examples, num, incorrect_first=False):
    """Picks the examples for a sheet.

    Args:
      examples: list of dicts with at least a "correct" key (True, False or None).
      num: how many to pick.
      incorrect_first: put the wrongly recognized ones first (in record order), then fill the
        remaining slots with the others in record order.

    Returns:
      A list of at most `num` examples.
    """
    if not incorrect_first:
        return list(examples[:num])
    wrong = [e for e in examples if e.get("correct") is False]
    rest = [e for e in examples if e.get("correct") is not False]
    return (wrong + rest)[:num]


def _text_block(example):
    correct = example.get("correct")
    color = _NEUTRAL if correct is None else (_CORRECT if correct else _WRONG)
    score = example.get("score")
    score_text = "" if score is None else f"  ({score:.2f})"
    mark = "" if correct is None else ("  OK" if correct else "  WRONG")
    return [
        (f"pred: {example.get('prediction') or '(empty)'}{score_text}", color),
        (f"true: {example.get('groundtruth', '')}{mark}", _NEUTRAL),
        (f"#{example.get('index', '?')} {example.get('filename', '')}", _NEUTRAL),
    ]


def _draw_text(draw, xy, text, color, font):
    """Draws text; characters the font cannot encode are shown as escapes instead of failing."""
    try:
        draw.text(xy, text, fill=color, font=font)
    except UnicodeError:
        draw.text(xy, text.encode("ascii", "backslashreplace").decode(), fill=color, font=font)


def _wide_font_paths():
    paths = list(WIDE_FONTS)
    spec = importlib.util.find_spec("matplotlib")
    for location in (spec.submodule_search_locations or []) if spec else []:
        paths.append(os.path.join(location, "mpl-data", "fonts", "ttf", "DejaVuSans.ttf"))
    return [p for p in paths if os.path.isfile(p)]


def sheet_font(texts, size=12):
    """A font that draws every character of `texts`: Pillow's default for printable ASCII, else
    the first of WIDE_FONTS (or matplotlib's DejaVu Sans) whose cmap covers them; the default
    when none does."""
    chars = set("".join(texts)) - set(string.printable)
    if chars:
        from aster.synth.font_checks import cmap_chars  # fontTools, only for such text

        for path in _wide_font_paths():
            try:
                if chars <= cmap_chars(path):
                    return ImageFont.truetype(path, size)
            except Exception:  # an unreadable font file: try the next
                continue
    return ImageFont.load_default()


def make_example_sheet(examples, title=None):
    """Renders examples as one RGB sheet, a row each.

    Args:
      examples: list of dicts: image ([H, W, 3] float in [0, 255] or uint8), optional
        control_points ([K, 2] normalised), optional rectified_image ([h, w, 3] float in [-1, 1]),
        prediction, groundtruth (str), correct (bool or None), optional score, index, filename.
      title: optional line drawn at the top.

    Returns:
      PIL.Image.
    """
    rows = []
    for example in examples:
        cells = [draw_control_points(example["image"], example.get("control_points"))]
        if example.get("rectified_image") is not None:
            rectified = to_uint8(example["rectified_image"], (-1.0, 1.0))
            cells.append(_resize_to_height(Image.fromarray(rectified), ROW_HEIGHT))
        rows.append((cells, _text_block(example)))
    font = sheet_font([title or ""] + [text for _, lines in rows for text, _ in lines])
    title_h = 16 if title else 0
    image_w = max([sum(c.size[0] + _MARGIN for c in cells) for cells, _ in rows], default=0)
    width = _MARGIN + image_w + _TEXT_WIDTH
    height = title_h + _MARGIN + len(rows) * (ROW_HEIGHT + _MARGIN)
    sheet = Image.new("RGB", (max(width, 200), max(height, 24)), (255, 255, 255))
    draw = ImageDraw.Draw(sheet)
    if title:
        _draw_text(draw, (_MARGIN, 2), title, (0, 0, 0), font)
    if not rows:
        _draw_text(draw, (_MARGIN, title_h + 4), "no examples", _NEUTRAL, font)
    y = title_h + _MARGIN
    for cells, lines in rows:
        x = _MARGIN
        for cell in cells:
            sheet.paste(cell, (x, y))
            x += cell.size[0] + _MARGIN
        for i, (text, color) in enumerate(lines):
            _draw_text(draw, (_MARGIN + image_w + 4, y + 4 + 18 * i), text, color, font)
        y += ROW_HEIGHT + _MARGIN
    return sheet


def to_png_bytes(pil_image):
    """Encodes a PIL image as PNG bytes."""
    buffer = io.BytesIO()
    pil_image.save(buffer, format="PNG")
    return buffer.getvalue()


def png_size(png_bytes):
    """(height, width) of PNG bytes."""
    with Image.open(io.BytesIO(png_bytes)) as image:
        return image.size[1], image.size[0]
