import input_fixtures as fx
import numpy as np
import pytest
from google.protobuf import text_format

from aster.builders import input_reader_builder
from aster.core.standard_fields import InputDataFields as F
from aster.protos import pipeline_pb2
from aster.tf_setup import tf

RESIZE = """
  data_augmentation_options { resize_image_random_method { target_height: 8 target_width: 16 } }
  data_augmentation_options {
    string_filtering { include_charset { text_string: "a b c f w 0 1 2 3 4 5 6 7 8 9 中 文 é" } }
  }
"""


def _pipeline(readers, batch_sizes, extra=""):
    text = "train_config { num_batch_queue_threads: 2 batch_queue_capacity: 8 "
    text += "prefetch_queue_capacity: 2 " + extra
    text += "".join(f"batch_size: {b} " for b in batch_sizes) + "}\n"
    for reader in readers:
        text += f"train_input_reader {{ queue_capacity: 16 num_readers: 2 {reader} }}\n"
    return text_format.Parse(text, pipeline_pb2.TrainEvalPipelineConfig())


def _tfrecord(pattern, more=""):
    return f'shuffle: false {more} tf_record_input_reader {{ input_path: "{pattern}" }}'


def _queue(config, num_clones=1):
    return input_reader_builder.build_batch_queue(
        config.train_input_reader, config.train_config, num_clones
    )


def test_two_readers_give_exactly_their_batch_sizes(tmp_path):
    fx.write_records(tmp_path / "a-0.tfrecord", fx.word_records("a", 7))
    fx.write_records(tmp_path / "a-1.tfrecord", fx.word_records("a", 7, start=7))
    fx.write_records(tmp_path / "b.tfrecord", fx.word_records("b", 9))
    config = _pipeline(
        [_tfrecord(f"{tmp_path}/a-*"), _tfrecord(f"{tmp_path}/b.tfrecord")], [3, 5], RESIZE
    )
    with tf.Graph().as_default():
        queue = _queue(config)
        batch = queue.dequeue()
        assert batch[F.image].shape.as_list() == [8, 8, 16, 3]
        assert batch[F.image].dtype == tf.float32
        assert set(batch) == {
            F.image,
            F.groundtruth_text,
            F.filename,
            F.lexicon,
            F.groundtruth_keypoints,
        }
        values = fx.run(batch, num_runs=4)
    for value in values:
        texts = [t.decode() for t in value[F.groundtruth_text]]
        assert [t[0] for t in texts] == ["a"] * 3 + ["b"] * 5, texts
        assert value[F.image].min() >= 0 and value[F.image].max() <= 255
        assert value[F.groundtruth_keypoints].shape == (8, 0)


def test_clones_split_each_reader_batch(tmp_path):
    fx.write_records(tmp_path / "a.tfrecord", fx.word_records("a", 5))
    fx.write_records(tmp_path / "b.tfrecord", fx.word_records("b", 5))
    config = _pipeline(
        [_tfrecord(f"{tmp_path}/a.tfrecord"), _tfrecord(f"{tmp_path}/b.tfrecord")], [2, 4], RESIZE
    )
    with tf.Graph().as_default():
        queue = _queue(config, num_clones=2)
        first, second = queue.dequeue(), queue.dequeue()
        ((a, b),) = fx.run([first[F.groundtruth_text], second[F.groundtruth_text]])
    assert [t[:1] for t in a] == [b"a", b"b", b"b"] and len(b) == 3


def test_batch_queue_images_per_step_is_train_config_batch_size(tmp_path):
    fx.write_records(tmp_path / "a.tfrecord", fx.word_records("a", 5))
    config = _pipeline([_tfrecord(f"{tmp_path}/a.tfrecord")] * 2, [2, 4], RESIZE)
    with tf.Graph().as_default():
        assert _queue(config).images_per_step == 6
        assert _queue(config, num_clones=2).images_per_step == 6


def test_drops_are_counted_and_batches_still_arrive(tmp_path):
    records = fx.word_records("w", 4) + [
        b"\x00\x01 not an Example",
        fx.make_example(b"not an image", "w9"),
        fx.make_example(fx.image_bytes(), "!!!"),  # empty after filtering
        fx.make_example(fx.image_bytes(), "w123456"),  # longer than 4
    ]
    fx.write_records(tmp_path / "d.tfrecord", records)
    config = _pipeline([_tfrecord(f"{tmp_path}/d.tfrecord", "max_label_length: 4")], [4], RESIZE)
    with tf.Graph().as_default():
        queue = _queue(config)
        batch = queue.dequeue()
        summaries = {s.op.name for s in tf.get_collection(tf.GraphKeys.SUMMARIES)}
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            texts = [sess.run(batch[F.groundtruth_text]) for _ in range(3)]
            counts = sess.run(queue.drop_counts)
    assert all(sorted(t) == [b"w0", b"w1", b"w2", b"w3"] for t in texts)
    # Three epochs passed when the third batch was made: at least two of each drop.
    assert counts["undecodable"] >= 4 and counts["undecodable"] % 2 == 0
    assert counts["empty_label"] >= 2 and counts["too_long"] >= 2
    assert {f"input/dropped_{r}" for r in counts} <= summaries


