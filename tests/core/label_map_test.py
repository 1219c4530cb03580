import numpy as np
import pytest

from aster.core import charsets, label_map
from aster.tf_setup import tf


def _run(fetches):
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        return sess.run(fetches)


def _decode(strings):
    return [s.decode("utf-8") for s in strings]


@pytest.mark.parametrize("chars", [charsets.LOWERCASE, charsets.ALLCASES, charsets.ALLCASES_SYMBOLS])
def test_round_trip_built_in_sets(chars):
    words = [chars, chars[::-1][:7], "", chars[3]]
    with tf.Graph().as_default():
        lm = label_map.LabelMap(list(chars), label_offset=2)
        labels, lengths = lm.text_to_labels(tf.constant(words))
        text = lm.labels_to_text(labels)
        labels_np, lengths_np, text_np = _run([labels, lengths, text])
    assert lm.num_classes == 2 + len(chars)
    assert _decode(text_np) == words
    assert lengths_np.tolist() == [len(w) for w in words]
    assert labels_np[0].tolist() == list(range(2, 2 + len(chars)))


def test_round_trip_utf8_chinese():
    chars = list("中文字符识别abc")
    words = ["中文", "识别abc", "字"]
    with tf.Graph().as_default():
        lm = label_map.LabelMap(chars, label_offset=2)
        labels, lengths = lm.text_to_labels(tf.constant(words))
        text = lm.labels_to_text(labels)
        labels_np, lengths_np, text_np = _run([labels, lengths, text])
    assert _decode(text_np) == words
    assert lengths_np.tolist() == [2, 5, 1]  # characters, not bytes
    assert labels_np[0, :2].tolist() == [2, 3]


def test_unknown_characters_dropped():
    with tf.Graph().as_default():
        lm = label_map.LabelMap(list("abc"), label_offset=2)
        labels, lengths = lm.text_to_labels(tf.constant(["a-b", "??", "é c"]))
        text = lm.labels_to_text(labels)
        labels_np, lengths_np, text_np = _run([labels, lengths, text])
    assert lm.num_classes == 5 and lm.unk_label is None
    assert _decode(text_np) == ["ab", "", "c"]
    assert lengths_np.tolist() == [2, 0, 1]
    assert labels_np[0, :2].tolist() == [2, 3]


def test_unknown_characters_map_to_unknown_class():
    with tf.Graph().as_default():
        lm = label_map.LabelMap(list("abc"), label_offset=2, unknown_handling=label_map.UNKNOWN_CLASS)
        labels, lengths = lm.text_to_labels(tf.constant(["a-b", "中"]))
        text = lm.labels_to_text(labels)
        labels_np, lengths_np, text_np = _run([labels, lengths, text])
    assert lm.num_classes == 6 and lm.unk_label == 5
    assert labels_np[0].tolist() == [2, 5, 3]
    assert lengths_np.tolist() == [3, 1]
    assert _decode(text_np) == ["a\ufffdb", "\ufffd"]


def test_invalid_utf8_bytes_are_unknown_not_valid_labels():
    with tf.Graph().as_default():
        lm = label_map.LabelMap(list("ab"), label_offset=2)
        labels, lengths = lm.text_to_labels(tf.constant([b"a\xffb"]))
        labels_np, lengths_np = _run([labels, lengths])
    assert labels_np[0].tolist() == [2, 3] and lengths_np.tolist() == [2]


def test_labels_to_text_stops_at_first_reserved_label():
    with tf.Graph().as_default():
        lm = label_map.LabelMap(list("abc"), label_offset=2)
        text = lm.labels_to_text(tf.constant([[2, 3, 1, 4], [4, 4, 4, 4], [1, 2, 2, 2], [2, -1, 3, 3]]))
        lengths = lm.label_lengths(tf.constant([[2, 3, 1, 4]]))
        text_np, lengths_np = _run([text, lengths])
    assert _decode(text_np) == ["ab", "cccc", "", "a"]
    assert lengths_np.tolist() == [2]


def test_pad_value_fills_after_end():
    with tf.Graph().as_default():
        lm = label_map.LabelMap(list("ab"), label_offset=2)
        labels = lm.text_to_labels(tf.constant(["ab", "b"]), pad_value=1, return_lengths=False)
        labels_np = _run(labels)
    assert labels_np.tolist() == [[2, 3], [3, 1]]


def test_reverse_labels_keeps_padding():
    with tf.Graph().as_default():
        out = label_map.reverse_labels(tf.constant([[2, 3, 4, 0], [5, 6, 0, 0]]), tf.constant([3, 2]))
        out_np = _run(out)
    np.testing.assert_array_equal(out_np, [[4, 3, 2, 0], [6, 5, 0, 0]])


def test_works_in_two_graphs():
    lm = label_map.LabelMap(list("ab"), label_offset=2)
    for _ in range(2):
        with tf.Graph().as_default():
            labels = lm.text_to_labels(tf.constant(["ba"]), return_lengths=False)
            assert _run(labels).tolist() == [[3, 2]]


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(character_set=[]), "empty"),
        (dict(character_set=["a", "a"]), "distinct"),
        (dict(character_set=["ab"]), "distinct"),
        (dict(character_set=["a"], label_offset=-1), "label_offset"),
        (dict(character_set=["a"], unknown_handling="zero"), "unknown_handling"),
        (dict(character_set=["a"], unknown_handling=label_map.UNKNOWN_CLASS, unk_label=2), "unk_label"),
    ],
)
def test_constructor_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        label_map.LabelMap(**kwargs)


def test_unk_label_explicit_end_accepted():
    lm = label_map.LabelMap(["a", "b"], label_offset=2, unknown_handling=label_map.UNKNOWN_CLASS,
                            unk_label=4)
    assert lm.unk_label == 4 and lm.num_classes == 5
