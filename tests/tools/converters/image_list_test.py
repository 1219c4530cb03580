"""Tests for aster/tools/converters/image_list.py (svtp, cute80)."""

from aster.tools.converters import image_list


def test_image_list_labels_and_lexicons(tmp_path, write_image, read_records):
    for name in ("001.jpg", "002.png", "003.png"):
        write_image(tmp_path / "image" / name)
    (tmp_path / "imagelist.txt").write_text(
        "image/001.jpg TEAM\n"
        "image/002.png\tNEW YORK\tnew,york , city\n"
        "image/003.png OPEN open close\n"
        "image/004.png\n")
    stats = image_list.convert("cute80", str(tmp_path / "imagelist.txt"),
                               str(tmp_path / "o.tfrecord"), progress_every=0)
    records = read_records(str(tmp_path / "o.tfrecord"))
    assert [(r["transcript"], r["lexicon"]) for r in records] == [
        ("TEAM", []), ("NEW YORK", ["new", "york", "city"]), ("OPEN", ["open", "close"])]
    assert stats.skipped == {"malformed entry (expected path and label)": 1}


def test_image_list_no_lexicon_option(tmp_path, write_image, read_records):
    write_image(tmp_path / "a.png")
    (tmp_path / "l.txt").write_text("a.png WORD word,other\n")
    image_list.convert("svtp", str(tmp_path / "l.txt"), str(tmp_path / "o.tfrecord"),
                       use_lexicon=False, progress_every=0)
    assert read_records(str(tmp_path / "o.tfrecord"))[0]["lexicon"] == []
