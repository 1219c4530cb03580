import input_fixtures as fx

from aster.readers import tfrecord_reader
from aster.tf_setup import tf


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
