"""trainer.train with a tiny stand-in model (tests/trainer_helpers.py), in this process."""

import functools
import glob
import json
import logging
import os

import numpy as np
import pytest
import trainer_helpers as helpers
from google.protobuf import text_format

from aster import trainer
from aster.core import conv_gradients, session_options
from aster.core.model import RecognitionModel
from aster.tf_setup import tf
from aster.utils import checkpoints, config_util, hooks, model_deploy, train_session


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    return helpers.write_records(tmp_path_factory.mktemp("data") / "train.tfrecord")


def _train(records, train_dir, extra_train="", optimizer=None, deploy_config=None, **seams):
    """trainer.train with the stand-in model unless `seams` names another build_model."""
    config = helpers.pipeline_config(records, extra_train=extra_train, optimizer=optimizer)
    seams.setdefault("build_model", helpers.build_standin)
    trainer.train(config, str(train_dir), deploy_config, seams=trainer.Seams(**seams))
    return config


def _checkpoint(train_dir, step=None):
    if step is None:
        return checkpoints.newest(str(train_dir)).path
    return os.path.join(str(train_dir), f"model.ckpt-{step}")


def _values(path):
    reader = tf.train.load_checkpoint(path)
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()}


def _summary_tags(train_dir):
    tags = set()
    for path in glob.glob(os.path.join(str(train_dir), "events.out.tfevents.*")):
        for event in tf.train.summary_iterator(path):
            tags.update(value.tag for value in event.summary.value)
    return tags


def test_train_writes_checkpoints_summaries_config_and_trace(records, tmp_path):
    config = _train(records, tmp_path, "num_steps: 6 profile_at_step: 3 save_checkpoint_steps: 3")
    assert _checkpoint(tmp_path).endswith("model.ckpt-6")
    assert os.path.exists(_checkpoint(tmp_path, 3) + ".index")
    assert config_util.load_pipeline_config(str(tmp_path / "pipeline.config")) == config
    assert hooks.trace_files(str(tmp_path))
    with open(hooks.trace_files(str(tmp_path))[0]) as f:
        assert json.load(f)["traceEvents"]
    tags = _summary_tags(tmp_path)
    expected = {"losses/StandIn/length_loss", "losses/StandIn/l1_loss", "losses/total_loss",
                "losses/regularization_loss", "LearningRate", "global_norm/gradients",
                "global_norm/parameters", "global_norm/updates", "input/dropped_undecodable",
                "input/dropped_empty_label", "input/dropped_too_long",
                "images/input_with_control_points", "images/rectified"}
    assert expected <= {t.split("/image/")[0] for t in tags}
    assert "global_norm/clipped_gradients" not in tags  # nothing clips


def test_loss_falls(tmp_path):
    records = helpers.write_records(tmp_path / "learnable.tfrecord", learnable=True)
    losses = []

    class _Record(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs(tf.get_default_graph().get_tensor_by_name("train_op:0"))

        def after_run(self, run_context, run_values):
            losses.append(run_values.results)

    adam = ("adam_optimizer { learning_rate { constant_learning_rate { learning_rate: 0.01 } } } "
            "use_moving_average: false")
    def build_seeded(model_config, is_training):
        tf.set_random_seed(0)  # a fixed initialisation: the run is the same every time
        return helpers.build_standin(model_config, is_training)

    config = helpers.pipeline_config(records, "num_steps: 60 save_summaries_steps: 0", adam)
    config.train_input_reader[0].shuffle = False
    trainer.train(config, str(tmp_path / "train"),
                  seams=trainer.Seams(build_model=build_seeded, extra_hooks=[_Record()]))
    # Medians, not means: one batch of four can be far off the trend.
    assert np.median(losses[-10:]) < 0.2 * np.median(losses[:3]), losses


def test_two_cpu_clones_train_and_share_variables(records, tmp_path):
    from aster.utils import model_deploy

    deploy = model_deploy.DeploymentConfig(num_clones=2, clone_on_cpu=True)
    _train(records, tmp_path, "num_steps: 2", deploy_config=deploy)
    names = _values(_checkpoint(tmp_path))
    assert "StandIn/conv/weights" in names and not any(n.startswith("clone_") for n in names)


def test_resume_continues_from_newest_checkpoint(records, tmp_path):
    _train(records, tmp_path, "num_steps: 2")
    _train(records, tmp_path, "num_steps: 4")
    steps = sorted(int(p.split("-")[-1].split(".")[0]) for p in glob.glob(
        str(tmp_path / "model.ckpt-*.index")))
    assert steps == [0, 2, 4]


def test_a_rerun_of_a_finished_run_trains_nothing(records, tmp_path, caplog):
    _train(records, tmp_path, "num_steps: 2")
    with caplog.at_level(logging.INFO):
        _train(records, tmp_path, "num_steps: 2")
    steps = sorted(int(p.split("-")[-1].split(".")[0]) for p in glob.glob(
        str(tmp_path / "model.ckpt-*.index")))
    assert steps == [0, 2]
    assert "is at step 2, train_config.num_steps is 2: nothing to train" in caplog.text


def test_a_lagging_state_file_resumes_from_the_folder_s_newest(records, tmp_path, caplog):
    """The `checkpoint` state file names step 2 while the folder has a complete step 4 (a chief
    killed before updating it, a copied run): the run resumes from step 4 (the input is seeded
    for step 4 and the session restores it: one step to step 5) and a rerun at num_steps 4
    trains nothing."""
    _train(records, tmp_path, "num_steps: 4 save_checkpoint_steps: 2")
    two = _checkpoint(tmp_path, 2)
    tf.train.update_checkpoint_state(str(tmp_path), two, all_model_checkpoint_paths=[two])
    with caplog.at_level(logging.INFO):
        _train(records, tmp_path, "num_steps: 4 save_checkpoint_steps: 2")
    assert "model.ckpt-4 is at step 4, train_config.num_steps is 4: nothing to train" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.INFO):
        _train(records, tmp_path, "num_steps: 5 save_checkpoint_steps: 2")
    assert f"resuming from {_checkpoint(tmp_path, 4)} (step 4)" in caplog.text
    saved = [r.getMessage() for r in caplog.records if r.getMessage().startswith("saved ")]
    assert saved == [f"saved checkpoint {_checkpoint(tmp_path, s)}" for s in (4, 5)]


