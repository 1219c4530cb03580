"""class_remap: a checkpoint's class rows and columns moved into a model with another label map,
on arrays and through the trainer's fine-tune restore of the tiny model."""

import logging

import numpy as np
import pytest
from tiny_model import random_tiny_checkpoint, tiny_config

from aster.builders import model_builder
from aster.protos import train_pb2
from aster.tf_setup import tf
from aster.utils import class_remap, config_util, train_session

OLD = ("abc", 2)  # classes: GO, EOS, a, b, c
NEW = ("aAb!", 2)  # classes: GO, EOS, a, A, b, !


def test_pairs_keep_reserved_labels_and_take_the_other_case():
    assert class_remap.class_pairs(OLD, NEW) == [(0, 0), (1, 1), (2, 2), (3, 2), (4, 3)]
    # Upper-case checkpoint, lower-case model: "a" takes "A".
    assert class_remap.class_pairs(("AB", 0), ("ab", 0)) == [(0, 0), (1, 1)]


def test_remap_moves_the_class_block_and_copies_the_rest():
    pairs = class_remap.class_pairs(OLD, NEW)
    # An LSTM kernel: 5 one-hot rows, then 3 other rows; 2 columns.
    old = np.arange(16, dtype=np.float32).reshape(8, 2)
    new = np.full((9, 2), -1.0, np.float32)
    out = class_remap.remap(old, new, 5, 6, pairs)
    np.testing.assert_array_equal(out[[0, 1, 2, 3, 4]], old[[0, 1, 2, 2, 3]])
    np.testing.assert_array_equal(out[5], [-1, -1])  # "!" keeps its initializer
    np.testing.assert_array_equal(out[6:], old[5:])
    # An output kernel: the classes on the last axis; a CTC head: the blank after them.
    kernel = old[:5].T
    out = class_remap.remap(kernel, np.zeros((2, 6)), 5, 6, pairs)
    np.testing.assert_array_equal(out[:, :5], kernel[:, [0, 1, 2, 2, 3]])
    ctc = class_remap.remap(np.arange(6.0), np.zeros(7), 5, 6, pairs)
    np.testing.assert_array_equal(ctc, [0, 1, 2, 2, 3, 0, 5])


@pytest.mark.parametrize("old_shape, new_shape", [
    ((8, 2), (9, 3)),   # two axes differ
    ((8, 2), (10, 2)),  # the rest after the classes differs (8 - 5 != 10 - 6)
    ((8,), (9, 1)),     # ranks differ
])
def test_remap_refuses_other_shape_changes(old_shape, new_shape):
    pairs = class_remap.class_pairs(OLD, NEW)
    assert class_remap.remap(np.zeros(old_shape), np.zeros(new_shape), 5, 6, pairs) is None


def _fine_tune(source_dir, new_config, caplog):
    """Builds new_config's model, runs the fine-tune init from source_dir; {name: value}."""
    train_config = train_pb2.TrainConfig(fine_tune_checkpoint=str(source_dir))
    with tf.Graph().as_default():
        model = model_builder.build(new_config.model, is_training=False)
        model.postprocess(model.predict(model.preprocess(tf.zeros([1, 32, 64, 3]))))
        variables = tf.global_variables()
        with caplog.at_level(logging.INFO, logger="aster.trainer"):
            init_fn = train_session.fine_tune_init_fn(train_config, variables, new_config.model)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            init_fn(None, sess)
            return {v.op.name: sess.run(v) for v in variables}


def _with_charset(config, text):
    model = config.model.multi_predictors_recognition_model
    for predictor in model.predictor:
        predictor.attention_predictor.label_map.character_set.text_string = " ".join(text)
    return config


def test_fine_tune_restores_the_decoders_class_by_class(tmp_path, caplog):
    old_config, checkpoint = random_tiny_checkpoint(str(tmp_path))
    config_util.save_pipeline_config(old_config, str(tmp_path / "pipeline.config"))
    old = {name: tf.train.load_variable(checkpoint, name)
           for name, _ in tf.train.list_variables(checkpoint)}
    chars = "0123456789abcdefghijklmnopqrstuvwxyz"  # the tiny config's LOWERCASE
    new_chars = chars + "Q$"
    tuned = _fine_tune(tmp_path, _with_charset(tiny_config(), new_chars), caplog)
    assert "restored class by class (39 of the model's 40 classes from the checkpoint's 38)" \
        in caplog.text  # GO, EOS, 36 characters; "Q" from "q"; "$" has no match
    q_old, q_new, dollar = 2 + chars.index("q"), 2 + new_chars.index("Q"), 2 + new_chars.index("$")
    checked = 0
    for name, value in tuned.items():
        if name.endswith("output/kernel"):
            np.testing.assert_array_equal(value[:, :38], old[name])
            np.testing.assert_array_equal(value[:, q_new], old[name][:, q_old])
            assert not np.array_equal(value[:, dollar], value[:, q_new])
            checked += 1
        elif name.endswith("lstm_cell/kernel") and "AttentionDecoder" in name:
            np.testing.assert_array_equal(value[:38], old[name][:38])
            np.testing.assert_array_equal(value[q_new], old[name][q_old])
            np.testing.assert_array_equal(value[40:], old[name][38:])
            checked += 1
        elif name in old and old[name].shape == value.shape:
            np.testing.assert_array_equal(value, old[name])
    assert checked == 4  # two decoders, each an LSTM kernel and an output kernel


def test_without_the_checkpoints_config_the_class_variables_keep_their_initializer(
        tmp_path, caplog):
    _, checkpoint = random_tiny_checkpoint(str(tmp_path))
    tuned = _fine_tune(tmp_path, _with_charset(tiny_config(), "abcQ"), caplog)
    assert "no class remapping (no pipeline.config beside" in caplog.text
    kernels = [n for n in tuned if n.endswith("output/kernel")]
    assert kernels and all(tuned[n].shape[-1] == 6 for n in kernels)
    assert not any(np.array_equal(tuned[n][:, 2], tf.train.load_variable(checkpoint, n)[:, 2])
                   for n in kernels)


def test_a_model_folder_of_float16_weights_is_restored_cast_and_class_by_class(tmp_path, caplog):
    """A model folder written with `package_model write --float16` fine-tunes a float32 model."""
    from aster.tools import package_model

    old_config, checkpoint = random_tiny_checkpoint(str(tmp_path / "float32"))
    values = package_model.weights(checkpoint, False)
    half = {name: value.astype(np.float16) for name, value in values.items()}
    package_model.write_weights(half, str(tmp_path / "float16" / "model.ckpt-1"))
    config_util.save_pipeline_config(old_config, str(tmp_path / "float16" / "pipeline.config"))
    chars = "0123456789abcdefghijklmnopqrstuvwxyz"
    tuned = _fine_tune(tmp_path / "float16", _with_charset(tiny_config(), chars + "Q"), caplog)
    assert "restored class by class" in caplog.text
    assert all(value.dtype == np.float32 for value in tuned.values())
    q_old, q_new = 2 + chars.index("q"), 2 + len(chars)
    kernels = [n for n in tuned if n.endswith("output/kernel")]
    assert len(kernels) == 2
    for name in kernels:
        np.testing.assert_array_equal(tuned[name][:, q_new], half[name][:, q_old])
    same_shape = [n for n in half if n in tuned and half[n].shape == tuned[n].shape]
    assert len(same_shape) > 20
    for name in same_shape:
        np.testing.assert_array_equal(tuned[name], half[name].astype(np.float32), err_msg=name)
