import numpy as np
import pytest
from google.protobuf import text_format

from aster.builders import spatial_transformer_builder
from aster.convnets import stn_convnet
from aster.core import spatial_transformer, tps_options
from aster.protos import hyperparams_pb2, spatial_transformer_pb2
from aster.tf_setup import slim, tf

_PAPER = """
convnet { stn_convnet { conv_hyperparams { op: CONV
    regularizer { l2_regularizer { weight: 0 } }
    initializer { variance_scaling_initializer { } } batch_norm { decay: 0.99 } } } }
fc_hyperparams { op: FC regularizer { l2_regularizer { weight: 0 } }
    initializer { variance_scaling_initializer { } } batch_norm { decay: 0.99 } }
localization_h: 32 localization_w: 64 output_h: 32 output_w: 100
margin_x: 0 margin_y: 0 num_control_points: 20 init_bias_pattern: "sine" activation: "none"
"""
_TINY = """
convnet { stn_convnet { tiny: true } }
fc_hyperparams { op: FC }
localization_h: 8 localization_w: 16 output_h: 8 output_w: 20
"""


def _config(text, **overrides):
    config = text_format.Parse(text, spatial_transformer_pb2.SpatialTransformer())
    for name, value in overrides.items():
        setattr(config, name, value)
    return config


def test_paper_config_translates():
    stn = spatial_transformer_builder.build(_config(_PAPER), is_training=False)
    assert isinstance(stn, spatial_transformer.SpatialTransformer)
    assert isinstance(stn._convnet, stn_convnet.StnConvnet)
    assert stn._convnet._depths == stn_convnet.FULL_DEPTHS
    assert stn._localization_size == (32, 64) and stn._output_size == (32, 100)
    assert stn._num_control_points == 20 and stn._activation == "none"
    np.testing.assert_allclose(
        stn.init_control_points, spatial_transformer.init_control_points(20, "sine")
    )
    np.testing.assert_allclose(
        stn.target_control_points, spatial_transformer.init_control_points(20, "identity")
    )
    fc_kwargs = stn._fc_hyperparams[slim.arg_scope_func_key(slim.fully_connected)]
    assert fc_kwargs["normalizer_params"]["is_training"] is False


def test_defaults_translate_margins_and_identity_pattern():
    stn = spatial_transformer_builder.build(
        _config("convnet { stn_convnet { } } fc_hyperparams { op: FC }"), True
    )
    assert stn._localization_size == (64, 128) and stn._output_size == (32, 100)
    np.testing.assert_allclose(stn.init_control_points[:10, 1], 0.1)
    np.testing.assert_allclose(stn.init_control_points[0], [0.1, 0.1])


def test_paper_stn_rectifies_64x256_to_32x100_and_counts_parameters():
    with tf.Graph().as_default():
        stn = spatial_transformer_builder.build(_config(_PAPER), is_training=True)
        out = stn.batch_transform(tf.zeros([2, 64, 256, 3]))
        count = sum(np.prod(v.shape.as_list()) for v in tf.trainable_variables())
        fc1 = tf.trainable_variables("SpatialTransformer/LocalizationNet/fc1/weights")[0]
    assert out["rectified_images"].shape.as_list() == [2, 32, 100, 3]
    assert out["control_points"].shape.as_list() == [2, 20, 2]
    assert fc1.shape.as_list() == [512, 512]  # the convnet flattens to 512
    print(f"paper STN trainable parameters: {count}")
    assert 1.8e6 < count < 1.9e6


def test_tiny_stn_sigmoid_starts_at_pattern():
    with tf.Graph().as_default():
        stn = spatial_transformer_builder.build(_config(_TINY, activation="sigmoid"), True)
        points = stn.batch_transform(tf.zeros([1, 16, 40, 3]))["control_points"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            value = sess.run(points)
    np.testing.assert_allclose(value[0], stn.init_control_points, atol=1e-5)


@pytest.mark.parametrize("pattern", tps_options.INIT_PATTERNS)
@pytest.mark.parametrize("activation", tps_options.ACTIVATIONS)
def test_every_listed_pattern_and_activation_translates(pattern, activation):
    config = _config(_TINY, init_bias_pattern=pattern, activation=activation)
    stn = spatial_transformer_builder.build(config, is_training=True)
    expected = spatial_transformer.init_control_points(20, pattern, 0.1, 0.1)
    if activation == "sigmoid":
        expected = np.clip(expected, 1e-3, 1 - 1e-3)
    np.testing.assert_allclose(stn.init_control_points, expected)
    assert stn._activation == activation


@pytest.mark.parametrize(
    "overrides,message",
    [
        (
            dict(init_bias_pattern="zigzag"),
            r"spatial_transformer\.init_bias_pattern: 'zigzag' is not one of",
        ),
        (dict(activation="relu"), r"spatial_transformer\.activation: 'relu' is not one of"),
        (dict(num_control_points=3), r"spatial_transformer\.num_control_points: must be an even"),
        (dict(margin_x=0.6), r"spatial_transformer\.margin_x: must be in"),
        (dict(output_w=0), r"spatial_transformer\.output_w: must be > 0, got 0"),
    ],
)
def test_bad_fields_raise_naming_field(overrides, message):
    with pytest.raises(ValueError, match=message):
        spatial_transformer_builder.build(_config(_TINY, **overrides), True)


def test_missing_convnet_raises():
    with pytest.raises(ValueError, match=r"spatial_transformer\.convnet: is not set"):
        spatial_transformer_builder.build(_config("fc_hyperparams { op: FC }"), True)


def test_empty_convnet_oneof_raises_with_path():
    with pytest.raises(ValueError, match=r"spatial_transformer\.convnet: convnet_oneof is not set"):
        spatial_transformer_builder.build(_config("convnet { } fc_hyperparams { op: FC }"), True)


def test_conv_fc_hyperparams_raise():
    with pytest.raises(ValueError, match=r"fc_hyperparams\.op: must be FC .* got CONV"):
        spatial_transformer_builder.build(_config("convnet { stn_convnet { } }"), True)


def test_wrong_message_type_raises():
    with pytest.raises(ValueError, match="expected a SpatialTransformer message"):
        spatial_transformer_builder.build(hyperparams_pb2.Hyperparams(), True)