def test_frozen_variables_do_not_change_and_others_do(records, tmp_path):
    _train(records, tmp_path, 'num_steps: 3 freeze_variables: "StandIn/conv/"')
    first, last = _values(_checkpoint(tmp_path, 0)), _values(_checkpoint(tmp_path, 3))
    np.testing.assert_array_equal(first["StandIn/conv/weights"], last["StandIn/conv/weights"])
    assert not np.allclose(first["StandIn/head/weights"], last["StandIn/head/weights"])


def test_fine_tune_loads_shared_variables_and_skips_new_head(records, tmp_path, caplog):
    source = tmp_path / "source"
    _train(records, source, "num_steps: 2")
    # A rate must be > 0; a tiny one leaves the loaded values as they are.
    frozen_lr = ("momentum_optimizer { learning_rate { constant_learning_rate { learning_rate: "
                 "1e-12 } } momentum_optimizer_value: 0.0 } use_moving_average: false")
    target = tmp_path / "target"
    with caplog.at_level(logging.WARNING):
        _train(records, target, f'num_steps: 1 fine_tune_checkpoint: "{source}"',
               optimizer=frozen_lr,
               build_model=functools.partial(helpers.build_standin, head_size=7))
    loaded, tuned = _values(_checkpoint(source)), _values(_checkpoint(target, 0))
    for name in ("StandIn/conv/weights", "StandIn/conv/BatchNorm/beta",
                 "StandIn/conv/BatchNorm/moving_mean"):
        np.testing.assert_array_equal(loaded[name], tuned[name])
    assert tuned["StandIn/head/weights"].shape[-1] == 7
    assert "StandIn/head/weights has shape" in caplog.text
    assert tuned["global_step"] == 0


def test_training_past_the_cosine_schedule_warns(records, tmp_path, caplog):
    cosine = ("adam_optimizer { learning_rate { cosine_decay_learning_rate { "
              "learning_rate_base: 0.01 total_steps: 2 } } } use_moving_average: false")
    with caplog.at_level(logging.WARNING, logger="aster.trainer"):
        _train(records, tmp_path / "past", "num_steps: 3", optimizer=cosine)
    assert "num_steps (3) is past the cosine schedule's total_steps (2)" in caplog.text
    assert "set train_config.optimizer.adam_optimizer.learning_rate." in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="aster.trainer"):
        _train(records, tmp_path / "within", "num_steps: 2", optimizer=cosine)
    assert "past the cosine schedule" not in caplog.text


def test_a_reader_shown_many_times_over_is_named_in_a_warning(records, tmp_path, caplog):
    config = helpers.pipeline_config(records, extra_train="num_steps: 200")
    # 32 records, 200 steps of 4: each shown 25 times.
    assert trainer.reader_repeats(config) == [(0, str(records), 32, 25.0)]
    with caplog.at_level(logging.WARNING, logger="aster.trainer"):
        trainer._warn_repeats(config)
    assert "train_input_reader[0]" in caplog.text and "~25 times" in caplog.text
    caplog.clear()
    config.train_config.num_steps = 100  # 12.5 times: no warning
    with caplog.at_level(logging.WARNING, logger="aster.trainer"):
        trainer._warn_repeats(config)
    assert "times" not in caplog.text


