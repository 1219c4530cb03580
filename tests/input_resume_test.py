"""A seeded training run stopped and resumed: its input goes on with new batches, reproducibly.

What the trainer tests control: the order of the records in the batches (the transcripts each
step trains on), read from two files interleaved in parallel with a parallel decode (tf.data keeps
both deterministic). Random augmentation draws and the model's initialization are not seeded by
shuffle_seed, so the test uses none and looks only at the transcripts.
"""

import input_fixtures as fx
import numpy as np
import pytest
import trainer_helpers as helpers

from aster import trainer
from aster.builders import input_reader_builder
from aster.protos import input_reader_pb2
from aster.tf_setup import tf
from aster.utils import train_session


def test_resume_seed_is_the_seed_at_step_zero_and_a_mix_after():
    assert input_reader_builder.resume_seed(7, 0) == 7
    assert input_reader_builder.resume_seed(0, 300) == 0  # unseeded stays unseeded
    seeds = {input_reader_builder.resume_seed(7, step) for step in (1, 2, 300)}
    assert len(seeds) == 3 and 7 not in seeds and 0 not in seeds
    assert all(0 < s < 2**32 for s in seeds)
    assert input_reader_builder.resume_seed(7, 300) == input_reader_builder.resume_seed(7, 300)
    assert input_reader_builder.resume_seed(7, 300) != input_reader_builder.resume_seed(8, 300)


def test_resumed_readers_reseed_copies_of_the_seeded_readers_only():
    seeded = input_reader_pb2.InputReader(shuffle_seed=7)
    unseeded = input_reader_pb2.InputReader(num_readers=2)
    copies = input_reader_builder.resumed_readers([seeded, unseeded], 5)
    assert copies[0].shuffle_seed == input_reader_builder.resume_seed(7, 5)
    assert seeded.shuffle_seed == 7  # the config (and the saved pipeline.config) keeps its seed
    assert copies[1] == unseeded and not copies[1].HasField("shuffle_seed")


def _save_checkpoint(directory, with_global_step):
    with tf.Graph().as_default():
        if with_global_step:
            tf.train.get_or_create_global_step()
        tf.get_variable("w", [1])
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            if with_global_step:
                session.run(tf.assign(tf.train.get_global_step(), 7))
            tf.train.Saver().save(session, str(directory / "model.ckpt"), global_step=5)


def test_restored_step_is_the_newest_checkpoints_global_step(tmp_path, caplog):
    assert train_session.restored_step(str(tmp_path)) == 0
    _save_checkpoint(tmp_path / "ok", with_global_step=True)
    assert train_session.restored_step(str(tmp_path / "ok")) == 7  # the variable, not the name
    _save_checkpoint(tmp_path / "other", with_global_step=False)
    assert train_session.restored_step(str(tmp_path / "other")) == 0
    assert "cannot read the global step" in caplog.text


class _RecordingModel(helpers.StandInModel):
    """The stand-in model, appending each training step's transcripts to `seen`."""

    seen = []

    def loss(self, predictions_dict, scope=None):
        def record(texts):
            self.seen.append(tuple(t.decode() for t in texts))
            return np.int64(0)

        recorded = tf.py_func(record, [self.groundtruth()["text"]], tf.int64)
        losses = super().loss(predictions_dict, scope)
        with tf.control_dependencies([recorded]):
            return {name: tf.identity(loss) for name, loss in losses.items()}


@pytest.fixture(scope="module")
def two_files(tmp_path_factory):
    directory = tmp_path_factory.mktemp("data")
    fx.write_records(directory / "part-0.tfrecord", fx.word_records("a", 24))
    fx.write_records(directory / "part-1.tfrecord", fx.word_records("b", 24, start=24))
    return str(directory / "part-*.tfrecord")


def _train(records, train_dir, num_steps, monkeypatch):
    """Trains (or resumes) to num_steps; returns the transcript batches of this run's steps."""
    config = helpers.pipeline_config(records, extra_train="num_batch_queue_threads: 2")
    config.train_config.num_steps = num_steps
    reader = config.train_input_reader[0]
    reader.shuffle, reader.shuffle_seed, reader.queue_capacity, reader.num_readers = True, 7, 64, 2
    seen = []
    monkeypatch.setattr(_RecordingModel, "seen", seen)
    trainer.train(config, str(train_dir), seams=trainer.Seams(
        build_model=lambda model_config, is_training: _RecordingModel(is_training)))
    return seen


@pytest.mark.slow
def test_seeded_run_resumed_sees_new_batches_and_the_same_ones_every_time(
        two_files, tmp_path, monkeypatch):
    first = _train(two_files, tmp_path / "a", 3, monkeypatch)
    resumed = _train(two_files, tmp_path / "a", 6, monkeypatch)
    assert len(first) == len(resumed) == 3
    assert not set(first) & set(resumed), "the resumed run replayed batches of its start"
    again = _train(two_files, tmp_path / "b", 3, monkeypatch)
    again += _train(two_files, tmp_path / "b", 6, monkeypatch)
    assert again == first + resumed
