import math

import numpy as np
import pytest

from aster.core import loss
from aster.tf_setup import tf

LOG4 = math.log(4.0)


def _seq_loss(logits, labels, lengths, **kwargs):
    with tf.Graph().as_default():
        value = loss.SequenceCrossEntropyLoss(**kwargs)(
            tf.constant(logits, tf.float32), tf.constant(labels, tf.int32),
            tf.constant(lengths, tf.int32))
        with tf.Session() as sess:
            return sess.run(value)


@pytest.mark.parametrize(
    "sequence_normalize,sample_normalize,weight,expected",
    [
        (False, True, 1.0, 2 * LOG4),  # (1 + 3) steps * log 4 / 2 samples
        (False, False, 1.0, 4 * LOG4),
        (True, False, 1.0, 2 * LOG4),  # each sequence averages to log 4
        (True, True, 1.0, LOG4),
        (False, True, 0.5, LOG4),
    ],
)
def test_sequence_loss_normalisation_uniform_logits(sequence_normalize, sample_normalize, weight,
                                                    expected):
    logits = np.zeros([2, 3, 4])
    value = _seq_loss(logits, [[1, 2, 3], [0, 1, 2]], [1, 3], sequence_normalize=sequence_normalize,
                      sample_normalize=sample_normalize, weight=weight)
    assert value == pytest.approx(expected, rel=1e-6)


def _np_ce(logits, label, smoothing=0.0):
    logp = logits - np.log(np.sum(np.exp(logits)))
    target = np.full_like(logits, smoothing / len(logits))
    target[label] += 1.0 - smoothing
    return -np.sum(target * logp)


def test_sequence_loss_masks_padding_steps_hand_computed():
    rng = np.random.RandomState(0)
    logits = rng.randn(2, 3, 5)
    labels = [[1, 4, 0], [2, 2, 3]]
    lengths = [2, 1]
    expected = (_np_ce(logits[0, 0], 1) + _np_ce(logits[0, 1], 4) + _np_ce(logits[1, 0], 2)) / 2
    assert _seq_loss(logits, labels, lengths) == pytest.approx(expected, rel=1e-5)
    logits[0, 2] += 100.0  # past the length: no effect
    logits[1, 1:] -= 50.0
    assert _seq_loss(logits, labels, lengths) == pytest.approx(expected, rel=1e-5)


def test_sequence_loss_sequence_normalize_divides_each_row_by_its_length():
    rng = np.random.RandomState(1)
    logits = rng.randn(2, 3, 5)
    labels = [[1, 4, 0], [2, 2, 3]]
    expected = (_np_ce(logits[0, 0], 1) + _np_ce(logits[0, 1], 4)) / 2 + (
        _np_ce(logits[1, 0], 2) + _np_ce(logits[1, 1], 2) + _np_ce(logits[1, 2], 3)) / 3
    value = _seq_loss(logits, labels, [2, 3], sequence_normalize=True, sample_normalize=False)
    assert value == pytest.approx(expected, rel=1e-5)


def test_sequence_loss_label_smoothing_hand_computed():
    rng = np.random.RandomState(2)
    logits = rng.randn(1, 2, 4)
    expected = _np_ce(logits[0, 0], 3, 0.1) + _np_ce(logits[0, 1], 0, 0.1)
    value = _seq_loss(logits, [[3, 0]], [2], label_smoothing=0.1)
    assert value == pytest.approx(expected, rel=1e-5)


def test_sequence_loss_zero_length_gives_zero():
    assert _seq_loss(np.ones([1, 2, 3]), [[0, 0]], [0], sequence_normalize=True) == 0.0


@pytest.mark.parametrize("kwargs,match", [(dict(label_smoothing=1.0), "label_smoothing"),
                                          (dict(label_smoothing=-0.1), "label_smoothing"),
                                          (dict(weight=-1.0), "weight")])
def test_sequence_loss_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        loss.SequenceCrossEntropyLoss(**kwargs)


def test_l2_regression_loss_hand_computed_with_sample_weights():
    pred = np.array([[[0.0, 0.0], [1.0, 1.0]], [[0.5, 0.5], [0.5, 0.5]], [[9.0, 9.0], [9.0, 9.0]]])
    target = np.array([[[1.0, 0.0], [1.0, 3.0]], [[0.5, 0.0], [0.5, 0.5]], [[0.0, 0.0], [0.0, 0.0]]])
    with tf.Graph().as_default():
        fn = loss.L2RegressionLoss(weight=2.0)
        weighted = fn(tf.constant(pred), tf.constant(target), tf.constant([1.0, 1.0, 0.0]))
        plain = loss.L2RegressionLoss()(tf.constant(pred[:2]), tf.constant(target[:2]))
        with tf.Session() as sess:
            weighted_np, plain_np = sess.run([weighted, plain])
    # sample 0: 1 + 4 = 5, sample 1: 0.25; mean over the 2 counted samples = 2.625
    assert weighted_np == pytest.approx(2 * 2.625)
    assert plain_np == pytest.approx(2.625)


def test_l2_regression_loss_no_counted_samples_is_zero():
    with tf.Graph().as_default():
        value = loss.L2RegressionLoss()(tf.ones([2, 4]), tf.zeros([2, 4]), tf.zeros([2]))
        with tf.Session() as sess:
            assert sess.run(value) == 0.0


def test_l2_regression_loss_rejects_negative_weight():
    with pytest.raises(ValueError, match="weight"):
        loss.L2RegressionLoss(weight=-1.0)
