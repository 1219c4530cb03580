import numpy as np
import pytest

from aster.tf_setup import tf
from aster.utils import learning_schedules


def _values(schedule_fn, steps):
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int64, [])
        rate = schedule_fn(step)
        with tf.Session() as sess:
            return [float(sess.run(rate, {step: s})) for s in steps]


def test_manual_stepping_switches_when_step_reaches_boundary():
    values = _values(lambda s: learning_schedules.manual_stepping(s, [2, 5], [1.0, 0.1, 0.01]),
                     [0, 1, 2, 4, 5, 100])
    np.testing.assert_allclose(values, [1.0, 1.0, 0.1, 0.1, 0.01, 0.01], rtol=1e-6)


def test_manual_stepping_without_boundaries_is_constant():
    assert _values(lambda s: learning_schedules.manual_stepping(s, [], [0.5]), [0, 9]) == [0.5, 0.5]


@pytest.mark.parametrize("boundaries,rates,match", [
    ([3, 2], [1.0, 0.5, 0.1], "strictly increasing"),
    ([2, 2], [1.0, 0.5, 0.1], "strictly increasing"),
    ([-1], [1.0, 0.5], "non-negative ints"),
    ([1.5], [1.0, 0.5], "non-negative ints"),
    ([1], [1.0, "x"], "rates must be numbers"),
    ([1], [1.0], "one more rate"),
])
def test_manual_stepping_rejects_bad_schedules(boundaries, rates, match):
    with tf.Graph().as_default(), pytest.raises(ValueError, match=match):
        learning_schedules.manual_stepping(tf.constant(0, tf.int64), boundaries, rates)


def test_exponential_decay_staircase_and_smooth():
    stair = _values(lambda s: learning_schedules.exponential_decay(s, 1.0, 10, 0.5), [0, 9, 10, 25])
    np.testing.assert_allclose(stair, [1.0, 1.0, 0.5, 0.25], rtol=1e-6)
    smooth = _values(lambda s: learning_schedules.exponential_decay(s, 1.0, 10, 0.5, False), [5])
    np.testing.assert_allclose(smooth, [0.5 ** 0.5], rtol=1e-6)


def test_exponential_decay_rejects_non_positive_steps():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="decay_steps"):
        learning_schedules.exponential_decay(tf.constant(0, tf.int64), 1.0, 0, 0.5)


def test_cosine_decay_with_warmup_shape():
    fn = lambda s: learning_schedules.cosine_decay_with_warmup(
        s, 1.0, 110, warmup_learning_rate=0.1, warmup_steps=10, hold_base_rate_steps=0,
        min_learning_rate=0.01)
    values = _values(fn, [0, 5, 10, 60, 110, 500])
    np.testing.assert_allclose(values, [0.1, 0.55, 1.0, 0.505, 0.01, 0.01], rtol=1e-5)


def test_cosine_decay_holds_base_rate():
    fn = lambda s: learning_schedules.cosine_decay_with_warmup(s, 2.0, 100, hold_base_rate_steps=20)
    np.testing.assert_allclose(_values(fn, [0, 19, 20]), [2.0, 2.0, 2.0], rtol=1e-6)


@pytest.mark.parametrize("kwargs,match", [
    ({"total_steps": 5, "warmup_steps": 10}, "total_steps"),
    ({"total_steps": 100, "warmup_steps": 10, "warmup_learning_rate": 2.0}, "warmup_learning_rate"),
])
def test_cosine_decay_rejects_bad_values(kwargs, match):
    with tf.Graph().as_default(), pytest.raises(ValueError, match=match):
        learning_schedules.cosine_decay_with_warmup(tf.constant(0, tf.int64), 1.0, **kwargs)
