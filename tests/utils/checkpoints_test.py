"""Tests for aster/utils/checkpoints.py: which checkpoint a path or name means (resolve, newest),
and the checkpoint loop."""

import logging
import os

import numpy as np
import pytest

from aster import pretrained
from aster.tf_setup import tf
from aster.utils import checkpoints, cluster, hooks, train_session


def _touch_checkpoint(directory, step, prefix="model.ckpt", shards=1, index=True):
    path = os.path.join(directory, f"{prefix}-{step}")
    for i in range(shards):
        open(f"{path}.data-{i:05d}-of-{shards:05d}", "w").close()
    if index:
        open(f"{path}.index", "w").close()
    return path


def _delete_checkpoint(path):
    for name in os.listdir(os.path.dirname(path)):
        if name.startswith(os.path.basename(path) + "."):
            os.remove(os.path.join(os.path.dirname(path), name))


def test_checkpoint_step_parses_prefix_and_index_names():
    assert checkpoints.checkpoint_step("/a/model.ckpt-1200") == 1200
    assert checkpoints.checkpoint_step("/a/model.ckpt-7.index") == 7


def test_checkpoint_step_without_step_raises():
    with pytest.raises(ValueError, match="does not end in -<global step>"):
        checkpoints.checkpoint_step("/a/model.ckpt")


def test_list_checkpoints_sorted_by_step_and_only_complete(tmp_path):
    d = str(tmp_path)
    _touch_checkpoint(d, 100)
    _touch_checkpoint(d, 20)
    _touch_checkpoint(d, 3, shards=2)
    _touch_checkpoint(d, 50, index=False)  # being written: no index yet
    partial = _touch_checkpoint(d, 60, shards=2)
    os.remove(partial + ".data-00001-of-00002")  # a shard missing
    os.makedirs(os.path.join(d, "model.ckpt-70_temp"))
    steps = [c.step for c in checkpoints.list_checkpoints(d)]
    assert steps == [3, 20, 100]
    assert checkpoints.newest(d).path == os.path.join(d, "model.ckpt-100")


def test_newest_of_an_empty_or_missing_folder_is_none(tmp_path):
    assert checkpoints.newest(str(tmp_path)) is None
    assert checkpoints.newest(str(tmp_path / "missing")) is None


def test_newest_never_picks_a_half_written_checkpoint(tmp_path):
    """A Saver killed while writing step 30 leaves its data shard without an index, or only a
    temporary file; the newest complete one is step 20. A leftover temporary shard beside a
    complete checkpoint does not hide it."""
    d = str(tmp_path)
    _touch_checkpoint(d, 20)
    _touch_checkpoint(d, 30, index=False)
    open(os.path.join(d, "model.ckpt-40.index.tempstate123"), "w").close()
    open(os.path.join(d, "model.ckpt-20.data-00000-of-00001.tempstate9"), "w").close()
    assert checkpoints.newest(d) == checkpoints.Checkpoint(20, os.path.join(d, "model.ckpt-20"))
    assert checkpoints.resolve(d) == os.path.join(d, "model.ckpt-20")


class _FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, secs):
        self.now += secs


def test_checkpoint_loop_evaluates_backlog_in_order_without_skipping(tmp_path):
    d = str(tmp_path)
    for step in (30, 10, 20):
        _touch_checkpoint(d, step)
    seen = []
    clock = _FakeClock()
    done = checkpoints.checkpoint_loop(d, lambda c: seen.append(c.step), poll_secs=5,
                                     timeout_secs=20, sleep=clock.sleep, clock=clock)
    assert seen == [10, 20, 30]
    assert [c.step for c in done] == [10, 20, 30]


def test_checkpoint_loop_picks_up_checkpoints_written_while_polling(tmp_path):
    d = str(tmp_path)
    to_write = [5, 6, 7]
    clock = _FakeClock()

    def sleep(secs):
        clock.sleep(secs)
        if to_write:
            _touch_checkpoint(d, to_write.pop(0))

    seen = []
    checkpoints.checkpoint_loop(d, lambda c: seen.append(c.step), poll_secs=1, timeout_secs=10,
                              sleep=sleep, clock=clock)
    assert seen == [5, 6, 7]


