"""Tests for aster/tools/converters/synthtext.py (gt.mat written with scipy.io.savemat)."""

import numpy as np
import pytest
import scipy.io

from aster.tools.converters import synthtext


def _char_boxes(x0, y0, width, height, count, bend=0.0):
    """[2, 4, count] boxes of `count` characters left to right, tops on a parabola of `bend`."""
    boxes = np.zeros((2, 4, count))
    for c in range(count):
        left, right = x0 + c * width, x0 + (c + 1) * width
        top = y0 + bend * (c - (count - 1) / 2) ** 2
        boxes[:, :, c] = [[left, right, right, left], [top, top, top + height, top + height]]
    return boxes


def _word_box(chars):
    xs, ys = chars[0], chars[1]
    return np.array([[xs.min(), xs.max(), xs.max(), xs.min()],
                     [ys.min(), ys.min(), ys.max(), ys.max()]])


def _fixture(tmp_path, write_image):
    write_image(tmp_path / "8" / "ballet_1.jpg", size=(120, 60), image_format="JPEG")
    write_image(tmp_path / "8" / "ballet_2.jpg", size=(50, 50), image_format="JPEG")
    hello = _char_boxes(10, 10, 8, 12, 5, bend=1.0)
    at = _char_boxes(70, 40, 8, 12, 2)
    single = _char_boxes(5, 5, 10, 10, 1)
    imnames = np.empty((1, 3), dtype=object)
    imnames[0, :] = [np.array(["8/ballet_1.jpg"]), np.array(["8/ballet_2.jpg"]),
                     np.array(["8/ballet_2.jpg"])]
    txt = np.empty((1, 3), dtype=object)
    txt[0, 0] = np.array(["Hello   ", "at"], dtype=object)
    txt[0, 1] = np.array(["I"], dtype=object)
    txt[0, 2] = np.array(["two words"], dtype=object)  # mismatch: one box for two words
    word_bb, char_bb = np.empty((1, 3), dtype=object), np.empty((1, 3), dtype=object)
    word_bb[0, 0] = np.stack([_word_box(hello), _word_box(at)], axis=2)
    char_bb[0, 0] = np.concatenate([hello, at], axis=2)
    word_bb[0, 1], char_bb[0, 1] = _word_box(single), single  # [2, 4]: a single word
    word_bb[0, 2], char_bb[0, 2] = _word_box(single), single
    scipy.io.savemat(str(tmp_path / "gt.mat"),
                     {"imnames": imnames, "txt": txt, "wordBB": word_bb, "charBB": char_bb})
    return str(tmp_path / "gt.mat")


def test_synthtext_word_crops_and_curves(tmp_path, write_image, read_records):
    stats = synthtext.convert(_fixture(tmp_path, write_image), str(tmp_path / "o.tfrecord"),
                              points_per_curve=8, progress_every=0)
    records = read_records(str(tmp_path / "o.tfrecord"))
    assert [r["transcript"] for r in records] == ["Hello", "at", "I"]
    assert [r["filename"] for r in records] == ["8/ballet_1.jpg#0", "8/ballet_1.jpg#1",
                                                "8/ballet_2.jpg#0"]
    assert stats.skipped == {"malformed entry (word/box count mismatch)": 1}
    hello = records[0]
    assert (hello["width"], hello["height"]) == (40, 16)  # x 10..50, y 10..26 (bend 4)
    points = np.array(hello["keypoints"]).reshape(2, 8, 2)
    top, bottom = points
    assert np.all(np.diff(top[:, 0]) > 0) and np.all(np.diff(bottom[:, 0]) > 0)
    np.testing.assert_allclose(top[[0, -1], 0], [0, 40], atol=0.5)
    assert np.all(bottom[:, 1] > top[:, 1])
    assert top[0, 1] > top[4, 1] - 1e-6  # the parabola bends the top curve
    at = np.array(records[1]["keypoints"]).reshape(2, 8, 2)
    np.testing.assert_allclose(at[0, :, 1], 0, atol=1e-6)
    np.testing.assert_allclose(at[1, :, 1], 12, atol=1e-6)


def test_synthtext_margin_enlarges_crop(tmp_path, write_image, read_records):
    synthtext.convert(_fixture(tmp_path, write_image), str(tmp_path / "o.tfrecord"),
                      margin_ratio=0.1, progress_every=0)
    records = read_records(str(tmp_path / "o.tfrecord"))
    assert records[0]["width"] > 40 and len(records[0]["keypoints"]) == 4 * 64


def test_synthtext_missing_field_raises(tmp_path):
    scipy.io.savemat(str(tmp_path / "gt.mat"), {"imnames": np.zeros(1)})
    with pytest.raises(ValueError, match="no 'wordBB' field"):
        list(synthtext.read_samples(str(tmp_path / "gt.mat")))


def test_synthtext_too_few_curve_points_raises(tmp_path):
    with pytest.raises(ValueError, match="points_per_curve"):
        synthtext.convert(str(tmp_path / "gt.mat"), str(tmp_path / "o"), points_per_curve=1)


def test_fit_curve_single_point_repeats():
    out = synthtext.fit_curve(np.array([[3.0, 4.0], [3.0, 4.0]]), 3)
    np.testing.assert_allclose(out, [[3, 4]] * 3)