def test_fine_tune_checkpoint_names_what_it_cannot_find(records, tmp_path):
    with pytest.raises(ValueError, match=r"^train_config.fine_tune_checkpoint '.*nowhere': no "
                                         r"checkpoint, folder or shipped model of that name"):
        _train(records, tmp_path / "train", f'num_steps: 1 fine_tune_checkpoint: "{tmp_path}/nowhere"')


def test_fine_tune_checkpoint_without_model_variables_raises(records, tmp_path):
    other = tmp_path / "other"
    with tf.Graph().as_default():
        tf.get_variable("unrelated", [1])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.train.Saver().save(sess, str(other / "model.ckpt"))
    with pytest.raises(ValueError, match="has none of the model's variables"):
        _train(records, tmp_path / "train",
               f'num_steps: 1 fine_tune_checkpoint: "{other / "model.ckpt"}"')


def test_nan_loss_stops_naming_the_loss_and_keeps_last_good_checkpoint(records, tmp_path):
    exploding = ("momentum_optimizer { learning_rate { constant_learning_rate { learning_rate: "
                 "1e30 } } momentum_optimizer_value: 0.9 } use_moving_average: false")
    with pytest.raises(trainer.NonFiniteLossError, match=r"loss \S*StandIn/\S+ became NaN or Inf"):
        _train(records, tmp_path, "num_steps: 50 save_checkpoint_steps: 1", optimizer=exploding)
    last = _checkpoint(tmp_path)
    values = _values(last)
    assert all(np.all(np.isfinite(v)) for v in values.values() if v.dtype.kind == "f")
    with tf.Graph().as_default():
        variable = tf.get_variable("StandIn/conv/weights", values["StandIn/conv/weights"].shape)
        with tf.Session() as sess:
            tf.train.Saver([variable]).restore(sess, last)


def test_gradient_hooks_in_trainer(records, tmp_path):
    """The bias multiplier and a regex multiplier scale, freezing drops, clipping bounds."""
    from aster.utils.train_ops import gradient_hooks

    config = text_format.Parse(
        'bias_grad_multiplier: 2.0 gradient_multipliers { regex: "enc/" multiplier: 0.5 } '
        'freeze_variables: "frozen/" gradient_clipping_by_norm: 3.0',
        helpers.pipeline_config(records).train_config.__class__())
    with tf.Graph().as_default():
        names = ["enc/weights", "enc/biases", "frozen/weights", "head/weights"]
        variables = [tf.get_variable(n, [1]) for n in names]
        grads = gradient_hooks([(tf.constant([2.0]), v) for v in variables], config)
        assert [v.op.name for _, v in grads] == ["enc/weights", "enc/biases", "head/weights"]
        with tf.Session() as sess:
            values = sess.run([g for g, _ in grads])
    # enc/weights: 2 * 0.5; enc/biases: 2 * 2 * 0.5 = 2; head: 2; all under the clip norm 3.
    np.testing.assert_allclose(np.concatenate(values), [1.0, 2.0, 2.0])
    config.bias_grad_multiplier = 10.0
    with tf.Graph().as_default():
        grads = gradient_hooks([(tf.constant([2.0]), tf.get_variable("x/biases", [1]))], config)
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(grads[0][0]), [3.0])  # 20 clipped to 3


class _LinearModel(RecognitionModel):
    """loss = sum(c * v) over three variables: each gradient is its constant c, whatever v is."""

    VALUES = {"Linear/weights": [3.0, -4.0, 1.0], "Linear/biases": [0.5, 2.0],
              "Linear/frozen/weights": [-1.0, 7.0]}
    GRADIENTS = {"Linear/weights": [3.0, 4.0, 12.0], "Linear/biases": [1.0, 2.0],
                 "Linear/frozen/weights": [2.0, 0.0]}

    def preprocess(self, images):
        return images

    def predict(self, preprocessed_images, scope=None):
        return {name: tf.get_variable(name, [len(value)], initializer=tf.constant_initializer(
            value)) for name, value in self.VALUES.items()}

    def loss(self, predictions_dict, scope=None):
        return {"Linear/loss": tf.add_n([tf.reduce_sum(tf.constant(self.GRADIENTS[name]) * v)
                                         for name, v in predictions_dict.items()])}

    def postprocess(self, predictions_dict, scope=None):
        raise NotImplementedError


def _scalars(train_dir):
    """{tag: [values]} of the scalar summaries in train_dir's event files."""
    values = {}
    for path in glob.glob(os.path.join(str(train_dir), "events.out.tfevents.*")):
        for event in tf.train.summary_iterator(path):
            for value in event.summary.value:
                if value.WhichOneof("value") == "simple_value":
                    values.setdefault(value.tag, []).append(value.simple_value)
    return values