def test_checkpoint_loop_skips_checkpoint_deleted_before_its_turn(tmp_path, caplog):
    d = str(tmp_path)
    paths = [_touch_checkpoint(d, step) for step in (1, 2, 3)]
    seen = []

    def evaluate(ckpt):
        seen.append(ckpt.step)
        if ckpt.step == 1:
            _delete_checkpoint(paths[1])

    clock = _FakeClock()
    with caplog.at_level(logging.WARNING, logger="aster.utils.checkpoints"):
        checkpoints.checkpoint_loop(d, evaluate, poll_secs=1, timeout_secs=3, sleep=clock.sleep,
                                  clock=clock)
    assert seen == [1, 3]
    assert any("model.ckpt-2 was deleted before its turn" in r.getMessage()
               for r in caplog.records)


def test_checkpoint_loop_moves_on_when_checkpoint_becomes_unavailable(tmp_path, caplog):
    d = str(tmp_path)
    for step in (1, 2):
        _touch_checkpoint(d, step)
    seen = []

    def evaluate(ckpt):
        if ckpt.step == 1:
            raise checkpoints.CheckpointUnavailableError("gone")
        seen.append(ckpt.step)

    clock = _FakeClock()
    with caplog.at_level(logging.WARNING, logger="aster.utils.checkpoints"):
        done = checkpoints.checkpoint_loop(d, evaluate, poll_secs=1, timeout_secs=3,
                                         sleep=clock.sleep, clock=clock)
    assert seen == [2] and [c.step for c in done] == [2]
    assert any("became unavailable" in r.getMessage() for r in caplog.records)


def test_checkpoint_loop_stops_at_max_evals_and_final_step(tmp_path):
    d = str(tmp_path)
    for step in (1, 2, 3, 4):
        _touch_checkpoint(d, step)
    seen = []
    checkpoints.checkpoint_loop(d, lambda c: seen.append(c.step), max_evals=2,
                              sleep=pytest.fail)
    assert seen == [1, 2]
    seen.clear()
    checkpoints.checkpoint_loop(d, lambda c: seen.append(c.step), final_step=3, sleep=pytest.fail)
    assert seen == [1, 2, 3]


def test_checkpoint_loop_timeout_counts_from_the_last_new_checkpoint(tmp_path):
    clock = _FakeClock()
    done = checkpoints.checkpoint_loop(str(tmp_path), pytest.fail, poll_secs=2, timeout_secs=7,
                                     sleep=clock.sleep, clock=clock)
    assert done == [] and clock.now == 8


def test_checkpoint_loop_other_errors_propagate(tmp_path):
    _touch_checkpoint(str(tmp_path), 1)

    def evaluate(ckpt):
        raise ValueError("model config does not match")

    with pytest.raises(ValueError, match="does not match"):
        checkpoints.checkpoint_loop(str(tmp_path), evaluate, sleep=pytest.fail)


# --------------------------------------------------------------------------- resolve


def test_resolve_takes_a_prefix_its_index_file_or_a_folder_s_newest(tmp_path):
    d = str(tmp_path)
    for step in (3, 12):
        _touch_checkpoint(d, step)
    assert checkpoints.resolve(d) == os.path.join(d, "model.ckpt-12")
    three = os.path.join(d, "model.ckpt-3")
    assert checkpoints.resolve(three) == three
    assert checkpoints.resolve(three + ".index") == three


def test_resolve_takes_a_shipped_model_s_name(tmp_path, monkeypatch):
    models = tmp_path / "models"
    os.makedirs(models / "tiny_model")
    _touch_checkpoint(str(models / "tiny_model"), 7)
    (models / "tiny_model" / "pipeline.config").write_text("")
    monkeypatch.setattr(pretrained, "MODELS_DIR", str(models))
    monkeypatch.chdir(tmp_path)
    assert checkpoints.resolve("tiny_model") == str(models / "tiny_model" / "model.ckpt-7")


def test_resolve_the_real_shipped_model_by_name():
    assert checkpoints.resolve(pretrained.DEFAULT_MODEL) == pretrained.model_files()[0]


