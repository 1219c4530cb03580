import os

import numpy as np
import pytest
from google.protobuf import text_format

from aster.builders import model_builder
from aster.core import attention_decoder, label_map, loss
from aster.core import standard_fields as fields
from aster.meta_architectures import multi_predictors_recognition_model as mprm
from aster.predictors import attention_predictor, ctc_predictor
from aster.protos import model_pb2
from aster.tf_setup import slim, tf
from aster.utils import config_util


class _FakeFeatureExtractor:
    def extract(self, images, scope=None):
        with tf.variable_scope(scope):
            return slim.fully_connected(tf.reduce_mean(images, axis=1), 8, scope="fc")


class _FakeStn:
    """Identity rectification; control points from a variable (so they get gradients)."""

    def __init__(self, points):
        self._points = np.asarray(points, np.float32)

    def batch_transform(self, images, scope=None):
        with tf.variable_scope(scope):
            var = tf.get_variable("points", initializer=self._points)
        cps = tf.tile(var[None], [tf.shape(images)[0], 1, 1])
        return {"rectified_images": images, "control_points": cps}


class _FixedPredictor:
    """Predicts fixed texts and scores (for the fusion test)."""

    def __init__(self, name, texts, scores):
        self.name, self._texts, self._scores = name, texts, scores

    def predict(self, feature_sequence):
        del feature_sequence
        return {"text": tf.constant(self._texts), "scores": tf.constant(self._scores)}

    def postprocess(self, predictions):
        return {"text": predictions["text"], "scores": predictions["scores"]}

    def loss(self, feature_sequence, text):
        return tf.reduce_mean(feature_sequence) * 0.0 + tf.cast(tf.size(text), tf.float32)


def _model(predictors, is_training=False, **kwargs):
    return mprm.MultiPredictorsRecognitionModel(_FakeFeatureExtractor(), predictors, is_training,
                                                input_height=4, input_width=6, **kwargs)


def test_preprocess_resizes_and_scales_to_minus_one_one():
    with tf.Graph().as_default():
        model = _model([_FixedPredictor("A", ["a"], [0.0])])
        images = tf.constant(np.stack([np.zeros([8, 12, 3]), np.full([8, 12, 3], 255.0)]))
        out = model.preprocess(images)
        with tf.Session() as sess:
            out_np = sess.run(out)
    assert out_np.shape == (2, 4, 6, 3)
    np.testing.assert_allclose(out_np[0], -1.0, atol=1e-6)
    np.testing.assert_allclose(out_np[1], 1.0, atol=1e-6)


def test_postprocess_fuses_per_sample_by_highest_score():
    with tf.Graph().as_default():
        model = _model([_FixedPredictor("Forward", ["abc", "xy", "q"], [-1.0, -3.0, -0.5]),
                        _FixedPredictor("Backward", ["abd", "xz", "r"], [-2.0, -0.1, -0.5])])
        preds = model.predict(model.preprocess(tf.zeros([3, 4, 6, 3])))
        out = model.postprocess(preds)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out = sess.run(out)
    assert [t.decode() for t in out[fields.PredictionFields.text]] == ["abc", "xz", "q"]
    np.testing.assert_allclose(out[fields.PredictionFields.scores], [-1.0, -0.1, -0.5])
    assert [t.decode() for t in out["Backward/text"]] == ["abd", "xz", "r"]
    assert out[fields.PredictionFields.control_points].shape == (3, 0, 2)
    assert out[fields.PredictionFields.rectified_images].shape == (3, 4, 6, 3)


class _CountingPredictor(_FixedPredictor):
    """A _FixedPredictor that records its predict() calls."""

    def __init__(self, *args):
        super().__init__(*args)
        self.predict_calls = 0

    def predict(self, feature_sequence):
        self.predict_calls += 1
        return super().predict(feature_sequence)


@pytest.mark.parametrize("is_training", [False, True])
def test_auxiliary_predictor_is_trained_but_never_decoded_or_fused(is_training):
    aux = _CountingPredictor("Ctc", ["zzz", "zzz"], [0.0, 0.0])  # would win every fusion
    with tf.Graph().as_default():
        model = _model([_FixedPredictor("Forward", ["ab", "c"], [-1.0, -2.0]), aux],
                       is_training=is_training, auxiliary_predictors=["Ctc"])
        assert [p.name for p in model.decoded_predictors] == ["Forward"]
        preds = model.predict(model.preprocess(tf.zeros([2, 4, 6, 3])))
        model.provide_groundtruth(tf.constant(["ab", "c"]))
        losses = model.loss(preds)
        out = model.postprocess(preds)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses_np, out = sess.run([losses, out])
    assert sorted(losses_np) == ["Ctc/loss", "Forward/loss"]
    assert aux.predict_calls == 0
    assert [t.decode() for t in out[fields.PredictionFields.text]] == ["ab", "c"]
    assert "Ctc/text" not in out and "Forward/text" in out


