"""Tests for aster/tools/converters/icdar.py, ic13.py and ic15.py."""

import pytest

from aster.tools.converters import ic13, ic15, icdar


def test_ic13_word_crop_gt(tmp_path, write_image, read_records):
    for i in (1, 2, 3):
        write_image(tmp_path / f"word_{i}.png")
    (tmp_path / "gt.txt").write_bytes(
        '\ufeffword_1.png, "Tiredness"\nword_2.png, "say \\"hi\\""\nbroken line\n'
        'word_3.png,"a, b"\n'.encode())
    stats = ic13.convert(str(tmp_path / "o.tfrecord"), gt_file=str(tmp_path / "gt.txt"),
                         progress_every=0)
    records = read_records(str(tmp_path / "o.tfrecord"))
    assert [(r["filename"], r["transcript"]) for r in records] == [
        ("word_1.png", "Tiredness"), ("word_2.png", 'say "hi"'), ("word_3.png", "a, b")]
    assert stats.skipped == {'malformed entry (expected file, "text")': 1}


def test_ic13_box_files_on_full_images(tmp_path, write_image, read_records):
    write_image(tmp_path / "img_1.jpg", size=(100, 50), image_format="JPEG")
    write_image(tmp_path / "img_2.png", size=(30, 30))
    (tmp_path / "gt_img_1.txt").write_text('38, 13, 92, 45, "Tiredness"\n10 5 30 20 "kills"\n')
    (tmp_path / "gt_img_2.txt").write_text('1 2 3\n0 0 10 10 "ok"\n')
    stats = ic13.convert(str(tmp_path / "o.tfrecord"), gt_dir=str(tmp_path), progress_every=0)
    records = read_records(str(tmp_path / "o.tfrecord"))
    assert [(r["filename"], r["transcript"], r["width"], r["height"]) for r in records] == [
        ("img_1.jpg#0", "Tiredness", 54, 32), ("img_1.jpg#1", "kills", 20, 15),
        ("img_2.png#1", "ok", 10, 10)]
    assert stats.skipped == {"malformed entry (expected coordinates then text)": 1}


def test_ic15_crops_and_quad_boxes(tmp_path, write_image, read_records):
    write_image(tmp_path / "crops" / "word_1.png")
    (tmp_path / "crops" / "test_groundtruth_all.txt").write_text('word_1.png, "Genaxis Theatre"\n')
    ic15.convert(str(tmp_path / "a.tfrecord"),
                 gt_file=str(tmp_path / "crops" / "test_groundtruth_all.txt"), progress_every=0)
    assert read_records(str(tmp_path / "a.tfrecord"))[0]["transcript"] == "Genaxis Theatre"
    write_image(tmp_path / "full" / "img_1.jpg", size=(80, 60), image_format="JPEG")
    (tmp_path / "full" / "gt_img_1.txt").write_text(
        "10,10,40,12,41,25,11,22,Genaxis Theatre\n1,1,5,1,5,5,1,5,###\n")
    stats = ic15.convert(str(tmp_path / "b.tfrecord"), gt_dir=str(tmp_path / "full"),
                         progress_every=0)
    record = read_records(str(tmp_path / "b.tfrecord"))[0]
    assert (record["transcript"], record["width"], record["height"]) == ("Genaxis Theatre", 31, 15)
    assert stats.skipped == {"malformed entry (don't-care ### box)": 1}


def test_parse_box_line_formats():
    assert icdar.parse_box_line('38, 43, 920, 215, "Tiredness"') == ((38, 43, 920, 215),
                                                                      "Tiredness")
    assert icdar.parse_box_line("1 2 3 4 word")[1] == "word"
    assert icdar.parse_box_line("word_1.png, \"x\"") is None


def test_icdar_needs_exactly_one_source_raises(tmp_path):
    with pytest.raises(ValueError, match="exactly one"):
        icdar.read_samples()
    with pytest.raises(ValueError, match="exactly one"):
        icdar.read_samples(gt_file="a", gt_dir="b")


def test_icdar_empty_gt_dir_raises(tmp_path):
    with pytest.raises(ValueError, match="no gt_"):
        list(icdar.read_samples(gt_dir=str(tmp_path)))
