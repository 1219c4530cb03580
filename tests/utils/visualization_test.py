"""Tests for aster/utils/visualization.py."""

import io

import numpy as np
import pytest
from PIL import Image

from aster.utils import visualization


def _example(index, correct, with_rectified=True):
    rng = np.random.default_rng(index)
    return {
        "index": index,
        "image": rng.uniform(0, 255, size=(32, 64, 3)).astype(np.float32),
        "control_points": np.stack(
            [np.tile(np.linspace(0, 1, 5), 2), np.repeat([0.0, 1.0], 5)], axis=1
        ),
        "rectified_image": rng.uniform(-1, 1, size=(16, 50, 3)) if with_rectified else None,
        "prediction": "pred",
        "groundtruth": "pred" if correct else "truth",
        "correct": correct,
        "score": -0.25,
        "filename": f"img_{index}.png",
    }


def test_to_uint8_maps_value_range_and_clips():
    out = visualization.to_uint8(np.array([[[-1.0], [0.0], [1.0], [3.0]]]), (-1.0, 1.0))
    assert out.dtype == np.uint8 and out.shape == (1, 4, 3)
    assert out[0, :, 0].tolist() == [0, 128, 255, 255]


def test_draw_control_points_marks_top_and_bottom_edges():
    image = np.zeros((32, 128, 3), np.uint8)
    points = np.array([[0.1, 0.0], [0.9, 0.0], [0.1, 1.0], [0.9, 1.0]])
    pil = visualization.draw_control_points(image, points, height=64)
    pixels = np.asarray(pil)
    assert pil.size == (256, 64)
    assert pixels[0].max() > 0 and pixels[-1].max() > 0  # both edges drawn
    assert pixels[32].max() == 0  # nothing in the middle row


def test_select_examples_incorrect_first_then_fill():
    examples = [{"index": i, "correct": i % 3 == 0} for i in range(6)]
    picked = visualization.select_examples(examples, 4, incorrect_first=True)
    assert [e["index"] for e in picked] == [1, 2, 4, 5]
    picked = visualization.select_examples(examples, 5, incorrect_first=True)
    assert [e["index"] for e in picked] == [1, 2, 4, 5, 0]
    picked = visualization.select_examples(examples, 2)
    assert [e["index"] for e in picked] == [0, 1]


def test_make_example_sheet_has_a_row_per_example_and_encodes_png():
    examples = [_example(0, True), _example(1, False), _example(2, None, with_rectified=False)]
    sheet = visualization.make_example_sheet(examples, title="step 5")
    rows = len(examples)
    assert sheet.size[1] >= rows * visualization.ROW_HEIGHT
    decoded = Image.open(io.BytesIO(visualization.to_png_bytes(sheet)))
    assert decoded.size == sheet.size and decoded.format == "PNG"


def test_make_example_sheet_colors_wrong_prediction_red():
    sheet = np.asarray(visualization.make_example_sheet([_example(1, False)]))
    red = (sheet[..., 0] > 150) & (sheet[..., 1] < 60) & (sheet[..., 2] < 60)
    assert red.any()


def test_make_example_sheet_handles_no_examples_and_non_latin_text():
    assert visualization.make_example_sheet([]).size[0] > 0
    example = _example(0, False)
    example["prediction"] = "文字"
    assert visualization.make_example_sheet([example]).size[0] > 0


def test_a_greek_sheet_is_drawn_with_a_font_that_has_greek():
    ascii_font = visualization.sheet_font(["pred: hello (0.12)"])
    greek_font = visualization.sheet_font(["pred: λόγος", "true: ΆΡΗΣ"])
    if greek_font.getname() == ascii_font.getname():
        pytest.skip("no font with Greek among visualization.WIDE_FONTS on this machine")
    # A letter the font lacks draws the .notdef box, the same for every such letter; the chosen
    # font draws each Greek letter with a glyph of its own.
    masks = {bytes(greek_font.getmask(c)) for c in "λόγςΆΡΗΣ"}
    assert len(masks) == len("λόγςΆΡΗΣ")
    sheet = visualization.make_example_sheet(
        [{"image": np.zeros((32, 100, 3), np.uint8), "prediction": "λόγος",
          "groundtruth": "λόγος", "correct": True}], title="step 5 protocol 1")
    assert sheet.size[1] > 32
