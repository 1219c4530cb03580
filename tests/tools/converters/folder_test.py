"""Tests for aster/tools/converters/folder.py."""

from aster.tools.converters import folder


def test_folder_converts_lines_and_skips_bad_ones(tmp_path, write_image, read_records):
    write_image(tmp_path / "imgs" / "a.png")
    write_image(tmp_path / "imgs" / "b.jpg", image_format="JPEG")
    (tmp_path / "imgs" / "c.png").write_bytes(b"corrupt")
    labels = tmp_path / "labels.txt"
    labels.write_text("imgs/a.png\thello world\nno tab here\nimgs/b.jpg\tcafé\n"
                      "imgs/c.png\tx\nimgs/missing.png\ty\n", encoding="utf-8")
    stats = folder.convert(str(labels), str(tmp_path / "o.tfrecord"), progress_every=0)
    records = read_records(str(tmp_path / "o.tfrecord"))
    assert [(r["filename"], r["transcript"]) for r in records] == [
        ("imgs/a.png", "hello world"), ("imgs/b.jpg", "café")]
    assert stats.skipped == {"malformed entry (expected path<TAB>text)": 1,
                             "unreadable image": 2}


def test_folder_image_dir_overrides_root(tmp_path, write_image, read_records):
    write_image(tmp_path / "root" / "a.png")
    labels = tmp_path / "l.txt"
    labels.write_text("a.png\tx\n")
    folder.convert(str(labels), str(tmp_path / "o.tfrecord"), image_dir=str(tmp_path / "root"),
                   num_shards=2, progress_every=0)
    assert len(read_records(str(tmp_path / "o-*-of-00002.tfrecord"))) == 1
