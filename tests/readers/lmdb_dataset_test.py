"""Tests for aster/readers/lmdb_dataset.py: records read by index, a permutation per epoch."""

import input_fixtures as fx
import pytest

from aster.core.standard_fields import TfExampleFields as T
from aster.readers import lmdb_dataset
from aster.tf_setup import tf


def _databases(tmp_path, sizes=(7, 6)):
    """LMDB databases db0, db1, ... whose labels name the database and index: "0-1", "0-2"..."""
    return [
        fx.write_lmdb(tmp_path / f"db{d}", [(b"img", f"{d}-{i}") for i in range(1, n + 1)])
        for d, n in enumerate(sizes)
    ]


def _read(dataset, limit=None):
    next_record = tf.data.make_one_shot_iterator(dataset).get_next()
    records = []
    with tf.Session() as sess:
        while limit is None or len(records) < limit:
            try:
                records.append(sess.run(next_record))
            except tf.errors.OutOfRangeError:
                break
    return records


def _labels(paths, **kwargs):
    with tf.Graph().as_default():
        records = _read(lmdb_dataset.lmdb_records(paths, **kwargs))
    return [r[T.transcript].decode() for r in records]


def test_unshuffled_records_come_in_database_and_index_order(tmp_path):
    paths = _databases(tmp_path, (2, 1))
    with tf.Graph().as_default():
        records = _read(lmdb_dataset.lmdb_records(paths, num_epochs=1))
    assert [r[T.transcript] for r in records] == [b"0-1", b"0-2", b"1-1"]
    assert [r[T.filename] for r in records] == [b"db0:1", b"db0:2", b"db1:1"]
    assert {r[T.image_encoded] for r in records} == {b"img"}


@pytest.mark.parametrize("num_readers", [1, 3])
def test_each_epoch_reads_every_record_once_in_a_new_order(tmp_path, monkeypatch, num_readers):
    monkeypatch.setattr(lmdb_dataset, "BLOCK_SIZE", 4)  # several blocks per epoch
    paths = _databases(tmp_path)
    labels = _labels(paths, num_readers=num_readers, shuffle=True, num_epochs=3, seed=5)
    epochs = [labels[i * 13:(i + 1) * 13] for i in range(3)]
    assert len(labels) == 39
    everything = sorted(f"{d}-{i}" for d, n in enumerate((7, 6)) for i in range(1, n + 1))
    for epoch in epochs:
        assert sorted(epoch) == everything
    assert len({tuple(e) for e in epochs}) == 3, epochs  # a different order each epoch
    assert epochs[0] != sorted(epochs[0])  # the databases are mixed, not read one by one


def test_the_same_seed_gives_the_same_orders_and_another_seed_others(tmp_path):
    paths = _databases(tmp_path)
    first = _labels(paths, shuffle=True, num_epochs=2, seed=5)
    assert _labels(paths, num_readers=4, shuffle=True, num_epochs=2, seed=5) == first
    assert _labels(paths, shuffle=True, num_epochs=2, seed=6) != first


def test_repeating_forever_keeps_reading(tmp_path):
    paths = _databases(tmp_path, (3,))
    with tf.Graph().as_default():
        records = _read(lmdb_dataset.lmdb_records(paths, shuffle=True, num_epochs=0), limit=10)
    assert len(records) == 10


def test_invalid_utf8_label_bytes_are_kept_as_they_are(tmp_path):
    import lmdb

    path = fx.write_lmdb(tmp_path / "db", [(b"img", "a")])
    with lmdb.open(path) as env, env.begin(write=True) as txn:
        txn.put(b"label-000000001", b"a\xffb")
    with tf.Graph().as_default():
        records = _read(lmdb_dataset.lmdb_records([path], num_epochs=1))
    assert records[0][T.transcript] == b"a\xffb"


def test_records_are_what_the_decoder_reads(tmp_path):
    from aster.data_decoders.tf_example_decoder import VALID, TfExampleDecoder

    path = fx.write_lmdb(tmp_path / "db", [(fx.image_bytes(width=9, height=5), "wörd")])
    with tf.Graph().as_default():
        dataset = lmdb_dataset.lmdb_records([path], num_epochs=1).map(TfExampleDecoder().decode)
        out = _read(dataset)[0]
    assert out["groundtruth_text"].decode() == "wörd" and out["image"].shape == (5, 9, 3)
    assert out["filename"] == b"db:1" and out[VALID]


def test_databases_without_records_raise_naming_them(tmp_path):
    path = fx.write_lmdb(tmp_path / "empty", [])
    with tf.Graph().as_default(), pytest.raises(ValueError, match=r"\['.*empty'\] hold no records"):
        lmdb_dataset.lmdb_records([path])


def test_a_missing_database_raises_naming_it(tmp_path):
    with tf.Graph().as_default(), pytest.raises(ValueError, match=r"LMDB path '.*nothing'"):
        lmdb_dataset.lmdb_records([str(tmp_path / "nothing")])


def test_a_block_lmdb_cannot_read_gives_empty_images_to_drop_and_count(tmp_path, monkeypatch,
                                                                       caplog):
    import lmdb

    paths = _databases(tmp_path, (2, 1))

    def corrupt(self, indices):
        if self.path.endswith("db0"):
            raise lmdb.CorruptedError("page checksum")
        return [b"img"] * len(indices), [b"ok"] * len(indices)

    monkeypatch.setattr(lmdb_dataset.lmdb_reader.LmdbSamples, "read", corrupt)
    with tf.Graph().as_default():
        records = _read(lmdb_dataset.lmdb_records(paths, num_epochs=1))
    assert [(r[T.image_encoded], r[T.transcript], r[T.filename]) for r in records] == [
        (b"", b"", b"db0:1"), (b"", b"", b"db0:2"), (b"img", b"ok", b"db1:1")]
    assert "records [1, 2] cannot be read (page checksum)" in caplog.text