def test_keypoint_loss_hand_computed():
    init = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    with tf.Graph().as_default():
        model = _model([_FixedPredictor("A", ["a"], [0.0])], is_training=True,
                       spatial_transformer=_FakeStn(init), keypoint_supervision=True,
                       regression_loss=loss.L2RegressionLoss(weight=2.0))
        preds = model.predict(model.preprocess(tf.zeros([2, 4, 6, 3])))
        keypoints = np.zeros([2, 12], np.float32)
        # top (0, 0.1) -> (1, 0.1), bottom (0, 0.9) -> (1, 0.9): each point is 0.1 away
        keypoints[0, :8] = [0, 0.1, 1, 0.1, 0, 0.9, 1, 0.9]
        model.provide_groundtruth(tf.constant(["a", "b"]), tf.constant(keypoints))
        losses = model.loss(preds)
        grads = tf.gradients(losses["keypoint_loss"], tf.trainable_variables())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses_np = sess.run(losses)
    assert sorted(losses_np) == ["A/loss", "keypoint_loss"]
    # sample 0 only (sample 1 has no keypoints): 4 points * 0.1^2 = 0.04, weight 2
    assert losses_np["keypoint_loss"] == pytest.approx(0.08, rel=1e-5)
    assert any(g is not None for g in grads)


def test_training_predict_defers_decoding_to_postprocess():
    lm = label_map.LabelMap(list("ab"), label_offset=2)
    with tf.Graph().as_default():
        dec = attention_decoder.AttentionDecoder(tf.nn.rnn_cell.GRUCell(4), lm.num_classes, 3)
        pred = attention_predictor.AttentionPredictor("Forward", dec, lm,
                                                      loss.SequenceCrossEntropyLoss(), 3)
        model = _model([pred], is_training=True)
        preds = model.predict(model.preprocess(tf.zeros([2, 4, 6, 3])))
        assert preds[mprm.PREDICTOR_OUTPUTS] == {}
        model.provide_groundtruth(tf.constant(["ab", "b"]))
        losses = model.loss(preds)
        num_vars = len(tf.trainable_variables())
        out = model.postprocess(preds)
        assert len(tf.trainable_variables()) == num_vars
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
            losses_np, text = sess.run([losses, out[fields.PredictionFields.text]])
    assert np.isfinite(losses_np["Forward/loss"]) and text.shape == (2,)


def test_loss_without_groundtruth_raises():
    with tf.Graph().as_default():
        model = _model([_FixedPredictor("A", ["a"], [0.0])])
        preds = model.predict(model.preprocess(tf.zeros([1, 4, 6, 3])))
        with pytest.raises(ValueError, match="provide_groundtruth"):
            model.loss(preds)


def test_keypoint_supervision_without_keypoints_raises():
    with tf.Graph().as_default():
        model = _model([_FixedPredictor("A", ["a"], [0.0])], spatial_transformer=_FakeStn(
            np.zeros([4, 2])), keypoint_supervision=True, regression_loss=loss.L2RegressionLoss())
        preds = model.predict(model.preprocess(tf.zeros([1, 4, 6, 3])))
        model.provide_groundtruth(tf.constant(["a"]))
        with pytest.raises(ValueError, match="groundtruth_keypoints"):
            model.loss(preds)


@pytest.mark.parametrize("predictors,kwargs,match", [
    ([], {}, "at least one predictor"),
    (["A", "A"], {}, "distinct"),
    (["A"], dict(keypoint_supervision=True), "keypoint_supervision"),
    (["A", "B"], dict(auxiliary_predictors=["C"]), "not among the predictors"),
    (["A", "B"], dict(auxiliary_predictors=["A", "B"]), "every predictor is auxiliary"),
])
def test_constructor_rejects_bad_arguments(predictors, kwargs, match):
    with pytest.raises(ValueError, match=match):
        _model([_FixedPredictor(n, ["a"], [0.0]) for n in predictors], **kwargs)


