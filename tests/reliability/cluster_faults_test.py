"""Reliability: cluster faults on 127.0.0.1 (ps + 2 async workers as real processes).

A worker SIGKILLed and restarted rejoins and the run finishes; a SIGKILLed ps stops the workers
with an error naming it within a bounded time (aster.utils.cluster.PsWatchdog) instead of hanging.
"""

import json
import socket
import threading
import types

import faults_cluster
import pytest

from aster import train, trainer
from aster.tf_setup import tf
from aster.utils import cluster

# --------------------------------------------------------------------------- end to end


@pytest.mark.slow
def test_async_worker_killed_and_restarted_rejoins_and_finishes(tmp_path):
    result = faults_cluster.worker_restart_run(str(tmp_path))
    assert result.failures == [] and result.held == result.tried == 1, result


@pytest.mark.slow
def test_killed_ps_stops_the_workers_with_an_error_naming_it(tmp_path):
    result = faults_cluster.ps_kill_run(str(tmp_path), lost_after_secs=5)
    assert result.failures == [] and result.held == result.tried == 2, result


# --------------------------------------------------------------------------- the watchdog


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def _watchdog(states, lost_after=10.0, train_dir="/nonexistent"):
    """A watchdog over two ps tasks whose probe answers from `states` (address -> reason)."""
    clock = _Clock()
    watchdog = cluster.PsWatchdog(["h:1", "h:2"], lost_after, train_dir, clock=clock,
                                probe=lambda address: states[address])
    return watchdog, clock


def test_ps_watchdog_reports_a_ps_down_for_the_deadline(tmp_path):
    states = {"h:1": None, "h:2": None}
    watchdog, clock = _watchdog(states, train_dir=str(tmp_path))
    assert watchdog.check() is None
    states["h:2"] = "Connection refused"
    clock.now = 1.0
    assert watchdog.check() is None
    clock.now = 10.5
    assert watchdog.check() is None
    clock.now = 11.0
    message = watchdog.check()
    assert message.startswith("lost ps task 1 (h:2): unreachable for 10 s (Connection refused)")
    assert message.endswith("The newest checkpoint is (none saved)")


def test_ps_watchdog_waits_for_a_ps_not_yet_started():
    watchdog, clock = _watchdog({"h:1": "Connection refused", "h:2": None}, lost_after=1.0)
    for clock.now in (0.0, 5.0, 500.0):
        assert watchdog.check() is None


def test_ps_watchdog_restarts_the_count_when_the_ps_comes_back():
    states = {"h:1": None, "h:2": None}
    watchdog, clock = _watchdog(states, lost_after=10.0)
    watchdog.check()
    states["h:1"] = "Connection refused"
    clock.now = 1.0
    watchdog.check()
    states["h:1"], clock.now = None, 8.0
    assert watchdog.check() is None
    states["h:1"], clock.now = "Connection refused", 9.0
    watchdog.check()
    clock.now = 18.0
    assert watchdog.check() is None
    clock.now = 19.0
    assert watchdog.check().startswith("lost ps task 0 (h:1)")


def test_ps_watchdog_thread_reports_a_closed_port_once():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    address = f"127.0.0.1:{listener.getsockname()[1]}"
    lost, called = [], threading.Event()
    watchdog = cluster.PsWatchdog([address], 0.2, "/nonexistent", poll_secs=0.05,
                                on_lost=lambda message: (lost.append(message), called.set()))
    watchdog.start()
    try:
        assert not called.wait(0.5)  # up: nothing reported
        listener.close()
        assert called.wait(10)
        watchdog.join(5)
        assert not watchdog.is_alive() and len(lost) == 1
        assert lost[0].startswith(f"lost ps task 0 ({address}): unreachable for")
    finally:
        watchdog.stop()
        listener.close()


# --------------------------------------------------------------------------- aster-train main


def _closed_port_address():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def _raise(error):
    def fail(*args, **kwargs):
        raise error
    return fail


def _main_with_failing_train(tmp_path, monkeypatch, error, tf_config):
    import trainer_helpers as helpers

    records = helpers.write_records(tmp_path / "train.tfrecord", count=4)
    path = helpers.write_config(tmp_path / "pipeline.config", helpers.pipeline_config(records))
    if tf_config:
        monkeypatch.setenv("TF_CONFIG", json.dumps(tf_config))
    else:
        monkeypatch.delenv("TF_CONFIG", raising=False)
    monkeypatch.setattr(cluster, "start_server", lambda info, config: types.SimpleNamespace(
        target="grpc://unused"))
    monkeypatch.setattr(trainer, "train", _raise(error))
    return train.main(["--pipeline_config_path", path, "--train_dir", str(tmp_path / "t")])


def test_main_cluster_error_exits_1_naming_the_ps_down(tmp_path, monkeypatch, capsys):
    ps = _closed_port_address()
    cluster = {"ps": [ps], "worker": [_closed_port_address()]}
    error = tf.errors.UnavailableError(None, None, "Socket closed\nAdditional GRPC error")
    code = _main_with_failing_train(tmp_path, monkeypatch, error,
                                    {"cluster": cluster, "task": {"type": "worker", "index": 0}})
    err = capsys.readouterr().err
    assert code == 1
    assert (f"aster-train: error: lost connection to ps task 0 ({ps}): UnavailableError: "
            "Socket closed; training stopped. The newest checkpoint is (none saved)") in err


def test_main_unavailable_error_of_a_local_run_is_raised(tmp_path, monkeypatch):
    error = tf.errors.UnavailableError(None, None, "local")
    with pytest.raises(tf.errors.UnavailableError):
        _main_with_failing_train(tmp_path, monkeypatch, error, None)