def test_eval_batches_one_epoch_exact_counts_and_short_last_batch(tmp_path):
    records = fx.word_records("w", 5) + [b"garbage", fx.make_example(fx.image_bytes(), "")]
    fx.write_records(tmp_path / "e.tfrecord", records)
    config = _pipeline([_tfrecord(f"{tmp_path}/e.tfrecord", "num_epochs: 3")], [1])
    eval_config = text_format.Parse(
        "data_preprocessing_steps { resize_image { target_height: 8 target_width: 16 } }",
        pipeline_pb2.TrainEvalPipelineConfig().eval_config,
    )
    with tf.Graph().as_default():
        batch, drops = input_reader_builder.build_eval_batches(
            config.train_input_reader[0], eval_config, 2
        )
        sizes, last = [], None
        with tf.Session() as sess:
            while True:
                try:
                    value, last = sess.run([batch, drops])
                    sizes.append(len(value[F.groundtruth_text]))
                    assert value[F.image].dtype == np.float32
                except tf.errors.OutOfRangeError:
                    break
    assert sizes == [2, 2, 1]
    assert last == {"undecodable": 1, "empty_label": 1, "too_long": 0}


def test_unicode_transcript_survives_decode_filter_batch(tmp_path):
    words = ["中文", "café", "é中a"]
    examples = [fx.make_example(fx.image_bytes(seed=i), w) for i, w in enumerate(words)]
    fx.write_records(tmp_path / "u.tfrecord", examples)
    config = _pipeline([_tfrecord(f"{tmp_path}/u.tfrecord")], [3], RESIZE)
    with tf.Graph().as_default():
        texts = fx.run(_queue(config).dequeue()[F.groundtruth_text])[0]
    assert sorted(t.decode("utf-8") for t in texts) == sorted(words)


def test_lmdb_input_reader(tmp_path):
    path = fx.write_lmdb(tmp_path / "db", [(fx.image_bytes(seed=i), f"a{i}") for i in range(4)])
    config = _pipeline([f'shuffle: false lmdb_input_reader {{ path: "{path}" }}'], [2], RESIZE)
    with tf.Graph().as_default():
        batch = _queue(config).dequeue()
        values = fx.run(batch[F.groundtruth_text], num_runs=2)
    assert sorted(t for v in values for t in v) == [b"a0", b"a1", b"a2", b"a3"]


def _write_both(tmp_path, samples):
    """(image bytes, label bytes) samples as a TFRecord file and an LMDB database: their readers."""
    examples = []
    for image, label in samples:
        example = fx.make_example(image, "")
        example.features.feature["image/transcript"].bytes_list.value[0] = label
        examples.append(example)
    fx.write_records(tmp_path / "r.tfrecord", examples)
    lmdb_path = fx.write_lmdb(tmp_path / "db", [(image, "") for image, _ in samples])
    import lmdb

    with lmdb.open(lmdb_path) as env, env.begin(write=True) as txn:
        for i, (_, label) in enumerate(samples, start=1):
            txn.put(b"label-%09d" % i, label)
    return {"tfrecord": f'tf_record_input_reader {{ input_path: "{tmp_path}/r.tfrecord" }}',
            "lmdb": f'lmdb_input_reader {{ path: "{lmdb_path}" }}'}


def _batches_and_drops(config, num_batches):
    with tf.Graph().as_default():
        queue = _queue(config)
        batch = queue.dequeue()
        summaries = {s.op.name for s in tf.get_collection(tf.GraphKeys.SUMMARIES)}
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            out = [(sess.run(batch[F.groundtruth_text]), sess.run(queue.drop_counts))
                   for _ in range(num_batches)]
    assert {f"input/dropped_{r}" for r in out[0][1]} <= summaries
    return [(sorted(texts), counts["undecodable"]) for texts, counts in out]


