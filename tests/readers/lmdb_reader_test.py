import sys

import input_fixtures as fx
import pytest

from aster.readers import lmdb_reader


def test_lmdb_samples_in_order_one_based(tmp_path):
    image = fx.image_bytes()
    path = fx.write_lmdb(tmp_path / "db", [(image, "abc"), (image, "中文é"), (None, None)])
    samples = lmdb_reader.LmdbSamples(path)
    assert len(samples) == 3
    assert list(samples) == [(1, image, "abc"), (2, image, "中文é"), (3, b"", "")]
    assert len(list(samples)) == 3  # iterable again


def test_lmdb_samples_invalid_utf8_label_is_replaced(tmp_path):
    import lmdb

    path = fx.write_lmdb(tmp_path / "db", [(b"x", "a")])
    with lmdb.open(path) as env, env.begin(write=True) as txn:
        txn.put(b"label-000000001", b"a\xffb")
    assert list(lmdb_reader.LmdbSamples(path))[0][2] == "a\ufffdb"


def test_lmdb_samples_read_by_index_gives_raw_bytes(tmp_path):
    import lmdb

    image = fx.image_bytes()
    path = fx.write_lmdb(tmp_path / "db", [(image, "abc"), (None, None), (image, "x")])
    with lmdb.open(path) as env, env.begin(write=True) as txn:
        txn.put(b"label-000000003", b"a\xffb")
    images, labels = lmdb_reader.LmdbSamples(path).read([3, 2, 1])
    assert images == [image, b"", image] and labels == [b"a\xffb", b"", b"abc"]


def test_lmdb_samples_opens_a_database_once_per_process(tmp_path):
    path = fx.write_lmdb(tmp_path / "db", [(b"x", "a")])
    first = lmdb_reader.LmdbSamples(path)
    again = lmdb_reader.LmdbSamples(f"{path}/")  # lmdb refuses a second environment
    assert again.read([1]) == first.read([1]) == ([b"x"], [b"a"])
    assert list(again) == [(1, b"x", "a")]


def test_lmdb_samples_missing_path_raises(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        lmdb_reader.LmdbSamples(tmp_path / "nothing")


def test_lmdb_samples_without_num_samples_raises(tmp_path):
    import lmdb

    with lmdb.open(str(tmp_path / "db")) as env, env.begin(write=True) as txn:
        txn.put(b"image-000000001", b"x")
    with pytest.raises(ValueError, match="no 'num-samples' key"):
        lmdb_reader.LmdbSamples(tmp_path / "db")


def test_lmdb_samples_bad_num_samples_raises(tmp_path):
    import lmdb

    with lmdb.open(str(tmp_path / "db")) as env, env.begin(write=True) as txn:
        txn.put(b"num-samples", b"many")
    with pytest.raises(ValueError, match="not a count"):
        lmdb_reader.LmdbSamples(tmp_path / "db")


def test_lmdb_samples_negative_num_samples_raises(tmp_path):
    import lmdb

    with lmdb.open(str(tmp_path / "db")) as env, env.begin(write=True) as txn:
        txn.put(b"num-samples", b"-3")
    with pytest.raises(ValueError, match="'num-samples' is -3, below 0"):
        lmdb_reader.LmdbSamples(tmp_path / "db")


@pytest.mark.parametrize("data", [None, b"not an LMDB file" * 512])
def test_lmdb_samples_without_a_database_file_raises_naming_the_path(tmp_path, data):
    (tmp_path / "db").mkdir()
    if data is not None:
        (tmp_path / "db" / "data.mdb").write_bytes(data)
    with pytest.raises(ValueError, match=f"LMDB '{tmp_path}/db' cannot be opened"):
        lmdb_reader.LmdbSamples(tmp_path / "db")


def test_missing_lmdb_package_gives_install_hint(tmp_path, monkeypatch):
    path = fx.write_lmdb(tmp_path / "db", [(b"x", "a")])
    monkeypatch.setitem(sys.modules, "lmdb", None)
    with pytest.raises(ImportError, match="pip install lmdb"):
        lmdb_reader.LmdbSamples(path)
