"""aster-train (aster.train.main): flags, TF_CONFIG, resume after SIGKILL, ps/worker cluster."""

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest
import trainer_helpers as helpers

from aster import train, trainer
from aster.tf_setup import tf
from aster.utils import config_util
from aster.utils.cluster import LOCAL, parse_tf_config

RUNNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trainer_helpers.py")


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    return helpers.write_records(tmp_path_factory.mktemp("data") / "train.tfrecord")


def _config_file(tmp_path, records, extra_train="", optimizer=None):
    config = helpers.pipeline_config(records, extra_train=extra_train, optimizer=optimizer)
    return helpers.write_config(tmp_path / "pipeline_in.config", config)


def _run(args, env=None, timeout=120):
    """Runs the stand-in aster-train in a subprocess; returns the CompletedProcess."""
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", **(env or {}))
    return subprocess.run([sys.executable, RUNNER, *args], env=environment, capture_output=True,
                          text=True, timeout=timeout, check=False)


# --------------------------------------------------------------------------- TF_CONFIG


def _tf_config(cluster, task_type, index):
    return json.dumps({"cluster": cluster, "task": {"type": task_type, "index": index}})


def test_parse_tf_config_local_when_absent():
    assert parse_tf_config(None) == LOCAL
    assert parse_tf_config(json.dumps({"task": {"type": "worker"}})) == LOCAL


def test_parse_tf_config_workers_only_worker0_is_chief():
    cluster = {"ps": ["a:1", "b:1"], "worker": ["c:1", "d:1"]}
    info = parse_tf_config(_tf_config(cluster, "worker", 1))
    assert (info.is_chief, info.num_replicas, info.replica_id, info.num_ps_tasks) == (
        False, 2, 1, 2)
    assert parse_tf_config(_tf_config(cluster, "worker", 0)).is_chief


@pytest.mark.parametrize("chief_job", ["chief", "master"])
def test_parse_tf_config_with_chief_job(chief_job):
    cluster = {"ps": ["a:1"], chief_job: ["b:1"], "worker": ["c:1", "d:1"]}
    chief = parse_tf_config(_tf_config(cluster, chief_job, 0))
    worker = parse_tf_config(_tf_config(cluster, "worker", 1))
    assert chief.is_chief and chief.replica_id == 0 and chief.num_replicas == 3
    assert not worker.is_chief and worker.replica_id == 2 and worker.task_index == 1


@pytest.mark.parametrize("text,match", [
    ("{not json", "not valid JSON"),
    (_tf_config({"worker": ["a:1"]}, "ps", 0), "is not a job of the cluster"),
    (_tf_config({"worker": ["a:1"]}, "worker", 1), "out of range"),
    (_tf_config({"chief": ["a:1"], "master": ["b:1"]}, "chief", 0), "both a 'chief' and"),
    (_tf_config({"evaluator": ["a:1"], "worker": ["b:1"]}, "evaluator", 0), "not run by"),
    (_tf_config({"ps": ["a:1"]}, "ps", 0), "no worker"),
])
def test_parse_tf_config_rejects_bad_values(text, match):
    with pytest.raises(ValueError, match=match):
        parse_tf_config(text)


# --------------------------------------------------------------------------- main


def test_main_rejects_a_bad_config(tmp_path, capsys):
    path = tmp_path / "bad.config"
    path.write_text("train_config { num_stepz: 3 }")
    assert train.main(["--pipeline_config_path", str(path), "--train_dir", str(tmp_path)]) == 2
    assert "num_stepz" in capsys.readouterr().err


def test_main_rejects_bad_clone_count(tmp_path, records, capsys):
    path = _config_file(tmp_path, records)
    code = train.main(["--pipeline_config_path", path, "--train_dir", str(tmp_path / "t"),
                       "--num_clones", "0"], build_model=helpers.build_standin)
    assert code == 2 and "num_clones" in capsys.readouterr().err


def test_main_trains_with_overrides_and_clones(tmp_path, records):
    path = _config_file(tmp_path, records)
    train_dir = tmp_path / "train"
    code = train.main(["--pipeline_config_path", path, "--train_dir", str(train_dir),
                       "--set", "train_config.num_steps=2",
                       "--config_override", "train_config { log_every_n_steps: 1 }",
                       "--num_clones", "2", "--clone_on_cpu"], build_model=helpers.build_standin)
    assert code == 0
    written = config_util.load_pipeline_config(str(train_dir / "pipeline.config"))
    assert written.train_config.num_steps == 2 and written.train_config.log_every_n_steps == 1
    assert tf.train.latest_checkpoint(str(train_dir)).endswith("model.ckpt-2")


def test_main_nan_loss_exits_1_with_the_loss_name(tmp_path, records, capsys):
    exploding = ("momentum_optimizer { learning_rate { constant_learning_rate { learning_rate: "
                 "1e30 } } momentum_optimizer_value: 0.9 } use_moving_average: false")
    path = _config_file(tmp_path, records, "num_steps: 50", optimizer=exploding)
    code = train.main(["--pipeline_config_path", path, "--train_dir", str(tmp_path / "t")],
                      build_model=helpers.build_standin)
    err = capsys.readouterr().err
    assert code == 1 and "StandIn/" in err and "NaN or Inf" in err and "model.ckpt-0" in err


# --------------------------------------------------------------------------- resume


class _CaptureAtRestore(tf.train.SessionRunHook):
    """Reads every global variable right after the session is created (restored)."""

    def __init__(self):
        self.values = None

    def after_create_session(self, session, coord):
        variables = tf.global_variables()
        self.values = dict(zip([v.op.name for v in variables], session.run(variables),
                               strict=True))


