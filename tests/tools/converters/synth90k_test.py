"""Tests for aster/tools/converters/synth90k.py."""

import pytest

from aster.tools.converters import synth90k


def test_synth90k_label_from_file_name(tmp_path, write_image, read_records):
    write_image(tmp_path / "2911" / "6" / "77_heretical_35885.jpg", image_format="JPEG")
    write_image(tmp_path / "1" / "1" / "3_Ice_Cream_9.jpg", image_format="JPEG")
    (tmp_path / "1" / "1" / "4_broken_10.jpg").write_bytes(b"")
    (tmp_path / "annotation_train.txt").write_text(
        "./2911/6/77_heretical_35885.jpg 35885\n./1/1/3_Ice_Cream_9.jpg 9\n"
        "./1/1/nolabel.jpg 5\n./1/1/4_broken_10.jpg 10\n")
    stats = synth90k.convert([str(tmp_path / "annotation_*.txt")],
                             str(tmp_path / "o.tfrecord"), progress_every=0)
    records = read_records(str(tmp_path / "o.tfrecord"))
    assert [r["transcript"] for r in records] == ["heretical", "Ice_Cream"]
    assert records[0]["filename"] == "2911/6/77_heretical_35885.jpg"
    assert records[0]["format"] == "jpeg"
    assert stats.skipped == {"malformed entry (no label in file name)": 1,
                             "unreadable image": 1}


def test_synth90k_unmatched_pattern_raises(tmp_path):
    with pytest.raises(ValueError, match="matches no file"):
        synth90k.convert([str(tmp_path / "none*.txt")], str(tmp_path / "o.tfrecord"))
