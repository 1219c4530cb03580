import os

import pytest
from google.protobuf import text_format

from aster.builders import model_builder
from aster.core import standard_fields as fields
from aster.meta_architectures import multi_predictors_recognition_model as mprm
from aster.predictors import attention_predictor
from aster.protos import model_pb2
from aster.tf_setup import tf
from aster.utils import config_util, model_stats

CONFIGS = os.path.join(os.path.dirname(__file__), "..", "..", "configs")

TINY_ENCODER = """
feature_extractor {
  convnet { resnet { net_depth: RESNET_30 block_depths: [8, 8, 16, 16, 16]
                     conv_hyperparams { op: CONV batch_norm { decay: 0.9 } } } }
  bidirectional_rnn { fw_bw_rnn_cell { lstm_cell { num_units: 16 } } num_output_units: 16
                      fc_hyperparams { op: FC } }
}
"""


def _model_config(path):
    return config_util.load_pipeline_config(os.path.join(CONFIGS, path)).model


def _parse(text):
    return text_format.Parse(text, model_pb2.Model())


@pytest.mark.parametrize("is_training", [True, False])
def test_tiny_config_builds_with_expected_shapes(is_training):
    with tf.Graph().as_default():
        model = model_builder.build(_model_config("tiny.config"), is_training)
        assert isinstance(model, mprm.MultiPredictorsRecognitionModel)
        assert [p.name for p in model.predictors] == ["Forward", "Backward"]
        assert all(isinstance(p, attention_predictor.AttentionPredictor) and p.num_classes == 38
                   for p in model.predictors)
        preds = model.predict(model.preprocess(tf.zeros([3, 40, 90, 3])))
        model.provide_groundtruth(tf.constant(["abc", "de", "f"]))
        losses = model.loss(preds)
        out = model.postprocess(preds)
    assert preds[fields.PredictionFields.rectified_images].shape.as_list() == [3, 32, 64, 3]
    assert preds[fields.PredictionFields.control_points].shape.as_list() == [3, 20, 2]
    assert sorted(losses) == ["Backward/loss", "Forward/loss"]
    assert out[fields.PredictionFields.text].shape.as_list() == [3]
    assert out[fields.PredictionFields.scores].shape.as_list() == [3]


def test_paper_config_shapes_classes_and_parameter_count():
    with tf.Graph().as_default():
        model = model_builder.build(_model_config("aster_paper.config"), is_training=False)
        preprocessed = model.preprocess(tf.zeros([2, 64, 256, 3]))
        preds = model.predict(preprocessed)
        out = model.postprocess(preds)
        num_params = model_stats.parameter_count()
    assert preprocessed.shape.as_list() == [2, 64, 256, 3]
    assert preds[fields.PredictionFields.rectified_images].shape.as_list() == [2, 32, 100, 3]
    assert preds[fields.PredictionFields.control_points].shape.as_list() == [2, 20, 2]
    assert preds[mprm.FEATURE_SEQUENCE].shape.as_list() == [2, 25, 256]
    assert [p.num_classes for p in model.predictors] == [96, 96]
    assert [p._beam_width for p in model.predictors] == [5, 5]
    assert out[fields.PredictionFields.text].shape.as_list() == [2]
    print(f"aster_paper.config trainable parameters: {num_params:,}")
    assert 15e6 < num_params < 30e6


def test_auxiliary_ctc_head_adds_a_loss_but_is_not_decoded():
    config = _model_config("tiny.config")
    mprm_config = config.multi_predictors_recognition_model
    text_format.Parse('name: "Ctc" auxiliary: true ctc_predictor { label_map { character_set '
                      '{ built_in_set: LOWERCASE } } }', mprm_config.predictor.add())
    with tf.Graph().as_default():
        model = model_builder.build(config, is_training=False)
        decoded = [p.name for p in model.decoded_predictors]
        assert "Ctc" not in decoded and len(decoded) == len(mprm_config.predictor) - 1
        preds = model.predict(model.preprocess(tf.zeros([2, 32, 64, 3])))
        model.provide_groundtruth(tf.constant(["a", "b"]))
        assert "Ctc/loss" in model.loss(preds)
        assert "Ctc/text" not in model.postprocess(preds)


def test_keypoint_supervision_adds_keypoint_loss():
    config = _model_config("tiny.config")
    config.multi_predictors_recognition_model.keypoint_supervision = True
    with tf.Graph().as_default():
        model = model_builder.build(config, is_training=True)
        preds = model.predict(model.preprocess(tf.zeros([2, 32, 64, 3])))
        model.provide_groundtruth(tf.constant(["a", "b"]), tf.zeros([2, 8]))
        assert "keypoint_loss" in model.loss(preds)


