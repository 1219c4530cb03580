import pytest
from google.protobuf import text_format

from aster.builders import convnet_builder
from aster.convnets import crnn_net, resnet, stn_convnet
from aster.protos import convnet_pb2, hyperparams_pb2
from aster.tf_setup import slim

_BN = "conv_hyperparams { op: CONV batch_norm { decay: 0.9 } }"


def _build(text, is_training=True):
    return convnet_builder.build(text_format.Parse(text, convnet_pb2.Convnet()), is_training)


def _bn_is_training(net):
    params = net._conv_hyperparams[slim.arg_scope_func_key(slim.conv2d)]["normalizer_params"]
    return params["is_training"]


def test_resnet_defaults_to_paper_resnet45():
    net = _build(f"resnet {{ {_BN} }}")
    assert isinstance(net, resnet.ResNet)
    assert net._unit_counts == (3, 4, 6, 6, 3)
    assert net._block_depths == (32, 64, 128, 256, 512)
    assert net._summarize_activations is False
    assert _bn_is_training(net) is True


@pytest.mark.parametrize(
    "depth,units",
    [
        ("RESNET_30", (1, 2, 3, 3, 2)),
        ("RESNET_50", (3, 4, 6, 6, 3)),
        ("RESNET_100", (3, 4, 13, 13, 3)),
    ],
)
def test_resnet_net_depth_translates(depth, units):
    assert _build(f"resnet {{ net_depth: {depth} }}")._unit_counts == units


def test_resnet_block_depths_and_summaries_translate():
    net = _build("resnet { block_depths: [8, 16, 32, 32, 64] summarize_activations: true }")
    assert net._block_depths == (8, 16, 32, 32, 64)
    assert net._summarize_activations is True


def test_resnet_bad_block_depths_raise_with_field_path():
    with pytest.raises(
        ValueError, match=r"convnet\.resnet\.block_depths: needs 5 .* got \[8, 16\]"
    ):
        _build("resnet { block_depths: [8, 16] }")


def test_crnn_net_translates():
    net = _build(f"crnn_net {{ tiny: true summarize_activations: true {_BN} }}", False)
    assert isinstance(net, crnn_net.CrnnNet)
    assert net._divisor == 2 and net._summarize_activations is True
    assert _bn_is_training(net) is False


def test_stn_convnet_translates():
    net = _build(f"stn_convnet {{ tiny: true {_BN} }}")
    assert isinstance(net, stn_convnet.StnConvnet)
    assert net._depths == stn_convnet.TINY_DEPTHS
    assert _build("stn_convnet { }")._depths == stn_convnet.FULL_DEPTHS


def test_fc_conv_hyperparams_raise():
    with pytest.raises(ValueError, match=r"convnet\.resnet\.conv_hyperparams\.op: must be CONV"):
        _build("resnet { conv_hyperparams { op: FC } }")


def test_bad_conv_hyperparams_raise_with_path():
    with pytest.raises(ValueError, match=r"stn_convnet\.conv_hyperparams\.initializer: initializer_oneof is not set"):
        _build("stn_convnet { conv_hyperparams { initializer { } } }")


def test_empty_oneof_raises():
    with pytest.raises(ValueError, match="convnet: convnet_oneof is not set"):
        convnet_builder.build(convnet_pb2.Convnet(), True)


def test_wrong_message_type_raises():
    with pytest.raises(ValueError, match="expected a Convnet message"):
        convnet_builder.build(hyperparams_pb2.Hyperparams(), True)
