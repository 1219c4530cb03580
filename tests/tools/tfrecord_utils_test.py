"""Tests for aster/tools/tfrecord_utils.py."""

import os

import numpy as np
import pytest
from conftest import encode_image

from aster.core.standard_fields import TfExampleFields
from aster.tf_setup import tf
from aster.tools import tfrecord_utils


def test_make_example_all_fields_round_trip():
    image = encode_image((30, 10))
    example = tfrecord_utils.make_example(
        image, "Straße中文", filename="a/b.png", lexicon=["Straße", "中文", "x"],
        keypoints=[0, 0, 29, 0, 0, 9, 29, 9])
    fields = tfrecord_utils.example_to_dict(example)
    assert fields["image"] == image
    assert fields["format"] == "png"
    assert fields["transcript"] == "Straße中文"
    assert fields["filename"] == "a/b.png"
    assert fields["lexicon"] == ["Straße", "中文", "x"]
    assert example.features.feature[TfExampleFields.lexicon].bytes_list.value[0] == \
        "Straße\t中文\tx".encode()
    assert fields["keypoints"] == [0, 0, 29, 0, 0, 9, 29, 9]
    assert (fields["height"], fields["width"]) == (10, 30)


def test_make_example_optional_fields_absent_or_empty():
    example = tfrecord_utils.make_example(encode_image(), b"word", image_format="jpg")
    feature = example.features.feature
    assert TfExampleFields.keypoints not in feature
    assert feature[TfExampleFields.lexicon].bytes_list.value[0] == b""
    assert feature[TfExampleFields.image_format].bytes_list.value[0] == b"jpeg"


def test_make_example_given_size_is_not_read_from_image():
    example = tfrecord_utils.make_example(encode_image((12, 8)), "w", height=3, width=4)
    assert tfrecord_utils.example_to_dict(example)["height"] == 3


@pytest.mark.parametrize("kwargs, message", [
    ({"image_format": "gif"}, "image_format"),
    ({"keypoints": [1, 2, 3]}, "multiple of 4"),
    ({"lexicon": ["a\tb"]}, "tab"),
    ({"transcript": b"\xff\xfe"}, "UTF-8"),
    ({"transcript": 5}, "str or bytes"),
    ({"height": 0, "width": 4}, "positive"),
    ({"image_bytes": "not bytes"}, "non-empty bytes"),
    ({"image_bytes": b"garbage"}, "cannot read image"),
])
def test_make_example_bad_argument_raises(kwargs, message):
    args = {"image_bytes": encode_image(), "transcript": "w", **kwargs}
    with pytest.raises(ValueError, match=message):
        tfrecord_utils.make_example(**args)


def test_shard_paths_insert_suffix_before_extension():
    assert tfrecord_utils.shard_paths("d/train.tfrecord", 2) == [
        "d/train-00000-of-00002.tfrecord", "d/train-00001-of-00002.tfrecord"]
    assert tfrecord_utils.shard_paths("d/train", 2)[1] == "d/train-00001-of-00002"
    assert tfrecord_utils.shard_paths("d/x.tfrecord", 1) == ["d/x.tfrecord"]


def test_shard_paths_zero_shards_raises():
    with pytest.raises(ValueError, match="num_shards"):
        tfrecord_utils.shard_paths("x", 0)


def test_write_tfrecords_round_robin_over_shards(tmp_path, read_records):
    examples = [tfrecord_utils.make_example(encode_image(), f"w{i}") for i in range(7)]
    examples[3] = examples[3].SerializeToString()  # serialized records are accepted too
    paths = tfrecord_utils.write_tfrecords(examples, str(tmp_path / "o.tfrecord"), num_shards=3)
    assert [os.path.basename(p) for p in paths] == [
        f"o-0000{i}-of-00003.tfrecord" for i in range(3)]
    shards = [[r["transcript"] for r in read_records(p)] for p in paths]
    assert shards == [["w0", "w3", "w6"], ["w1", "w4"], ["w2", "w5"]]
    assert len(read_records(str(tmp_path / "o-*.tfrecord"))) == 7
    assert not list(tmp_path.glob("*.tmp"))


