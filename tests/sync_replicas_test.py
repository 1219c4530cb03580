"""Synchronous replicas: the chief's sync op runs no forward pass; each step averages N gradients.

Also the runner of the cluster test (the stand-in model plus a marker that counts batches):
    python tests/sync_replicas_test.py [aster-train flags]   (writes counts to $COUNTS_ENV)
"""

import dataclasses
import json
import os
import sys
import time

import numpy as np
import pytest
import train_test
import trainer_helpers as helpers

from aster import train, trainer
from aster.tf_setup import tf
from aster.utils import train_session

COUNTS_ENV = "ASTER_TEST_SYNC_COUNTS_DIR"
_SLOTS_PER_WORKER = 64  # marker entries per worker: more than the batches it can dequeue
_NUM_WORKERS = 2
_LEARNING_RATE = 0.01
_BATCH_SECS = 0.05  # each batch of the cluster test takes this long
# Plain gradient descent (momentum 0): a step moves each marker entry by exactly lr * gradient.
_OPTIMIZER = (f"momentum_optimizer {{ learning_rate {{ constant_learning_rate {{ learning_rate: "
              f"{_LEARNING_RATE} }} }} momentum_optimizer_value: 0.0 }} use_moving_average: false")
_INPUT_OPS = ("IteratorGetNext", "IteratorGetNextSync", "QueueDequeueV2", "QueueDequeueManyV2",
              "QueueDequeueUpToV2")


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    return helpers.write_records(tmp_path_factory.mktemp("data") / "train.tfrecord")


def _ancestors(ops):
    """Every op that running `ops` runs: through data inputs and control inputs."""
    seen, stack = set(), list(ops)
    while stack:
        op = stack.pop()
        if op not in seen:
            seen.add(op)
            stack.extend(t.op for t in op.inputs)
            stack.extend(op.control_inputs)
    return seen


def _loss_and_input_ops(graph):
    """The loss checks, the losses they check and the input ops those losses read."""
    checks = [op for op in graph.get_operations() if op.type == "CheckNumerics"]
    inputs = {op for op in _ancestors(checks) if op.type in _INPUT_OPS}
    return set(checks) | {op.inputs[0].op for op in checks}, inputs


class _GraphBuilt(Exception):
    pass


class _StopBeforeTheSession(tf.train.SessionRunHook):
    """Ends train() once its graph is built (a sync run's close waits out the queue runner)."""

    def begin(self):
        raise _GraphBuilt


def test_chief_sync_op_runs_neither_the_loss_nor_the_input(records, tmp_path, monkeypatch):
    built = []

    class _Recorded(tf.train.SyncReplicasOptimizer):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            built.append(self)

    monkeypatch.setattr(tf.train, "SyncReplicasOptimizer", _Recorded)
    config = helpers.pipeline_config(records, "sync_replicas: true replicas_to_aggregate: 1")
    with pytest.raises(_GraphBuilt):
        trainer.train(config, str(tmp_path), seams=trainer.Seams(
            build_model=helpers.build_standin, extra_hooks=[_StopBeforeTheSession()]))
    (optimizer,) = built
    chief_ops = optimizer.get_chief_queue_runner().enqueue_ops
    graph = chief_ops[0].graph
    losses, inputs = _loss_and_input_ops(graph)
    assert inputs and losses
    # The worker's step still computes its gradients behind the loss checks ...
    worker_step = _ancestors([graph.get_operation_by_name("train_op")])
    assert losses | inputs <= worker_step
    # ... while the chief's queue runner only aggregates and applies them.
    leaked = sorted(op.name for op in _ancestors(chief_ops) & (losses | inputs))
    assert not leaked, leaked


def test_a_replica_stops_after_the_run_that_reaches_the_last_step():
    """A synchronous replica's run can span several global steps: here each run adds three."""
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        jump = tf.assign_add(step, 3)
        runs = 0
        with tf.train.MonitoredSession(hooks=[train_session.ExactStopAtStepHook(last_step=6)]) as sess:
            while not sess.should_stop():
                sess.run(jump)
                runs += 1
    assert runs == 2  # tf.train.StopAtStepHook, which adds one to the step before the run: 3


# --------------------------------------------------------------------------- the cluster test


class _Batches:
    """Counts one worker's batches and names each one's marker slot (worker w: w * 64 + k).

    At its first batch a worker waits (bounded) until every worker has reached its first, and each
    batch takes a little time, so both workers' gradients meet in the steps.
    """

    def __init__(self, directory, task_index):
        self.count, self._directory, self._index = 0, directory, task_index

    def _started(self, index):
        return os.path.join(self._directory, f"started{index}")

    def next_slot(self):
        if self.count == 0:
            open(self._started(self._index), "w").close()
            deadline = time.time() + 60
            while (time.time() < deadline and
                   not all(os.path.exists(self._started(i)) for i in range(_NUM_WORKERS))):
                time.sleep(0.01)
        time.sleep(_BATCH_SECS)
        self.count += 1
        return np.int64(self._index * _SLOTS_PER_WORKER + self.count - 1)


