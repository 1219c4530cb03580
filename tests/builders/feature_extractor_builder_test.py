import pathlib

import numpy as np
import pytest
from google.protobuf import text_format

from aster.builders import feature_extractor_builder, spatial_transformer_builder
from aster.convnets import crnn_net, resnet
from aster.core import bidirectional_rnn, feature_extractor
from aster.protos import feature_extractor_pb2, hyperparams_pb2, pipeline_pb2
from aster.tf_setup import tf

_CONFIGS = pathlib.Path(__file__).resolve().parents[2] / "configs"


def _model_config(name):
    text = (_CONFIGS / name).read_text(encoding="utf-8")
    pipeline = text_format.Parse(text, pipeline_pb2.TrainEvalPipelineConfig())
    return pipeline.model.multi_predictors_recognition_model


def _build(text, is_training=True):
    config = text_format.Parse(text, feature_extractor_pb2.FeatureExtractor())
    return feature_extractor_builder.build(config, is_training)


def test_paper_config_translates():
    extractor = feature_extractor_builder.build(
        _model_config("aster_paper.config").feature_extractor, True
    )
    assert isinstance(extractor, feature_extractor.FeatureExtractor)
    assert isinstance(extractor._convnet, resnet.ResNet)
    assert extractor._convnet._unit_counts == (3, 4, 6, 6, 3)
    assert len(extractor._brnn_layers) == 2
    for layer in extractor._brnn_layers:
        assert isinstance(layer, bidirectional_rnn.BidirectionalRnn)
        assert layer._fw_cell.output_size == 256 and layer.output_size == 256


@pytest.mark.slow
def test_paper_stn_and_encoder_shapes_and_parameter_count():
    model = _model_config("aster_paper.config")
    with tf.Graph().as_default():
        stn = spatial_transformer_builder.build(model.spatial_transformer, is_training=True)
        extractor = feature_extractor_builder.build(model.feature_extractor, is_training=True)
        images = tf.random_uniform([1, 64, 256, 3], -1.0, 1.0)
        rectified = stn.batch_transform(images)["rectified_images"]
        sequence = extractor.extract(rectified)
        assert rectified.shape.as_list() == [1, 32, 100, 3]
        assert sequence.shape.as_list() == [1, 25, 256]
        counts = {
            scope: sum(np.prod(v.shape.as_list()) for v in tf.trainable_variables(scope))
            for scope in ("SpatialTransformer", "FeatureExtractor/ResNet", "FeatureExtractor")
        }
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            value = sess.run(sequence)
    total = counts["SpatialTransformer"] + counts["FeatureExtractor"]
    print(
        f"paper STN {counts['SpatialTransformer']:,} + ResNet-45 "
        f"{counts['FeatureExtractor/ResNet']:,} + BiLSTMs "
        f"{counts['FeatureExtractor'] - counts['FeatureExtractor/ResNet']:,} = {total:,} parameters"
    )
    assert 19e6 < total < 22e6
    assert np.all(np.isfinite(value)) and np.all(value >= 0)  # the FC projections end in ReLU


def test_tiny_config_encodes_32x64_into_16_steps():
    model = _model_config("tiny.config")
    with tf.Graph().as_default():
        extractor = feature_extractor_builder.build(model.feature_extractor, is_training=True)
        sequence = extractor.extract(tf.random_uniform([2, 32, 64, 3], -1.0, 1.0))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            value = sess.run(sequence)
    assert value.shape == (2, 16, 32) and np.all(np.isfinite(value))


def test_crnn_without_rnn_layers_translates():
    extractor = _build("convnet { crnn_net { tiny: true } } summarize_activations: true")
    assert isinstance(extractor._convnet, crnn_net.CrnnNet)
    assert extractor._brnn_layers == [] and extractor._summarize_activations is True


def test_missing_convnet_raises():
    with pytest.raises(ValueError, match=r"feature_extractor\.convnet: is not set"):
        _build("summarize_activations: true")


def test_empty_convnet_oneof_raises_with_path():
    with pytest.raises(ValueError, match=r"feature_extractor\.convnet: convnet_oneof is not set"):
        _build("convnet { }")


def test_bad_rnn_layer_raises_with_indexed_path():
    text = (
        "convnet { crnn_net { } } "
        "bidirectional_rnn { fw_bw_rnn_cell { lstm_cell { } } } "
        "bidirectional_rnn { fw_bw_rnn_cell { lstm_cell { } } num_output_units: 4 }"
    )
    with pytest.raises(
        ValueError, match=r"feature_extractor\.bidirectional_rnn\[1\]\.fc_hyperparams"
    ):
        _build(text)


def test_wrong_message_type_raises():
    with pytest.raises(ValueError, match="expected a FeatureExtractor message"):
        feature_extractor_builder.build(hyperparams_pb2.Hyperparams(), True)