def test_invalid_utf8_labels_are_dropped_and_counted_alike_in_tfrecord_and_lmdb(tmp_path):
    bad = [(fx.image_bytes(), b"a\xff"), (fx.image_bytes(), b"\xc3(")]
    good = [(fx.image_bytes(seed=i), f"w{i}".encode()) for i in range(4)]
    readers = _write_both(tmp_path, bad + good)
    results = {}
    for name, reader in readers.items():
        config = _pipeline([f"shuffle: false {reader}"], [4], RESIZE)  # num_readers: 2
        results[name] = _batches_and_drops(config, 2)
    words = [b"w0", b"w1", b"w2", b"w3"]
    assert results["lmdb"] == results["tfrecord"] == [(words, 2), (words, 4)], results


def test_lmdb_reader_gets_num_readers_shuffle_epochs_and_seed(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(input_reader_builder.lmdb_dataset, "lmdb_records",
                        lambda *args, **kwargs: calls.append((args, kwargs)))
    path = fx.write_lmdb(tmp_path / "db", [(fx.image_bytes(), "a")])
    reader = f'shuffle_seed: 9 num_epochs: 2 lmdb_input_reader {{ path: "{path}" }}'
    config = _pipeline([reader], [1]).train_input_reader[0]
    input_reader_builder.build_records(config)
    assert calls == [(([path], 2), {"shuffle": True, "num_epochs": 2, "seed": 9})]


def _lmdb_order(config, num_batches, global_step=0):
    with tf.Graph().as_default():
        readers = input_reader_builder.resumed_readers(config.train_input_reader, global_step)
        batch = input_reader_builder.build_batch_queue(readers, config.train_config, 1).dequeue()
        values = fx.run(batch[F.groundtruth_text], num_runs=num_batches)
    return [t.decode() for v in values for t in v]


def test_lmdb_resumed_run_reads_a_new_permutation_not_the_first_records_again(tmp_path):
    words = [f"a{i}" for i in range(12)]
    path = fx.write_lmdb(tmp_path / "db", [(fx.image_bytes(seed=i), w) for i, w in
                                            enumerate(words)])
    reader = f'shuffle_seed: 7 lmdb_input_reader {{ path: "{path}" }}'
    config = _pipeline([reader], [4], RESIZE)
    fresh, resumed = _lmdb_order(config, 3), _lmdb_order(config, 3, global_step=3)
    assert sorted(fresh) == sorted(resumed) == sorted(words)  # every record once per epoch
    assert resumed != fresh and resumed[:4] != words[:4] and fresh != words, (fresh, resumed)
    assert _lmdb_order(config, 3, global_step=3) == resumed  # the same for the same step


@pytest.mark.parametrize("data,match", [
    (None, "No such file"),
    (b"\x00garbage" * 1000, "Invalid argument|MDB_INVALID|not an LMDB"),
])
def test_missing_or_corrupt_lmdb_names_the_field_and_the_database(tmp_path, data, match):
    (tmp_path / "db").mkdir()
    if data is not None:
        (tmp_path / "db" / "data.mdb").write_bytes(data)
    config = _pipeline([f'lmdb_input_reader {{ path: "{tmp_path}/db" }}'], [1], RESIZE)
    with tf.Graph().as_default(), pytest.raises(
        ValueError, match=rf"train_input_reader\[0\]\.lmdb_input_reader\.path: LMDB "
                          rf"'{tmp_path}/db' cannot be opened: .*({match})"):
        _queue(config)


def test_batch_size_count_mismatch_raises(tmp_path):
    fx.write_records(tmp_path / "a.tfrecord", fx.word_records("a", 1))
    config = _pipeline([_tfrecord(f"{tmp_path}/a.tfrecord")] * 2, [32])
    with (
        tf.Graph().as_default(),
        pytest.raises(
            ValueError,
            match="train_config.batch_size: has 1 entry but there are 2 train_input_readers",
        ),
    ):
        _queue(config)


@pytest.mark.parametrize(
    "sizes,clones,match",
    [
        ([6], 4, r"batch_size\[0\]: must be > 0 and a multiple of num_clones \(4\), got 6"),
        ([0], 1, r"batch_size\[0\]: must be > 0, got 0"),
        ([4], 0, "num_clones must be at least 1"),
    ],
)
def test_batch_size_not_divisible_raises(tmp_path, sizes, clones, match):
    fx.write_records(tmp_path / "a.tfrecord", fx.word_records("a", 1))
    config = _pipeline([_tfrecord(f"{tmp_path}/a.tfrecord")], sizes)
    with tf.Graph().as_default(), pytest.raises(ValueError, match=match):
        _queue(config, clones)


def test_no_readers_raises():
    with pytest.raises(ValueError, match="train_input_reader: there is none"):
        _queue(_pipeline([], [4]))


def test_pattern_matching_nothing_names_reader_and_pattern(tmp_path):
    fx.write_records(tmp_path / "a.tfrecord", fx.word_records("a", 1))
    config = _pipeline(
        [_tfrecord(f"{tmp_path}/a.tfrecord"), _tfrecord(f"{tmp_path}/missing_*.tfrecord")], [1, 1]
    )
    with (
        tf.Graph().as_default(),
        pytest.raises(
            ValueError,
            match=r"train_input_reader\[1\]\.tf_record_input_reader\.input_path: pattern "
            r"'.*missing_\*\.tfrecord' matches no file",
        ),
    ):
        _queue(config)


@pytest.mark.parametrize("reader", ["", "external_input_reader { }"])
def test_unset_or_external_reader_raises(reader):
    config = _pipeline([reader], [1])
    with (
        tf.Graph().as_default(),
        pytest.raises(ValueError, match=r"train_input_reader\[0\](: input_reader is not set"
                                       r"|\.external_input_reader(: has no reader| was removed))"),
    ):
        _queue(config)


def test_shuffle_seed_makes_the_order_repeatable(tmp_path):
    fx.write_records(tmp_path / "s-0.tfrecord", fx.word_records("a", 6))
    fx.write_records(tmp_path / "s-1.tfrecord", fx.word_records("b", 6))
    reader = (
        f'shuffle: true shuffle_seed: 7 tf_record_input_reader {{ input_path: "{tmp_path}/s-*" }}'
    )
    config = _pipeline([reader], [4], RESIZE)

    def texts():
        with tf.Graph().as_default():
            values = fx.run(_queue(config).dequeue()[F.groundtruth_text], num_runs=3)
        return [t for v in values for t in v]

    first = texts()
    assert first == texts() and first != sorted(first)


def _curriculum_config(tmp_path, curriculum, batch_size=2):
    records = fx.word_records("a", 6) + fx.word_records("bbbbbb", 6, start=100)  # 2 and 9
    fx.write_records(tmp_path / "c.tfrecord", records)
    reader = _tfrecord(f"{tmp_path}/c.tfrecord", f"length_curriculum {{ {curriculum} }}")
    return _pipeline([reader], [batch_size], RESIZE)


def _lengths(config, num_batches, num_clones=1, global_step=0):
    with tf.Graph().as_default():
        readers = input_reader_builder.resumed_readers(config.train_input_reader, global_step)
        queue = input_reader_builder.build_batch_queue(readers, config.train_config, num_clones)
        batch = queue.dequeue()
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            texts = [sess.run(batch[F.groundtruth_text]) for _ in range(num_batches)]
            counts = sess.run(queue.drop_counts)
    return [max(len(t) for t in batch_texts) for batch_texts in texts], counts


@pytest.mark.parametrize("num_clones", [1, 2])
def test_length_curriculum_keeps_short_words_for_its_steps_then_all(tmp_path, num_clones):
    config = _curriculum_config(tmp_path, "steps: 3 max_label_length: 3", batch_size=2)
    # A step dequeues one batch per clone; the records alternate 6 short and 6 long words.
    lengths, counts = _lengths(config, 3 * num_clones + 6, num_clones)
    assert lengths[: 3 * num_clones] == [2] * (3 * num_clones), lengths
    assert max(lengths[3 * num_clones:]) == 9, lengths  # "bbbbbb100" is back
    assert counts == {"undecodable": 0, "empty_label": 0, "too_long": 0}  # skips are not drops


def test_length_curriculum_counts_steps_from_the_run_start_step(tmp_path):
    config = _curriculum_config(tmp_path, "steps: 3 max_label_length: 3")
    lengths, _ = _lengths(config, 7, global_step=2)
    assert lengths[0] == 2 and max(lengths[1:]) == 9, lengths
    lengths, _ = _lengths(config, 7, global_step=5)  # past the curriculum: records as they come
    assert lengths[:3] == [2, 2, 2] and 9 in lengths[3:], lengths
    copy = input_reader_builder.resumed_readers(config.train_input_reader, 2)[0]
    assert copy.length_curriculum.steps == 1
    assert config.train_input_reader[0].length_curriculum.steps == 3  # the config keeps its value


def test_length_curriculum_with_no_short_word_fails_naming_the_field(tmp_path, monkeypatch):
    monkeypatch.setattr(input_reader_builder, "STALL_LIMIT", 20)
    config = _curriculum_config(tmp_path, "steps: 3 max_label_length: 1")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"train_input_reader\[0\].length_curriculum: 20 records in a row"):
        _lengths(config, 1)
