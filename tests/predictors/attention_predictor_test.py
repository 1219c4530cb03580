import numpy as np
import pytest

from aster.core import attention_decoder, label_map, loss
from aster.predictors import attention_predictor
from aster.tf_setup import tf

WORDS = ["abc", "hello", "tf", "x9z"]


def _predictor(reverse=False, beam_width=1, max_num_steps=7, name="Forward", offset=2):
    lm = label_map.LabelMap(list("0123456789abcdefghijklmnopqrstuvwxyz"), label_offset=offset)
    decoder = attention_decoder.AttentionDecoder(tf.nn.rnn_cell.LSTMCell(32), lm.num_classes, 16)
    return attention_predictor.AttentionPredictor(
        name, decoder, lm, loss.SequenceCrossEntropyLoss(), max_num_steps, beam_width=beam_width,
        reverse=reverse)


def _run(fetches):
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
        return sess.run(fetches)


@pytest.mark.parametrize("reverse", [False, True])
def test_encode_groundtruth_go_eos_truncation(reverse):
    with tf.Graph().as_default():
        pred = _predictor(reverse=reverse, max_num_steps=4)
        inputs, targets, lengths = pred.encode_groundtruth(tf.constant(["ab", "abcdef", ""]))
        inputs_np, targets_np, lengths_np = _run([inputs, targets, lengths])
    a, b, c = 12, 13, 14
    if reverse:  # reversed first, then truncated: the decoder reads the word's end first
        assert inputs_np.tolist() == [[0, b, a, 1], [0, 17, 16, 15], [0, 1, 1, 1]]
        assert targets_np.tolist() == [[b, a, 1, 1], [17, 16, 15, 1], [1, 1, 1, 1]]
    else:
        assert inputs_np.tolist() == [[0, a, b, 1], [0, a, b, c], [0, 1, 1, 1]]
        assert targets_np.tolist() == [[a, b, 1, 1], [a, b, c, 1], [1, 1, 1, 1]]
    assert lengths_np.tolist() == [3, 4, 1]


def _memorise(pred, steps=150):
    """Trains pred on fixed random features to read WORDS; returns (text, scores, loss values)."""
    rng = np.random.RandomState(0)
    features = tf.constant(rng.randn(len(WORDS), 5, 8), tf.float32)
    loss_op = pred.loss(features, tf.constant(WORDS))
    train_op = tf.train.AdamOptimizer(0.02).minimize(loss_op)
    out = pred.postprocess(pred.predict(features))
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
        losses = [sess.run([loss_op, train_op])[0] for _ in range(steps)]
        text, scores = sess.run([out["text"], out["scores"]])
    return [t.decode() for t in text], scores, losses


@pytest.mark.parametrize("reverse,beam_width", [(False, 1), (True, 3)])
def test_predictor_memorises_words_in_reading_order(reverse, beam_width):
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        pred = _predictor(reverse=reverse, beam_width=beam_width)
        text, scores, losses = _memorise(pred)
        names = {v.op.name.split("/")[0] for v in tf.trainable_variables()}
    assert names == {"Forward"}
    assert losses[-1] < 0.05 * losses[0]
    assert text == WORDS
    assert np.all(scores <= 0) and np.all(scores > -1.0)


def test_reverse_predictor_outputs_reading_order_of_reversed_labels():
    # A reversed predictor whose decoder emits "cba" + EOS must report "abc".
    with tf.Graph().as_default():
        pred = _predictor(reverse=True)
        labels = tf.constant([[14, 13, 12, 1, 1], [5, 1, 1, 1, 1]])
        lengths = pred.label_map.label_lengths(labels)
        reading = label_map.reverse_labels(labels, lengths)
        text = pred.postprocess({"labels": reading, "scores": tf.zeros([2])})["text"]
        assert [t.decode() for t in _run(text)] == ["abc", "3"]


@pytest.mark.parametrize("kwargs,match", [
    (dict(offset=0), "label_offset"), (dict(max_num_steps=1), "max_num_steps"),
    (dict(beam_width=0), "beam_width")])
def test_constructor_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        _predictor(**kwargs)


def test_constructor_rejects_class_mismatch_and_negative_length_penalty():
    lm = label_map.LabelMap(list("ab"), label_offset=2)
    dec = attention_decoder.AttentionDecoder(None, 5, 4)
    with pytest.raises(ValueError, match="classes"):
        attention_predictor.AttentionPredictor("F", dec, lm, None, 5)
    dec = attention_decoder.AttentionDecoder(None, 4, 4)
    with pytest.raises(ValueError, match="length_penalty"):
        attention_predictor.AttentionPredictor("F", dec, lm, None, 5, length_penalty=-1.0)
