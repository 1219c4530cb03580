import numpy as np
import pytest

from aster.core import label_map
from aster.predictors import ctc_predictor
from aster.tf_setup import slim, tf

WORDS = ["abc", "hello", "tf", "x9z"]


def _predictor(beam_width=1, fc_hyperparams=None):
    lm = label_map.LabelMap(list("0123456789abcdefghijklmnopqrstuvwxyz"))
    return ctc_predictor.CtcPredictor("Ctc", lm, fc_hyperparams=fc_hyperparams,
                                      beam_width=beam_width)


@pytest.mark.parametrize("beam_width", [1, 4])
def test_ctc_predictor_trains_and_decodes(beam_width):
    with tf.Graph().as_default():
        tf.set_random_seed(2)
        rng = np.random.RandomState(0)
        features = tf.constant(rng.randn(len(WORDS), 12, 16), tf.float32)
        pred = _predictor(beam_width)
        loss_op = pred.loss(features, tf.constant(WORDS))
        train_op = tf.train.AdamOptimizer(0.05).minimize(loss_op)
        out = pred.postprocess(pred.predict(features))
        names = [v.op.name for v in tf.trainable_variables()]
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
            losses = [sess.run([loss_op, train_op])[0] for _ in range(150)]
            text, scores = sess.run([out["text"], out["scores"]])
    assert sorted(names) == ["Ctc/logits/biases", "Ctc/logits/weights"]
    assert pred.num_classes == 37
    assert losses[-1] < 0.05 * losses[0]
    assert [t.decode() for t in text] == WORDS
    assert np.all(scores <= 1e-5) and np.all(scores > -1.0)


def test_ctc_output_layer_is_linear_under_relu_hyperparams():
    with tf.Graph().as_default():
        with slim.arg_scope([slim.fully_connected], activation_fn=tf.nn.relu) as scope:
            pass
        pred = _predictor(fc_hyperparams=scope)
        features = tf.constant(np.random.RandomState(0).randn(2, 5, 4), tf.float32)
        logits, lengths = pred._logits(features)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            logits_np, lengths_np = sess.run([logits, lengths])
    assert logits_np.shape == (5, 2, 37) and np.any(logits_np < 0)
    assert lengths_np.tolist() == [5, 5]


def test_ctc_loss_ignores_labels_longer_than_frames():
    with tf.Graph().as_default():
        pred = _predictor()
        features = tf.zeros([2, 3, 4])
        loss_op = pred.loss(features, tf.constant(["abcdefgh", "ab"]))
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
            assert np.isfinite(sess.run(loss_op))


def test_ctc_loss_zeroes_a_label_whose_repeats_do_not_fit_the_frames(capfd):
    """"aaa" has 3 labels on 4 frames, but its repeats need 2 blanks (5 frames): no alignment.
    Its loss and gradient are 0, the kernel is not asked (no "No valid path found" on stderr);
    the other sample's loss is the same as alone. "aab" needs exactly the 4 frames: kept."""
    with tf.Graph().as_default():
        pred = _predictor()
        features = tf.constant(np.random.RandomState(1).randn(2, 4, 4), tf.float32)
        both = pred.loss(features, tf.constant(["aaa", "ab"]))
        alone = pred.loss(features[1:], tf.constant(["ab"]))
        tight = pred.loss(features[:1], tf.constant(["aab"]))
        grads = tf.gradients(both, tf.trainable_variables())
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
            both_v, alone_v, tight_v, grads_v = sess.run([both, alone, tight, grads])
    assert np.isfinite(both_v) and both_v == pytest.approx(alone_v / 2, rel=1e-5)
    assert all(np.isfinite(g).all() for g in grads_v)
    assert np.isfinite(tight_v) and tight_v > 0
    assert "No valid path" not in capfd.readouterr().err


@pytest.mark.parametrize("kwargs,match", [(dict(beam_width=0), "beam_width"),
                                          (dict(loss_weight=-1.0), "loss_weight")])
def test_constructor_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ctc_predictor.CtcPredictor("Ctc", label_map.LabelMap(["a"]), **kwargs)
