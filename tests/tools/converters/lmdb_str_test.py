"""Tests for aster/tools/converters/lmdb_str.py (fixture written with the lmdb package)."""

import pytest
from conftest import encode_image

from aster.tools.converters import lmdb_str

lmdb = pytest.importorskip("lmdb")


def _write_lmdb(path, entries):
    with lmdb.open(str(path), map_size=1 << 24) as env, env.begin(write=True) as txn:
        for index, (image, label) in enumerate(entries, 1):
            if image is not None:
                txn.put(b"image-%09d" % index, image)
            txn.put(b"label-%09d" % index, label.encode("utf-8"))
        txn.put(b"num-samples", str(len(entries)).encode())


def test_lmdb_entries_become_records(tmp_path, read_records):
    _write_lmdb(tmp_path / "IIIT5k_3000", [(encode_image(), "hello"), (b"junk", "bad"),
                                           (None, "missing"), (encode_image((7, 3)), "中文")])
    stats = lmdb_str.convert(str(tmp_path / "IIIT5k_3000"), str(tmp_path / "o.tfrecord"),
                             progress_every=0)
    records = read_records(str(tmp_path / "o.tfrecord"))
    assert [(r["filename"], r["transcript"]) for r in records] == [
        ("IIIT5k_3000/image-000000001", "hello"), ("IIIT5k_3000/image-000000004", "中文")]
    assert (records[1]["width"], records[1]["height"]) == (7, 3)
    assert stats.skipped == {"unreadable image": 2}


def test_lmdb_missing_database_raises(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        lmdb_str.convert(str(tmp_path / "none"), str(tmp_path / "o.tfrecord"))