class _MarkedModel(helpers.StandInModel):
    """The stand-in plus a marker: each batch adds `Marker/pushes[its slot]` to the loss.

    So the gradient of each batch is a one-hot on its own entry, and after training an entry is
    -lr / m when its gradient was averaged into a step with m gradients, 0 when it was never applied
    (stale, or still in flight at the end).
    """

    def __init__(self, is_training, batches):
        super().__init__(is_training)
        self._batches = batches

    def loss(self, predictions_dict, scope=None):
        losses = super().loss(predictions_dict, scope)
        slot = tf.py_func(self._batches.next_slot, [], tf.int64, stateful=True)
        with tf.variable_scope("Marker"):
            pushes = tf.get_variable("pushes", [_NUM_WORKERS * _SLOTS_PER_WORKER],
                                     initializer=tf.zeros_initializer())
        losses["Marker/loss"] = tf.reduce_sum(pushes * tf.one_hot(slot, pushes.shape[0]))
        return losses


class _RunCounter(tf.train.SessionRunHook):
    def __init__(self):
        self.runs = 0

    def after_run(self, run_context, run_values):
        self.runs += 1


def _run_marked(argv):
    """aster-train with the marked model; a worker writes {batches, runs} to $COUNTS_ENV."""
    task, directory = json.loads(os.environ["TF_CONFIG"])["task"], os.environ[COUNTS_ENV]
    batches, counter = _Batches(directory, task["index"]), _RunCounter()
    real_train = trainer.train

    def train_counting_runs(*args, seams=None, **kwargs):
        seams = dataclasses.replace(seams or trainer.Seams(), extra_hooks=[counter])
        return real_train(*args, seams=seams, **kwargs)

    trainer.train = train_counting_runs
    code = train.main(argv, build_model=lambda config, is_training: _MarkedModel(is_training,
                                                                                 batches))
    if task["type"] == "worker":
        with open(os.path.join(directory, f"worker{task['index']}.json"), "w") as f:
            json.dump({"batches": batches.count, "runs": counter.runs}, f)
    return code


@pytest.mark.slow
def test_two_sync_workers_average_two_gradients_per_step_one_batch_each(
        tmp_path, records, monkeypatch):
    """Two observables, exact whatever the timing:

    - per worker, the batches it dequeued (its marker counter) against the train steps it ran (a
      hook): equal, or one more for a step cut off at the end, so the chief's sync op takes none
      (before the fix the chief's queue runner dequeued a batch for every global step);
    - the marker (see _MarkedModel): every applied entry is -lr / 2, so each step averaged exactly
      replicas_to_aggregate = 2 gradients, two entries per global step, from both workers.
    """
    path = train_test._config_file(tmp_path, records, (
        "num_steps: 6 worker_recovery_wait_secs: 1 operation_timeout_ms: 5000 "
        "save_summaries_steps: 0 log_every_n_steps: 1 sync_replicas: true "
        "replicas_to_aggregate: 2"), optimizer=_OPTIMIZER)
    train_dir = tmp_path / "train"
    ports = train_test._free_ports(_NUM_WORKERS + 1)
    cluster = {"ps": [f"127.0.0.1:{ports[0]}"],
               "worker": [f"127.0.0.1:{port}" for port in ports[1:]]}
    monkeypatch.setattr(train_test, "RUNNER", os.path.abspath(__file__))
    monkeypatch.setenv(COUNTS_ENV, str(tmp_path))
    args = ["--pipeline_config_path", path, "--train_dir", str(train_dir)]
    with train_test._cluster_processes(args, cluster, tmp_path) as processes:
        deadline = time.time() + 120
        for process in processes.values():
            process.wait(timeout=max(1.0, deadline - time.time()))
        codes = {name: p.returncode for name, p in processes.items()}
    logs = {name: (tmp_path / f"{name}.log").read_text() for name in processes}
    assert codes == {"ps0": 0, "worker0": 0, "worker1": 0}, logs

    for index in range(_NUM_WORKERS):
        counts = json.loads((tmp_path / f"worker{index}.json").read_text())
        assert 0 <= counts["batches"] - counts["runs"] <= 1, (index, counts)
        assert counts["batches"] < _SLOTS_PER_WORKER, counts

    reader = tf.train.load_checkpoint(tf.train.latest_checkpoint(str(train_dir)))
    step = int(reader.get_tensor("global_step"))
    pushes = reader.get_tensor("Marker/pushes").reshape(_NUM_WORKERS, _SLOTS_PER_WORKER)
    applied = pushes[pushes != 0]
    np.testing.assert_allclose(applied, -np.float32(_LEARNING_RATE) / 2, rtol=1e-5)
    # A step may finish while the final checkpoint is written (the global step is incremented
    # after the variables), so its two gradients can be in without its step.
    assert step >= 6 and 2 * step <= applied.size <= 2 * (step + 1), (step, pushes)
    assert np.all(np.any(pushes != 0, axis=1)), pushes  # both workers' gradients were applied

if __name__ == "__main__":
    sys.exit(_run_marked(sys.argv[1:]))
