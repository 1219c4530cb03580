import sys

import input_fixtures as fx
import pytest

from aster.readers import lmdb_dataset, lmdb_reader
from aster.tf_setup import tf


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


def test_missing_lmdb_package_gives_install_hint(tmp_path, monkeypatch):
    path = fx.write_lmdb(tmp_path / "db", [(b"x", "a")])
    monkeypatch.setitem(sys.modules, "lmdb", None)
    with pytest.raises(ImportError, match="pip install lmdb"):
        lmdb_reader.LmdbSamples(path)


def test_lmdb_records_are_examples_the_decoder_reads(tmp_path):
    from aster.data_decoders.tf_example_decoder import TfExampleDecoder

    path = fx.write_lmdb(tmp_path / "db", [(fx.image_bytes(width=9, height=5), "wörd")])
    with tf.Graph().as_default():
        dataset = lmdb_dataset.lmdb_records([path], num_epochs=1)
        decoded = TfExampleDecoder().decode(tf.data.make_one_shot_iterator(dataset).get_next())
        with tf.Session() as sess:
            out = sess.run(decoded)
    assert out["groundtruth_text"].decode() == "wörd" and out["image"].shape == (5, 9, 3)
    assert out["filename"] == b"db:1"


