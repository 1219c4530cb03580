import input_fixtures as fx
import numpy as np
import pytest

from aster.core import batcher
from aster.core.standard_fields import InputDataFields as F
from aster.data_decoders.tf_example_decoder import TfExampleDecoder
from aster.tf_setup import tf


def _records(*items):
    return [i if isinstance(i, bytes) else i.SerializeToString() for i in items]


def _read_all(dataset):
    values = []
    next_element = tf.data.make_one_shot_iterator(dataset).get_next()
    with tf.Session() as sess:
        while True:
            try:
                values.append(sess.run(next_element))
            except tf.errors.OutOfRangeError:
                return values


def _examples(records, **kwargs):
    dataset = tf.data.Dataset.from_tensor_slices(records)
    return batcher.example_dataset(dataset, TfExampleDecoder().decode, lambda d: d, **kwargs)


def _bad_and_good():
    good = fx.word_records("w", 3)
    return _records(
        good[0],
        b"\x00garbage, not an Example",
        fx.make_example(b"not an image", "x"),
        fx.make_example(fx.image_bytes()[:40], "truncated"),
        good[1],
        fx.make_example(fx.image_bytes(), ""),
        fx.make_example(fx.image_bytes(), "muchtoolong"),
        good[2],
    )


def test_example_dataset_drops_and_counts_each_reason():
    with tf.Graph().as_default():
        values = _read_all(_examples(_bad_and_good(), max_label_length=5))
    assert [v[F.groundtruth_text] for v in values] == [b"w0", b"w1", b"w2"]
    # Running counts (undecodable, empty_label, too_long) at each kept example.
    counts = [v[batcher._DROPS].tolist() for v in values]
    assert counts == [[0, 0, 0], [3, 0, 0], [3, 1, 1]]


def test_example_dataset_reports_drops_after_the_last_kept_example():
    records = _records(*fx.word_records("w", 2), b"garbage", fx.make_example(fx.image_bytes(), ""))
    with tf.Graph().as_default():
        examples = _examples(records, report_tail_drops=True)
        assert examples.element_spec[F.image].shape.as_list() == [None, None, 3]
        values = _read_all(examples)
    assert [v[F.groundtruth_text] for v in values] == [b"w0", b"w1"]
    assert values[-1][batcher._DROPS].tolist() == [1, 1, 0]


def test_example_dataset_truncates_long_labels_when_asked():
    records = _records(fx.make_example(fx.image_bytes(), "中文abc"))
    with tf.Graph().as_default():
        values = _read_all(_examples(records, max_label_length=3, truncate_long_labels=True))
    assert values[0][F.groundtruth_text].decode() == "中文a"
    assert values[0][batcher._DROPS].tolist() == [0, 0, 0]


def test_example_dataset_uint8_images_round_trip_through_float_images():
    records = _records(*fx.word_records("w", 2))
    with tf.Graph().as_default():
        examples = _examples(records, uint8_images=True)
        assert examples.element_spec[F.image].dtype == tf.uint8
        batch = tf.data.make_one_shot_iterator(batcher.batched(examples, 2, True)).get_next()
        image = batcher.float_images(batch)[F.image]
        assert image.dtype == tf.float32
        with tf.Session() as sess:
            assert sess.run(image).shape == (2, 8, 20, 3)


def test_example_dataset_consecutive_drops_fail_loudly():
    records = _records(*[fx.make_example(fx.image_bytes(), "") for _ in range(6)])
    with tf.Graph().as_default():
        dataset = _examples(records, stall_limit=4, name="train_input_reader[0]")
        with pytest.raises(
            tf.errors.InvalidArgumentError, match=r"reader\[0\]: 4 records in a row"
        ):
            _read_all(dataset)


def test_concat_batches_pads_keypoints_and_sums_drops():
    with tf.Graph().as_default():

        def batch(n, points, drops):
            return {
                F.image: tf.zeros([n, 4, 6, 3]),
                F.groundtruth_text: tf.constant(["t"] * n),
                F.filename: tf.constant(["f"] * n),
                F.lexicon: tf.constant([""] * n),
                F.groundtruth_keypoints: tf.ones([n, points]),
                batcher._DROPS: tf.constant([drops] * n, tf.int64),
            }

        out, drops = batcher.concat_batches([batch(2, 0, [1, 0, 0]), batch(3, 4, [0, 2, 1])])
        assert out[F.image].shape.as_list() == [5, 4, 6, 3]
        with tf.Session() as sess:
            out, drops = sess.run([out, drops])
    assert out[F.groundtruth_keypoints].shape == (5, 4)
    assert np.all(out[F.groundtruth_keypoints][:2] == 0) and np.all(
        out[F.groundtruth_keypoints][2:] == 1
    )
    assert drops.tolist() == [1, 2, 1]


def test_batch_queue_needs_one_batch_size_per_reader():
    with tf.Graph().as_default():
        dataset = _examples(_records(*fx.word_records("w", 2)))
        with pytest.raises(ValueError, match="got 1 batch sizes and 2 readers"):
            batcher.BatchQueue([dataset, dataset], [1])


def test_batch_queue_reports_the_images_of_one_step():
    with tf.Graph().as_default():
        dataset = _examples(_records(*fx.word_records("w", 2)))
        assert batcher.BatchQueue([dataset, dataset], [2, 3]).images_per_step == 5
        assert batcher.BatchQueue([dataset, dataset], [2, 3], num_clones=2).images_per_step == 10


def test_batched_rejects_non_positive_size():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="must be positive, got 0"):
        batcher.batched(_examples(_records(*fx.word_records("w", 1))), 0, True)


def test_example_dataset_reads_feature_dict_records_to_the_end():
    images = [fx.image_bytes(), b"not an image", fx.image_bytes(), fx.image_bytes()]
    records = {"image/encoded": images, "image/transcript": [b"w0", b"w1", b"w2", b""]}
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.from_tensor_slices(records)
        values = _read_all(batcher.example_dataset(
            dataset, TfExampleDecoder().decode, lambda d: d, report_tail_drops=True))
    assert [v[F.groundtruth_text] for v in values] == [b"w0", b"w2"]
    assert values[-1][batcher._DROPS].tolist() == [1, 1, 0]