def test_norm_summaries_before_and_after_the_clip_and_of_every_variable(records, tmp_path):
    """Against NumPy on _LinearModel: gradients before the hooks, clipped ones after them."""
    tiny_rate = ("momentum_optimizer { learning_rate { constant_learning_rate { learning_rate: "
                 "1e-9 } } momentum_optimizer_value: 0.0 } use_moving_average: false")
    _train(records, tmp_path, 'num_steps: 3 save_summaries_steps: 1 bias_grad_multiplier: 2.0 '
           'freeze_variables: "frozen/" clip_gradients_by_global_norm: 5.0', optimizer=tiny_rate,
           build_model=lambda config, is_training: _LinearModel(is_training))
    gradients = {name: np.array(g) for name, g in _LinearModel.GRADIENTS.items()}
    raw = np.linalg.norm(np.concatenate(list(gradients.values())))
    hooked = np.concatenate([gradients["Linear/weights"], 2.0 * gradients["Linear/biases"]])
    parameters = np.linalg.norm(np.concatenate(list(_LinearModel.VALUES.values())))
    assert np.linalg.norm(hooked) > 5.0  # so the clip applies
    scalars = _scalars(tmp_path)
    for tag, expected in [("global_norm/gradients", raw), ("global_norm/clipped_gradients", 5.0),
                          ("global_norm/parameters", parameters)]:
        assert len(scalars[tag]) >= 3, (tag, scalars[tag])
        np.testing.assert_allclose(scalars[tag], expected, rtol=1e-5, err_msg=tag)


def test_speed_options_reach_the_session_config():
    config = helpers.pipeline_config("unused.tfrecord", extra_train=(
        "intra_op_threads: 1 inter_op_threads: 2 mixed_precision: true xla_jit: false"))
    session = train_session.session_config(model_deploy.DeploymentConfig(),
                                           config.train_config)
    assert session.intra_op_parallelism_threads == 1
    assert session.inter_op_parallelism_threads == 2
    assert session_options.bfloat16_enabled(session) == session_options.cpu_supports_bfloat16()


def test_bfloat16_training_keeps_float32_variables_and_finite_loss(records, tmp_path):
    losses = []

    class _Record(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs(tf.get_default_graph().get_tensor_by_name("train_op:0"))

        def after_run(self, run_context, run_values):
            losses.append(run_values.results)

    _train(records, tmp_path, "num_steps: 3 mixed_precision: true summarize_update_norm: false",
           extra_hooks=[_Record()])
    assert len(losses) == 3 and all(np.isfinite(losses))
    assert all(np.asarray(v).dtype == np.float32 for v in losses)
    values = _values(_checkpoint(tmp_path))
    assert all(v.dtype in (np.float32, np.int64) for v in values.values())
    tags = _summary_tags(tmp_path)
    assert "global_norm/gradients" in tags and "global_norm/updates" not in tags


def test_gpu_float16_training_scales_the_loss_and_saves_the_scale(records, tmp_path, monkeypatch):
    # A GPU machine as the trainer sees it; the clone is soft-placed on this CPU, where the CUDA
    # rewrite does nothing, so this checks the wiring: loss scaling around the real train op.
    monkeypatch.setattr(train_session, "_num_gpus", lambda: 1)
    _train(records, tmp_path, "num_steps: 3 mixed_precision: true",
           deploy_config=model_deploy.DeploymentConfig())
    values = _values(_checkpoint(tmp_path))
    assert values["global_step"] == 3
    assert values["current_loss_scale"] == 2.0 ** 15 and values["good_steps"] == 3
    assert all(np.isfinite(v).all() for v in values.values())


def test_gpu_float16_with_sync_replicas_is_refused(records, tmp_path, monkeypatch):
    monkeypatch.setattr(train_session, "_num_gpus", lambda: 1)
    with pytest.raises(ValueError, match="train_config.mixed_precision: GPU float16 .* sync_replicas"):
        _train(records, tmp_path, "num_steps: 3 mixed_precision: true sync_replicas: true",
               deploy_config=model_deploy.DeploymentConfig())


@pytest.mark.parametrize("cpu_bfloat16", [True, False])
def test_cpu_bfloat16_gives_the_convolutions_the_product_filter_gradients(
        records, tmp_path, monkeypatch, cpu_bfloat16):
    monkeypatch.setattr(train_session, "cpu_bfloat16", lambda deploy, train: cpu_bfloat16)
    gradient_types = []

    class _Inspect(tf.train.SessionRunHook):
        def begin(self):
            gradient_types.extend(
                op.node_def.attr["_gradient_op_type"].s
                for op in tf.get_default_graph().get_operations() if op.type == "Conv2D")

    _train(records, tmp_path, "num_steps: 1", extra_hooks=[_Inspect()])
    expected = conv_gradients.GRADIENT_NAME.encode() if cpu_bfloat16 else b""
    assert gradient_types == [expected]