def test_resolve_a_damaged_shipped_model_names_the_file(tmp_path, monkeypatch):
    os.makedirs(tmp_path / "models" / "broken")
    _touch_checkpoint(str(tmp_path / "models" / "broken"), 7)
    monkeypatch.setattr(pretrained, "MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(pretrained.ModelFolderError, match=r"broken/pipeline.config: missing"):
        checkpoints.resolve("broken")


def test_resolve_an_unknown_name_lists_the_shipped_models(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError) as error:
        checkpoints.resolve("aster_bsae", "--checkpoint_path")
    message = str(error.value)
    assert message.startswith("--checkpoint_path 'aster_bsae': no checkpoint, folder or shipped "
                              "model of that name")
    assert "aster_bsae.index" in message and f"shipped models: {pretrained.DEFAULT_MODEL})" in message
    monkeypatch.setattr(pretrained, "MODELS_DIR", str(tmp_path / "no_models"))
    with pytest.raises(ValueError, match=r"no model is shipped\)$"):
        checkpoints.resolve("aster_base")


def test_resolve_an_empty_folder_says_what_it_looked_for(tmp_path):
    os.makedirs(tmp_path / "empty")
    _touch_checkpoint(str(tmp_path / "empty"), 5, index=False)  # half-written: does not count
    with pytest.raises(ValueError, match=r"^train_config.fine_tune_checkpoint '.*empty': no "
                                         r"complete checkpoint in this folder \(looked for a "
                                         r"<prefix>-<step>.index file"):
        checkpoints.resolve(str(tmp_path / "empty"), "train_config.fine_tune_checkpoint")


def test_resolve_a_folder_of_a_checkpoint_without_a_step_names_its_prefix(tmp_path):
    d = str(tmp_path)
    for suffix in (".index", ".data-00000-of-00001"):
        open(os.path.join(d, f"resnet.ckpt{suffix}"), "w").close()
    with pytest.raises(ValueError, match=r"resnet.ckpt has no step in its name: give its prefix, "
                                         r".*/resnet.ckpt$"):
        checkpoints.resolve(d)
    assert checkpoints.resolve(os.path.join(d, "resnet.ckpt")) == os.path.join(d, "resnet.ckpt")


def test_resolve_an_incomplete_checkpoint_names_the_missing_file(tmp_path):
    d = str(tmp_path)
    half = _touch_checkpoint(d, 9, shards=2)
    os.remove(half + ".data-00001-of-00002")
    with pytest.raises(ValueError, match=r"incomplete checkpoint, .*model.ckpt-9.data-00001-of-"
                                         r"00002 is missing"):
        checkpoints.resolve(half)
    unindexed = _touch_checkpoint(d, 10, index=False)
    with pytest.raises(ValueError, match=r"model.ckpt-10.index is missing"):
        checkpoints.resolve(unindexed)


def test_resolve_an_empty_value_raises():
    with pytest.raises(ValueError, match=r"--checkpoint_path is empty: give a checkpoint prefix"):
        checkpoints.resolve("", "--checkpoint_path")


# --------------------------------------------------------------------------- one meaning


def _save_real_checkpoints(directory, steps):
    """Saves model.ckpt-<step> for each step (global_step = step, w = step); returns the paths."""
    paths = []
    with tf.Graph().as_default():
        global_step = tf.train.get_or_create_global_step()
        w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
        saver = tf.train.Saver()
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            for step in steps:
                session.run([tf.assign(global_step, step), tf.assign(w, float(step))])
                paths.append(saver.save(session, os.path.join(directory, "model.ckpt"),
                                        global_step=step, write_meta_graph=False))
    return paths


class _FailingSaver:
    def save(self, *args, **kwargs):
        raise tf.errors.ResourceExhaustedError(None, None, "No space left on device")


def test_every_user_agrees_on_the_folder_s_newest_when_the_state_file_lags(tmp_path):
    """The `checkpoint` state file names step 10 (a chief killed before updating it, a copied
    run); the folder holds a complete step 20: resolving, the input seeding, the restore, the
    fine-tune source and the error messages all name step 20."""
    d = str(tmp_path)
    ten, twenty = _save_real_checkpoints(d, [10, 20])
    tf.train.update_checkpoint_state(d, ten, all_model_checkpoint_paths=[ten])
    assert tf.train.latest_checkpoint(d) == ten  # what the state file says
    assert checkpoints.newest(d).path == twenty
    assert checkpoints.resolve(d) == twenty
    assert train_session.restored_step(d) == 20
    with tf.Graph().as_default():
        tf.train.get_or_create_global_step()
        saver = tf.train.Saver([tf.get_variable("w", [])])
        assert train_session.resume_checkpoint(saver, d) == twenty
    with pytest.raises(hooks.CheckpointWriteError, match=f"checkpoint is {twenty}$"):
        hooks.CheckpointHook(d, _FailingSaver())._save(None, 21)
    answers, clock = [None, "refused", "refused"], _FakeClock()  # up, then lost for 5 s
    watchdog = cluster.PsWatchdog(["h:1"], 5.0, d, probe=lambda address: answers.pop(0),
                                  clock=clock)
    assert watchdog.check() is None and watchdog.check() is None
    clock.now = 5.0
    assert watchdog.check().endswith(f"The newest checkpoint is {twenty}")


def _session_value(checkpoint_path):
    """w after the chief's session creator restores `checkpoint_path`."""
    with tf.Graph().as_default():
        tf.train.get_or_create_global_step()
        w = tf.get_variable("w", [], initializer=tf.constant_initializer(-1.0))
        creator = train_session.session_creator(tf.train.Scaffold(), "", True, checkpoint_path,
                                                None, None)
        with tf.train.MonitoredSession(session_creator=creator) as session:
            return session.run(w)


def test_the_session_creator_restores_exactly_the_path_it_is_given(tmp_path):
    d = str(tmp_path)
    ten, twenty = _save_real_checkpoints(d, [10, 20])
    tf.train.update_checkpoint_state(d, ten, all_model_checkpoint_paths=[ten])
    assert _session_value(twenty) == 20.0  # not the state file's step 10
    assert _session_value(ten) == 10.0  # not looked up again: the folder's newest is 20
    assert _session_value(None) == -1.0  # a new run initializes


def test_resume_tells_the_saver_of_the_newest_max_to_keep_checkpoints(tmp_path):
    """A resumed run deletes the checkpoints before it in turn (max_to_keep), as it did when the
    session restored through the state file."""
    d = str(tmp_path)
    paths = _save_real_checkpoints(d, [1, 2, 3])
    os.remove(os.path.join(d, "checkpoint"))  # a copied run without its state file
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        saver = tf.train.Saver(max_to_keep=2)
        assert train_session.resume_checkpoint(saver, d) == paths[2]
        assert saver.last_checkpoints == paths[1:]
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            session.run(tf.assign(step, 4))
            saver.save(session, os.path.join(d, "model.ckpt"), global_step=4,
                       write_meta_graph=False)
    assert [c.step for c in checkpoints.list_checkpoints(d)] == [1, 3, 4]


def _saved(path, value, dtype):
    """A checkpoint of one variable `w` of `dtype` holding `value`; returns its prefix."""
    with tf.Graph().as_default():
        w = tf.get_variable("w", initializer=tf.constant(value, dtype))
        with tf.Session() as session:
            session.run(w.initializer)
            return tf.train.Saver([w]).save(session, path, write_meta_graph=False)


def test_float16_weights_are_restored_cast_into_float32_variables(tmp_path):
    value = [0.1, -2.5, 3.0e-3]
    path = _saved(str(tmp_path / "half"), value, tf.float16)
    with tf.Graph().as_default():
        w = tf.get_variable("w", [3], tf.float32)
        saver = checkpoints.make_saver([w], path, use_moving_averages=False)
        assert isinstance(saver, checkpoints.CastingSaver)
        tf.get_default_graph().finalize()  # the restore ops exist before a session starts
        with tf.Session() as session:
            checkpoints.restore(session, saver, path)
            restored = session.run(w)
    assert restored.dtype == "float32"
    np.testing.assert_array_equal(restored, np.float16(value).astype(np.float32))
    # The same dtype keeps TensorFlow's own Saver.
    path32 = _saved(str(tmp_path / "full"), value, tf.float32)
    with tf.Graph().as_default():
        w = tf.get_variable("w", [3], tf.float32)
        assert isinstance(checkpoints.make_saver([w], path32, False), tf.train.Saver)


def test_a_variable_stored_as_integers_is_refused_naming_it(tmp_path):
    path = _saved(str(tmp_path / "ints"), [1, 2, 3], tf.int32)
    with tf.Graph().as_default():
        w = tf.get_variable("w", [3], tf.float32)
        with pytest.raises(ValueError, match=r"another dtype: w \(int32, the model's float32\)"):
            checkpoints.make_saver([w], path, False)


def test_a_float16_checkpoint_that_vanished_is_unavailable(tmp_path):
    path = _saved(str(tmp_path / "half"), [1.0], tf.float16)
    with tf.Graph().as_default():
        w = tf.get_variable("w", [1], tf.float32)
        saver = checkpoints.make_saver([w], path, False)
        for f in os.listdir(tmp_path):
            if f.startswith("half.data"):
                os.remove(tmp_path / f)
        with tf.Session() as session, pytest.raises(checkpoints.CheckpointUnavailableError):
            checkpoints.restore(session, saver, path)
