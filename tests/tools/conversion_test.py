"""Tests for aster/tools/conversion.py (the machinery shared by every converter)."""

import io

import pytest
from conftest import encode_image
from PIL import Image

from aster.tools import conversion
from aster.tools.conversion import Sample, Skip


def _convert(samples, tmp_path, **kwargs):
    output = str(tmp_path / "out.tfrecord")
    return conversion.convert_samples(samples, output, progress_every=0, **kwargs), output


def test_whole_images_keep_png_and_jpeg_bytes(tmp_path, write_image, read_records):
    png = write_image(tmp_path / "a.png")
    jpg = write_image(tmp_path / "b.jpg", image_format="JPEG")
    stats, output = _convert([Sample("a", str(png)), Sample("b", str(jpg), filename="b")],
                             tmp_path)
    records = read_records(output)
    assert stats.written == 2 and stats.num_skipped == 0
    assert records[0]["image"] == png.read_bytes() and records[0]["format"] == "png"
    assert records[0]["filename"] == str(png)
    assert records[1]["image"] == jpg.read_bytes() and records[1]["format"] == "jpeg"


def test_other_formats_are_reencoded_as_png(tmp_path, write_image, read_records):
    bmp = write_image(tmp_path / "a.bmp", size=(9, 5), image_format="BMP")
    _, output = _convert([Sample("a", str(bmp))], tmp_path)
    record = read_records(output)[0]
    assert record["format"] == "png"
    assert Image.open(io.BytesIO(record["image"])).size == (9, 5)


def test_crop_box_is_clamped_and_keypoints_shifted(tmp_path, write_image, read_records):
    path = write_image(tmp_path / "a.png", size=(40, 20))
    samples = [Sample("w", str(path), box=(-5.5, 2.2, 10.4, 30), keypoints=(1, 3, 9, 3, 1, 19, 9, 19)),
               Sample("v", str(path), box=(30, 5, 38, 12), filename=conversion.crop_name("a", 1))]
    stats, output = _convert(samples, tmp_path, crop_format="jpeg")
    first, second = read_records(output)
    assert (first["width"], first["height"]) == (11, 18)  # x 0..11, y 2..20
    assert Image.open(io.BytesIO(first["image"])).size == (11, 18)
    assert first["format"] == "jpeg"
    assert first["keypoints"] == [1, 1, 9, 1, 1, 17, 9, 17]
    assert second["filename"] == "a#1" and (second["width"], second["height"]) == (8, 7)


def test_bad_entries_are_skipped_and_counted(tmp_path, write_image, read_records, capsys):
    good = write_image(tmp_path / "a.png")
    (tmp_path / "bad.png").write_bytes(b"not an image")
    samples = [Sample("ok", str(good)), Sample("x", str(tmp_path / "bad.png")),
               Sample("x", str(tmp_path / "missing.png")), Sample("  ", str(good)),
               Sample("x", str(good), box=(50, 50, 60, 60)), Skip("no tab", "labels:3"),
               Sample("ok2", image_bytes=encode_image())]
    stats, output = _convert(samples, tmp_path)
    assert [r["transcript"] for r in read_records(output)] == ["ok", "ok2"]
    assert stats.skipped == {"unreadable image": 2, "empty transcript": 1, "empty crop box": 1,
                             "malformed entry (no tab)": 1}
    assert "wrote 2 records" in capsys.readouterr().out


def test_crops_of_an_unreadable_image_are_each_skipped(tmp_path):
    (tmp_path / "bad.png").write_bytes(b"junk")
    samples = [Sample("a", str(tmp_path / "bad.png"), box=(0, 0, 2, 2))] * 3
    stats, _ = _convert(samples, tmp_path)
    assert stats.written == 0 and stats.skipped == {"unreadable image": 3}


def test_progress_lines_go_to_stderr(tmp_path, write_image, capsys):
    path = str(write_image(tmp_path / "a.png"))
    conversion.convert_samples([Sample("a", path)] * 5, str(tmp_path / "o.tfrecord"),
                               name="demo", total=5, progress_every=2)
    err = capsys.readouterr().err
    assert "[demo] 2/5 (40%)" in err and "[demo] 4/5 (80%)" in err


def test_limit_stops_after_that_many_records(tmp_path, write_image):
    path = str(write_image(tmp_path / "a.png"))
    stats, _ = _convert([Sample("a", path)] * 5, tmp_path, limit=2)
    assert stats.written == 2


def test_bad_crop_format_raises(tmp_path):
    with pytest.raises(ValueError, match="crop_format"):
        _convert([], tmp_path, crop_format="gif")


def test_clamp_box_rounds_outwards_and_orders_corners():
    assert conversion.clamp_box((10.6, 8.2, 2.5, 1.9), 100, 100) == (2, 1, 11, 9)
    assert conversion.clamp_box((-3, -3, 200, 5), 50, 40) == (0, 0, 50, 5)


def test_unquote_undoes_icdar_escapes():
    assert conversion.unquote(' "a \\"b\\" \\\\c" ') == 'a "b" \\c'
    assert conversion.unquote("plain") == "plain"


def test_read_text_lines_drops_bom_and_blank_lines(tmp_path):
    path = tmp_path / "l.txt"
    path.write_bytes("\ufeffa\tb\r\n\n  \nc\n".encode())
    assert list(conversion.read_text_lines(str(path))) == [(1, "a\tb"), (4, "c")]


def test_read_text_lines_missing_file_raises(tmp_path):
    with pytest.raises(ValueError, match="cannot open"):
        list(conversion.read_text_lines(str(tmp_path / "none.txt")))