def test_constructor_rejects_bad_input_size():
    with pytest.raises(ValueError, match="input size"):
        mprm.MultiPredictorsRecognitionModel(_FakeFeatureExtractor(),
                                             [_FixedPredictor("A", ["a"], [0.0])], False,
                                             input_height=0)


def test_predict_with_control_points_without_rectifier_raises():
    with tf.Graph().as_default():
        model = _model([_FixedPredictor("A", ["a"], [0.0])])
        with pytest.raises(ValueError, match="no spatial transformer"):
            model.predict(model.preprocess(tf.zeros([1, 4, 6, 3])),
                          control_points=np.zeros([1, 4, 2], np.float32))


def test_predict_with_target_control_points_reuses_every_variable_and_is_a_resize():
    """The tiny config's rectifier starts at the identity pattern, so an untrained model decodes
    the same text on both paths; the forced path creates no variable and sees a plain resize."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    config = config_util.load_pipeline_config(os.path.join(root, "configs", "tiny.config"))
    images = np.random.RandomState(0).uniform(0, 255, size=(3, 20, 50, 3)).astype(np.float32)
    with tf.Graph().as_default():
        model = model_builder.build(config.model, is_training=False)
        preprocessed = model.preprocess(tf.constant(images))
        normal = model.postprocess(model.predict(preprocessed))
        names = sorted(v.op.name for v in tf.global_variables())
        stn = model.spatial_transformer
        target = np.tile(stn.target_control_points[None], [3, 1, 1]).astype(np.float32)
        with tf.variable_scope(tf.get_variable_scope(), reuse=True):
            forced = model.postprocess(model.predict(preprocessed, control_points=target))
        assert sorted(v.op.name for v in tf.global_variables()) == names
        assert "SpatialTransformer/LocalizationNet/fc2/weights" in names
        resized = tf.compat.v2.image.resize(preprocessed, [32, 64], method="bilinear")
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
            normal, forced, resized = sess.run([normal, forced, resized])
    np.testing.assert_allclose(forced[fields.PredictionFields.control_points], target)
    np.testing.assert_allclose(forced[fields.PredictionFields.rectified_images], resized,
                               atol=1e-4)
    np.testing.assert_allclose(normal[fields.PredictionFields.control_points], target,
                               atol=1e-6)
    assert list(forced[fields.PredictionFields.text]) == list(
        normal[fields.PredictionFields.text])
    np.testing.assert_allclose(forced[fields.PredictionFields.scores],
                               normal[fields.PredictionFields.scores], atol=1e-5)


# A ResNet + BiLSTM encoder (16 units) and one CTC head, input 32 x 100 (25 frames).
_CTC_MODEL = """multi_predictors_recognition_model { input_height: 32 input_width: 100
  feature_extractor {
    convnet { resnet { net_depth: RESNET_30 block_depths: [8, 8, 16, 16, 16]
      conv_hyperparams { op: CONV batch_norm { decay: 0.9 } } } }
    bidirectional_rnn { fw_bw_rnn_cell { lstm_cell { num_units: 16 } } num_output_units: 16
      fc_hyperparams { op: FC } } }
  predictor { name: "Ctc" ctc_predictor { fc_hyperparams { op: FC activation: NONE }
    label_map { character_set { built_in_set: LOWERCASE } } } } }"""


def test_ctc_model_builds_and_trains():
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        model = model_builder.build(text_format.Parse(_CTC_MODEL, model_pb2.Model()),
                                    is_training=True)
        assert isinstance(model.predictors[0], ctc_predictor.CtcPredictor)
        rng = np.random.RandomState(0)
        images = tf.constant(rng.uniform(0, 255, [4, 32, 100, 3]), tf.float32)
        preds = model.predict(model.preprocess(images))
        assert preds[mprm.FEATURE_SEQUENCE].shape.as_list() == [4, 25, 16]
        model.provide_groundtruth(tf.constant(["ab", "cat", "dog", "xyz"]))
        loss = model.loss(preds)["Ctc/loss"]
        with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
            train_op = tf.train.AdamOptimizer(0.01).minimize(loss)
        text = model.postprocess(preds)[fields.PredictionFields.text]
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
            losses = [sess.run([loss, train_op])[0] for _ in range(20)]
            assert sess.run(text).shape == (4,)
    assert losses[-1] < 0.5 * losses[0]