def test_write_tfrecords_failure_leaves_no_file(tmp_path):
    def examples():
        yield tfrecord_utils.make_example(encode_image(), "w")
        raise RuntimeError("source failed")

    with pytest.raises(RuntimeError):
        tfrecord_utils.write_tfrecords(examples(), str(tmp_path / "o.tfrecord"))
    assert not list(tmp_path.iterdir())


def test_written_records_parse_with_tensorflow(tmp_path):
    path = str(tmp_path / "o.tfrecord")
    tfrecord_utils.write_tfrecords(
        [tfrecord_utils.make_example(encode_image((5, 4)), "ab", keypoints=[1] * 8)], path)
    with tf.Graph().as_default():
        record = tf.data.TFRecordDataset([path]).make_one_shot_iterator().get_next()
        parsed = tf.io.parse_single_example(record, {
            TfExampleFields.transcript: tf.io.FixedLenFeature([], tf.string),
            TfExampleFields.keypoints: tf.io.VarLenFeature(tf.float32),
            TfExampleFields.image_encoded: tf.io.FixedLenFeature([], tf.string)})
        image = tf.image.decode_png(parsed[TfExampleFields.image_encoded], channels=3)
        with tf.Session() as sess:
            text, keypoints, pixels = sess.run(
                [parsed[TfExampleFields.transcript], parsed[TfExampleFields.keypoints].values,
                 image])
    assert text == b"ab"
    np.testing.assert_array_equal(keypoints, np.ones(8))
    assert pixels.shape == (4, 5, 3)


def test_iter_records_no_match_raises(tmp_path):
    with pytest.raises(ValueError, match="no TFRecord"):
        list(tfrecord_utils.iter_records(str(tmp_path / "none-*.tfrecord")))


def test_iter_records_truncated_file_raises(tmp_path):
    path = str(tmp_path / "o.tfrecord")
    tfrecord_utils.write_tfrecords([tfrecord_utils.make_example(encode_image(), "w")], path)
    data = open(path, "rb").read()
    open(path, "wb").write(data[:-10])
    with pytest.raises(ValueError, match="truncated"):
        list(tfrecord_utils.iter_records(path))
    open(path, "wb").write(data[:5])
    with pytest.raises(ValueError, match="truncated record header"):
        list(tfrecord_utils.iter_records(path))


def test_records_decode_with_project_decoder(tmp_path):
    decoder_module = pytest.importorskip("aster.data_decoders.tf_example_decoder")
    path = str(tmp_path / "o.tfrecord")
    tfrecord_utils.write_tfrecords([tfrecord_utils.make_example(
        encode_image((20, 10)), "Ünï中", lexicon=["a", "b"], keypoints=[0, 0, 20, 0, 0, 10, 20, 10])],
        path)
    with tf.Graph().as_default():
        record = tf.data.TFRecordDataset([path]).make_one_shot_iterator().get_next()
        decoded = decoder_module.TfExampleDecoder().decode(record)
        with tf.Session() as sess:
            out = sess.run(decoded)
    assert out["groundtruth_text"].decode("utf-8") == "Ünï中"
    assert out["lexicon"] == b"a\tb"
    np.testing.assert_allclose(out["groundtruth_keypoints"], [0, 0, 1, 0, 0, 1, 1, 1])
    assert out["image"].shape == (10, 20, 3)


def test_the_same_example_is_written_as_the_same_bytes_whatever_its_map_order(tmp_path):
    example = tfrecord_utils.make_example(encode_image(), "word", filename="a.png")
    reordered = tf.train.Example()
    for key in sorted(example.features.feature, reverse=True):
        reordered.features.feature[key].CopyFrom(example.features.feature[key])
    first = tfrecord_utils.write_tfrecords([example], str(tmp_path / "a.tfrecord"))[0]
    second = tfrecord_utils.write_tfrecords([reordered], str(tmp_path / "b.tfrecord"))[0]
    with open(first, "rb") as a, open(second, "rb") as b:
        assert a.read() == b.read()