@pytest.mark.slow
def test_resume_after_sigkill_restores_step_weights_slots_and_averages(tmp_path, records):
    adam = ("adam_optimizer { learning_rate { constant_learning_rate { learning_rate: 0.01 } } } "
            "moving_average_decay: 0.9")
    path = _config_file(tmp_path, records, "num_steps: 6 save_checkpoint_steps: 3",
                        optimizer=adam)
    train_dir = tmp_path / "train"
    killed = _run(["--pipeline_config_path", path, "--train_dir", str(train_dir)],
                  env={helpers.KILL_ENV: "4"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    newest = tf.train.latest_checkpoint(str(train_dir))
    assert newest.endswith("model.ckpt-3")
    saved = {n: tf.train.load_checkpoint(newest).get_tensor(n)
             for n, _ in tf.train.list_variables(newest)}
    assert any(n.endswith("/Adam") for n in saved)
    assert any(n.endswith("/ExponentialMovingAverage") for n in saved)

    capture = _CaptureAtRestore()
    config = config_util.load_pipeline_config(str(train_dir / "pipeline.config"))
    trainer.train(config, str(train_dir), seams=trainer.Seams(
        build_model=helpers.build_standin, extra_hooks=[capture]))
    assert capture.values["global_step"] == 3
    assert set(saved) == set(capture.values)
    for name, value in saved.items():
        np.testing.assert_array_equal(capture.values[name], value, err_msg=name)
    assert tf.train.latest_checkpoint(str(train_dir)).endswith("model.ckpt-6")


# --------------------------------------------------------------------------- cluster


def _free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


@contextlib.contextmanager
def _cluster_processes(args, cluster, log_dir):
    """Starts one process per task of the cluster; kills any still running on exit."""
    processes = {}
    try:
        for job, addresses in cluster.items():
            for index in range(len(addresses)):
                env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2",
                           TF_CONFIG=_tf_config(cluster, job, index))
                log = open(log_dir / f"{job}{index}.log", "w")  # noqa: SIM115
                processes[f"{job}{index}"] = subprocess.Popen(
                    [sys.executable, RUNNER, *args], env=env, stdout=log,
                    stderr=subprocess.STDOUT)
                log.close()
        yield processes
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.kill()
                process.wait()


@pytest.mark.slow
@pytest.mark.parametrize("sync", [False, True])
def test_ps_and_two_workers_train_and_exit(tmp_path, records, sync):
    extra = ("num_steps: 6 worker_recovery_wait_secs: 1 operation_timeout_ms: 5000 "
             "save_summaries_steps: 0 log_every_n_steps: 1")
    if sync:
        extra += " sync_replicas: true replicas_to_aggregate: 2"
    path = _config_file(tmp_path, records, extra)
    train_dir = tmp_path / "train"
    ports = _free_ports(3)
    cluster = {"ps": [f"127.0.0.1:{ports[0]}"],
               "worker": [f"127.0.0.1:{ports[1]}", f"127.0.0.1:{ports[2]}"]}
    args = ["--pipeline_config_path", path, "--train_dir", str(train_dir)]
    with _cluster_processes(args, cluster, tmp_path) as processes:
        deadline = time.time() + 150
        for process in processes.values():
            process.wait(timeout=max(1.0, deadline - time.time()))
        codes = {name: p.returncode for name, p in processes.items()}
    logs = {name: (tmp_path / f"{name}.log").read_text() for name in processes}
    assert codes == {"ps0": 0, "worker0": 0, "worker1": 0}, logs
    newest = tf.train.latest_checkpoint(str(train_dir))
    step = tf.train.load_checkpoint(newest).get_tensor("global_step")
    assert 6 <= step <= 8, step  # async workers may each finish a step in flight
    assert "saved checkpoint" in logs["worker0"] and "saved checkpoint" not in logs["worker1"]
    assert "training stopped" in logs["worker1"]


# --------------------------------------------------------------------------- the real model


@pytest.mark.slow
def test_aster_train_on_tiny_config_writes_everything(tmp_path):
    records = helpers.write_records(tmp_path / "train.tfrecord", count=32)
    train_dir = tmp_path / "train"
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run(
        [sys.executable, "-m", "aster.train", "--pipeline_config_path", helpers.TINY_CONFIG,
         "--train_dir", str(train_dir),
         "--set", f"train_input_reader[0].tf_record_input_reader.input_path={records}",
         "--set", "train_config.num_steps=4", "--set", "train_config.save_summaries_steps=2",
         "--set", "train_config.profile_at_step=2", "--set", "train_config.log_every_n_steps=1"],
        env=environment, capture_output=True, text=True, timeout=240, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    assert tf.train.latest_checkpoint(str(train_dir)).endswith("model.ckpt-4")
    written = config_util.load_pipeline_config(str(train_dir / "pipeline.config"))
    assert written.train_config.num_steps == 4
    assert list((train_dir).glob("timeline-*.json"))
    tags = set()
    for path in train_dir.glob("events.out.tfevents.*"):
        for event in tf.train.summary_iterator(str(path)):
            tags.update(value.tag.split("/image/")[0] for value in event.summary.value)
    assert {"losses/Forward/loss", "losses/Backward/loss", "losses/total_loss", "LearningRate",
            "global_norm/gradients", "global_norm/parameters", "global_norm/updates",
            "input/dropped_undecodable", "images/input_with_control_points",
            "images/rectified"} <= tags
    assert "trainable parameters" in result.stderr and "images/s" in result.stderr

