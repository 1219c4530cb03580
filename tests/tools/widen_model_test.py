"""aster.tools.widen_model: a wider ResNet that computes what the checkpoint's narrower one did."""

import numpy as np
import pytest
from tiny_model import random_tiny_checkpoint

from aster.builders import model_builder
from aster.tf_setup import tf
from aster.tools import package_model, widen_model
from aster.utils import config_overrides

WIDE = [12, 16, 48, 40, 64]  # the stem and Block1, Block3, Block4 and Block5 grow; Block2 not
DEPTHS = "model.multi_predictors_recognition_model.feature_extractor.convnet.resnet.block_depths"


def _config(base, depths):
    config = type(base)()
    config.CopyFrom(base)
    config_overrides.set_field(config, f"{DEPTHS}=[{','.join(map(str, depths))}]")
    return config


def _trained_checkpoint(tmp_path):
    """The tiny model with random weights and batch-norm statistics far from 0 and 1 (a freshly
    initialised model's would hide a wrongly copied statistic)."""
    config, path = random_tiny_checkpoint(str(tmp_path / "narrow"))
    values = package_model.weights(path, False)
    rng = np.random.default_rng(0)
    for name in values:
        if name.endswith("moving_mean") or name.endswith("beta"):
            values[name] = rng.normal(0.0, 0.5, values[name].shape).astype(np.float32)
        if name.endswith("moving_variance"):
            values[name] = rng.uniform(0.5, 2.0, values[name].shape).astype(np.float32)
    path = str(tmp_path / "narrow" / "model.ckpt-7")
    package_model.write_weights(values, path)
    return config, path


def _run(config, checkpoint, images, is_training):
    """The encoder's output sequence and, in training, the losses (batch statistics);
    in inference the decoded scores (moving statistics)."""
    with tf.Graph().as_default():
        model = model_builder.build(config.model, is_training=is_training)
        predictions = model.predict(model.preprocess(tf.constant(images)))
        fetches = {"sequence": predictions["feature_sequence"]}
        if is_training:
            model.provide_groundtruth(tf.constant(["ab1", "c"]))
            fetches.update(model.loss(predictions))
        else:
            fetches["scores"] = model.postprocess(predictions)["scores"]
        with tf.Session() as session:
            session.run(tf.tables_initializer())
            tf.train.Saver().restore(session, checkpoint)
            return session.run(fetches)


@pytest.mark.parametrize("is_training", [False, True])
def test_the_wider_model_computes_what_the_narrow_one_did(tmp_path, is_training, capsys):
    narrow, checkpoint = _trained_checkpoint(tmp_path)
    wide = _config(narrow, WIDE)
    config_path = tmp_path / "wide.config"
    config_path.write_text(str(wide))
    out_dir = tmp_path / "wide"
    assert widen_model.main(["--checkpoint_path", checkpoint, "--pipeline_config_path",
                             str(config_path), "--output_dir", str(out_dir)]) == 0
    printed = capsys.readouterr().out
    assert "Block5/Unit2 (inner): 32 -> 64 channels" in printed
    assert "Block2" not in printed
    images = np.random.default_rng(1).uniform(0, 255, [2, 32, 64, 3]).astype(np.float32)
    before = _run(narrow, checkpoint, images, is_training)
    after = _run(wide, str(out_dir / "model.ckpt-7"), images, is_training)
    assert sorted(before) == sorted(after)
    for key in before:
        np.testing.assert_allclose(after[key], before[key], rtol=1e-4, atol=1e-5, err_msg=key)


def test_the_copies_of_a_channel_read_on_with_different_weights(tmp_path):
    _, checkpoint = _trained_checkpoint(tmp_path)
    values = package_model.weights(checkpoint, False)
    wide, widened = widen_model.widen(values, WIDE, seed=0)
    conv2 = "FeatureExtractor/ResNet/Block5/Unit2/Conv2/weights"
    assert wide[conv2].shape == (3, 3, 64, 64) and wide[conv2].dtype == np.float32
    # Conv1 writes each new channel of Block5/Unit2's inner group as a copy of an old one;
    # Conv2 reads a channel's copies with shares that differ but sum to the old weights.
    mapping = {name: m for name, _, _, m in widened}["FeatureExtractor/ResNet/Block5/Unit2 (inner)"]
    c = mapping[32]
    copies = np.flatnonzero(mapping == c)
    assert len(copies) >= 2
    for name in ("FeatureExtractor/ResNet/Block5/Unit2/Conv1/BatchNorm/moving_mean",
                 "FeatureExtractor/ResNet/Block5/Unit2/Conv1/BatchNorm/moving_variance"):
        np.testing.assert_array_equal(wide[name][copies], values[name][c])
    assert not np.allclose(wide[conv2][:, :, copies[0]], wide[conv2][:, :, copies[1]])
    # (its output channels below 32 are the old ones: the stream's copies come after them)
    np.testing.assert_allclose(wide[conv2][:, :, copies, :32].sum(axis=2), values[conv2][:, :, c],
                               rtol=1e-5, atol=1e-6)
    assert [name for name, *_ in widened if "Block2" in name] == []
    kernel = "FeatureExtractor/BidirectionalRnn0/bidirectional_rnn/fw/lstm_cell/kernel"
    assert wide[kernel].shape[0] == values[kernel].shape[0] + 32
    # Without a bidirectional RNN the predictors read the last block: it cannot grow.
    no_rnn = {n: v for n, v in values.items() if not n.startswith(widen_model.RNN + "/")}
    with pytest.raises(widen_model.WidenError, match="which no bidirectional RNN reads"):
        widen_model.widen(no_rnn, WIDE)
    assert widen_model.widen(no_rnn, [8, 16, 48, 32, 32])[0]  # an inner block still can


def test_a_narrower_block_is_refused_naming_it(tmp_path, capsys):
    narrow, checkpoint = _trained_checkpoint(tmp_path)
    config_path = tmp_path / "narrow.config"
    config_path.write_text(str(narrow))
    # The widths may come from --set, as in every command that reads a pipeline config.
    status = widen_model.main(["--checkpoint_path", checkpoint, "--pipeline_config_path",
                               str(config_path), "--output_dir", str(tmp_path / "out"),
                               "--set", f"{DEPTHS}=[8,16,24,32,32]"])
    assert status == 2
    assert ("block_depths[2] is 24, narrower than the checkpoint's Block3 (32 channels)"
            in capsys.readouterr().err)
    assert not (tmp_path / "out").exists()


def test_a_checkpoint_without_a_resnet_is_refused():
    with pytest.raises(widen_model.WidenError, match="only the ResNet encoder can be widened"):
        widen_model.widen({"FeatureExtractor/CrnnNet/conv1/weights": np.zeros([3, 3, 3, 8])},
                          WIDE)