def _mprm(body):
    return f"multi_predictors_recognition_model {{ {body} }}"


PREDICTOR = ('predictor { name: "F" ctc_predictor { label_map { } } }')


@pytest.mark.parametrize("text,match", [
    ("", r"model: model_oneof is not set"),
    (_mprm(PREDICTOR), r"multi_predictors_recognition_model\.feature_extractor: is not set"),
    (_mprm(TINY_ENCODER), r"\.predictor: needs at least one"),
    (_mprm(TINY_ENCODER + PREDICTOR + PREDICTOR), r"predictor\[1\].name: 'F' is already used"),
    (_mprm(TINY_ENCODER + PREDICTOR + "input_height: 0"), r"input_height: must be > 0"),
    (_mprm(TINY_ENCODER + PREDICTOR + "keypoint_supervision: true input_height: 32"),
     r"keypoint_supervision: needs a spatial_transformer"),
    (_mprm(TINY_ENCODER + PREDICTOR + "input_height: 33"),
     r"input_height: must be in \[1, 32\] for the resnet encoder"),
    (_mprm(TINY_ENCODER + 'predictor { name: "F" } input_height: 32'),
     r"predictor\[0\]: predictor_oneof is not set"),
    (_mprm(TINY_ENCODER + PREDICTOR.replace("ctc_predictor", "auxiliary: true ctc_predictor")),
     r"\.predictor: every predictor is auxiliary"),
])
def test_build_invalid_configs_raise_with_field_path(text, match):
    with pytest.raises(ValueError, match=match):
        model_builder.build(_parse(text), is_training=True)


def test_build_keypoint_supervision_rejects_wrong_regression_loss():
    config = _model_config("tiny.config")
    mprm_config = config.multi_predictors_recognition_model
    mprm_config.keypoint_supervision = True
    mprm_config.regression_loss.sequence_cross_entropy_loss.weight = 1.0
    with pytest.raises(ValueError, match="regression_loss: must be l2_regression_loss"):
        model_builder.build(config, is_training=True)


def test_build_wrong_message_raises():
    with pytest.raises(ValueError, match="expected a Model message"):
        model_builder.build(model_pb2.MultiPredictorsRecognitionModel(), True)


def test_second_clone_under_reuse_shares_all_variables():
    """model_deploy builds one model per clone under reuse=True: no new variables may appear."""
    config = _model_config("tiny.config")
    with tf.Graph().as_default():
        counts = []
        for i in range(2):
            with tf.name_scope(f"clone_{i}"), tf.variable_scope(tf.get_variable_scope(),
                                                                 reuse=True if i else None):
                model = model_builder.build(config, is_training=True)
                preds = model.predict(model.preprocess(tf.zeros([2, 32, 64, 3])))
                model.provide_groundtruth(tf.constant(["a", "b"]))
                model.loss(preds)
                model.postprocess(preds)
            counts.append(len(tf.global_variables()))
    assert counts[0] == counts[1]


SHIPPED_CHECKPOINT = os.path.join(CONFIGS, "..", "models", "aster_base", "model.ckpt-12000")


def _training_variables(model_config):
    """{name: shape} of the global variables of the training model (preprocess, predict, loss)."""
    mprm_config = model_config.multi_predictors_recognition_model
    with tf.Graph().as_default():
        model = model_builder.build(model_config, is_training=True)
        predictions = model.predict(model.preprocess(tf.zeros([2, 64, 256, 3])))
        keypoints = None
        if mprm_config.keypoint_supervision:
            keypoints = tf.zeros([2, 2 * mprm_config.spatial_transformer.num_control_points])
        model.provide_groundtruth(tf.constant(["ab", "cde"]), keypoints)
        model.loss(predictions)
        return {v.op.name: v.shape.as_list() for v in tf.global_variables()}


def test_the_fine_tuning_model_has_the_variables_of_the_shipped_checkpoint():
    """A renamed or reshaped variable would stop models/aster_base (and every checkpoint trained
    from configs/finetune_cpu.config's model) from restoring."""
    stored = {name: list(shape) for name, shape in tf.train.list_variables(SHIPPED_CHECKPOINT)}
    assert len(stored) > 100  # the whole model
    assert _training_variables(_model_config("finetune_cpu.config")) == stored
