"""Tests for aster/serve/batching.py: the worker thread that batches pending images."""

import concurrent.futures
import threading
import time

import pytest
from serve_fixtures import EchoPredictor

from aster.serve import batching


@pytest.fixture
def make_batcher():
    made = []

    def make(predictor, **kwargs):
        made.append(batching.Batcher(predictor, **kwargs))
        return made[-1]

    yield make
    for batcher in made:
        batcher.close()


def test_concurrent_submissions_share_batches_and_get_their_own_outputs(make_batcher):
    predictor = EchoPredictor(delay_secs=0.05)
    batcher = make_batcher(predictor, max_batch_size=8, max_wait_secs=0.05)
    images = [f"word{i}".encode() for i in range(24)]
    with concurrent.futures.ThreadPoolExecutor(12) as pool:
        futures = list(pool.map(batcher.submit, images))
    outputs = [f.result(timeout=10) for f in futures]
    assert [o["text"] for o in outputs] == [i.upper() for i in images]
    assert [float(o["scores"]) for o in outputs] == [-float(len(i)) for i in images]
    assert sum(predictor.batch_sizes) == 24
    assert len(predictor.batch_sizes) < 24 and max(predictor.batch_sizes) <= 8
    assert batcher.stats.images == 24 and batcher.stats.batches == len(predictor.batch_sizes)
    assert batcher.stats.largest == max(predictor.batch_sizes)


def test_lone_image_waits_at_most_max_wait(make_batcher):
    predictor = EchoPredictor()
    batcher = make_batcher(predictor, max_batch_size=32, max_wait_secs=0.01)
    assert batcher.submit(b"alone").result(timeout=2)["text"] == b"ALONE"
    assert predictor.batch_sizes == [1]


def test_failing_batch_is_retried_one_image_at_a_time(make_batcher):
    predictor = EchoPredictor(delay_secs=0.05)
    batcher = make_batcher(predictor, max_batch_size=8, max_wait_secs=0.2)
    blocker = batcher.submit(b"first")  # the next three join its batch or the one after it
    futures = [batcher.submit(image) for image in (b"good", b"bad", b"fine")]
    blocker.result(timeout=10)
    assert futures[0].result(timeout=10)["text"] == b"GOOD"
    assert futures[2].result(timeout=10)["text"] == b"FINE"
    with pytest.raises(batching.BatchError, match=r"^cannot decode b'bad'$"):
        futures[1].result(timeout=10)
    assert max(predictor.batch_sizes) >= 3 and predictor.batch_sizes.count(1) >= 3


class BlockingPredictor(EchoPredictor):
    """Holds its first batch until `release` is set; `started` is set when it is running."""

    def __init__(self):
        super().__init__()
        self.started, self.release = threading.Event(), threading.Event()

    def predict(self, images):
        self.started.set()
        self.release.wait(10)
        return super().predict(images)


def test_cancelled_image_is_not_run(make_batcher):
    predictor = BlockingPredictor()
    started, release = predictor.started, predictor.release
    batcher = make_batcher(predictor, max_batch_size=4, max_wait_secs=0.0)
    first = batcher.submit(b"first")
    assert started.wait(10)
    cancelled, kept = batcher.submit(b"gone"), batcher.submit(b"kept")
    assert cancelled.cancel()
    release.set()
    assert kept.result(timeout=10)["text"] == b"KEPT" and first.result(timeout=10)
    assert sum(predictor.batch_sizes) == 2


def test_close_fails_what_is_still_queued_and_refuses_more(make_batcher):
    predictor = BlockingPredictor()
    started, release = predictor.started, predictor.release
    batcher = make_batcher(predictor, max_batch_size=1, max_wait_secs=0.0)
    running = batcher.submit(b"running")
    assert started.wait(10)
    queued = batcher.submit(b"queued")
    closer = threading.Thread(target=batcher.close)
    closer.start()
    for _ in range(1000):
        if batcher.closed:
            break
        time.sleep(0.01)
    release.set()
    closer.join(10)
    assert running.result(timeout=1)["text"] == b"RUNNING"
    with pytest.raises(RuntimeError, match="shutting down"):
        queued.result(timeout=1)
    with pytest.raises(RuntimeError, match="the batcher is closed"):
        batcher.submit(b"late")
    batcher.close()  # a second close does nothing


@pytest.mark.parametrize("kwargs, message", [
    ({"max_batch_size": 0}, "max_batch_size must be >= 1, got 0"),
    ({"max_wait_secs": -1}, "max_wait_secs must be >= 0, got -1"),
])
def test_bad_settings_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        batching.Batcher(EchoPredictor(), **kwargs)


def test_error_without_text_is_named_by_its_type(make_batcher):
    class Silent(EchoPredictor):
        def predict(self, images):
            raise KeyError()

    batcher = make_batcher(Silent(), max_batch_size=1)
    with pytest.raises(batching.BatchError, match="^KeyError$"):
        batcher.submit(b"x").result(timeout=10)
