import input_fixtures as fx
import pytest

from aster.readers import tfrecord_reader
from aster.tf_setup import tf


def _touch(directory, *names):
    for name in names:
        (directory / name).write_bytes(b"")
    return [str(directory / n) for n in names]


def test_expand_paths_glob_comma_list_and_shards(tmp_path):
    shards = _touch(tmp_path, "a-00000-of-00002", "a-00001-of-00002", "b.tfrecord", "c.txt")
    value = f"{tmp_path}/a-?????-of-00002, {tmp_path}/b.tfrecord,{tmp_path}/a-*"
    assert tfrecord_reader.expand_paths(value) == sorted(shards[:3])


def test_expand_paths_skips_directories(tmp_path):
    (tmp_path / "dir.tfrecord").mkdir()
    files = _touch(tmp_path, "x.tfrecord")
    assert tfrecord_reader.expand_paths(f"{tmp_path}/*.tfrecord") == files


def test_expand_paths_pattern_matching_nothing_names_field_and_pattern(tmp_path):
    _touch(tmp_path, "a.tfrecord")
    with pytest.raises(ValueError, match=r"reader\[1\]\.input_path: pattern '.*/nope\*' matches"):
        tfrecord_reader.expand_paths(
            f"{tmp_path}/a.tfrecord,{tmp_path}/nope*", "reader[1].input_path"
        )


def test_expand_paths_empty_raises():
    with pytest.raises(ValueError, match="input_path is empty"):
        tfrecord_reader.expand_paths(" , ")


def test_interleaved_records_reads_every_record_once_per_epoch(tmp_path):
    files = [
        fx.write_records(tmp_path / f"s{i}.tfrecord", [f"{i}-{j}".encode() for j in range(3)])
        for i in range(3)
    ]
    with tf.Graph().as_default():
        dataset = tfrecord_reader.interleaved_records(
            files, num_readers=2, shuffle=True, num_epochs=2, seed=1
        )
        next_record = tf.data.make_one_shot_iterator(dataset).get_next()
        records = []
        with tf.Session() as sess:
            while True:
                try:
                    records.append(sess.run(next_record).decode())
                except tf.errors.OutOfRangeError:
                    break
    assert sorted(records) == sorted([f"{i}-{j}" for i in range(3) for j in range(3)] * 2)
