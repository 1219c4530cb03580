"""The request batcher: one worker thread runs the predictor on batches of the pending images.

    batcher = Batcher(predictor, max_batch_size=32, max_wait_secs=0.005)
    future = batcher.submit(png_bytes)     # concurrent.futures.Future
    outputs = future.result()              # {"text": b"...", "scores": -0.1, ...} for that image
    batcher.close()

Every request puts its images on one queue. The worker takes the first image that waits, then
keeps taking until the batch holds max_batch_size images or max_wait_secs have passed since that
first one, and runs predictor.predict once on the batch: under load, concurrent requests share
batches and the throughput approaches the batched predictor's; alone, an image waits at most
max_wait_secs more than predict takes. A batch that fails (an image the checks let through but
the graph refuses) is run again one image at a time, so that only the bad image's request sees
the error. An image whose future was cancelled (its request timed out) is skipped. The predictor
is only ever called from the worker thread (a tf.Session may be shared, but the batches are what
keep the cores busy).
"""

import concurrent.futures
import dataclasses
import queue
import threading
import time

_STOP = object()


class BatchError(RuntimeError):
    """The predictor failed on an image (the message is the predictor's, one line)."""


@dataclasses.dataclass
class BatchStats:
    """What the worker ran: predictor calls, images and the largest batch."""

    batches: int = 0
    images: int = 0
    largest: int = 0


class Batcher:
    """Runs `predictor.predict(list of encoded images)` in one thread on batches of submitted
    images; see the module docstring."""

    def __init__(self, predictor, max_batch_size=32, max_wait_secs=0.005):
        """Starts the worker thread.

        Args:
          predictor: has predict(list of encoded image bytes) -> dict of numpy arrays whose first
            dimension is the batch (aster.inference's predictors).
          max_batch_size: most images in one predict call.
          max_wait_secs: longest wait for more images after the first of a batch arrived.

        Raises:
          ValueError: max_batch_size < 1 or max_wait_secs < 0.
        """
        if max_batch_size < 1:
            raise ValueError(f"max_batch_size must be >= 1, got {max_batch_size}")
        if max_wait_secs < 0:
            raise ValueError(f"max_wait_secs must be >= 0, got {max_wait_secs}")
        self.predictor = predictor
        self.max_batch_size = max_batch_size
        self.max_wait_secs = max_wait_secs
        self.stats = BatchStats()
        self._queue = queue.Queue()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="aster-serve-batcher", daemon=True)
        self._thread.start()

    def submit(self, image):
        """Queues one encoded image; returns a Future of its outputs (one entry per output key).

        Raises:
          RuntimeError: the batcher is closed.
        """
        if self._closed:
            raise RuntimeError("the batcher is closed")
        future = concurrent.futures.Future()
        self._queue.put((image, future))
        return future

    @property
    def closed(self):
        """True once close() was called."""
        return self._closed

    def pending(self):
        """Images waiting for a batch (approximately)."""
        return self._queue.qsize()

    def close(self, timeout_secs=30.0):
        """Stops taking images, lets the worker finish the batch it runs and fails the images
        still waiting (RuntimeError); waits up to timeout_secs for the worker to end."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(_STOP)
        self._thread.join(timeout_secs)

    def _take_batch(self):
        """The next batch of (image, future) pairs; None once closed."""
        first = self._queue.get()
        if first is _STOP:
            return None
        batch = [first]
        deadline = time.monotonic() + self.max_wait_secs
        while len(batch) < self.max_batch_size:
            remaining = deadline - time.monotonic()
            try:
                item = self._queue.get(timeout=remaining) if remaining > 0 else \
                    self._queue.get_nowait()
            except queue.Empty:
                break
            if item is _STOP:
                self._queue.put(_STOP)  # seen again after this batch
                break
            batch.append(item)
        return batch

    def _run(self):
        while True:
            batch = self._take_batch()
            if batch is None or self._closed:
                for _, future in batch or []:
                    self._fail(future)
                break
            live = [(image, f) for image, f in batch if f.set_running_or_notify_cancel()]
            if live:
                self._predict(live)
        while True:  # closed: fail whatever is still queued
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if item is not _STOP:
                self._fail(item[1])

    @staticmethod
    def _fail(future):
        if future.set_running_or_notify_cancel():
            future.set_exception(RuntimeError("the server is shutting down"))

    def _predict(self, live):
        try:
            outputs = self.predictor.predict([image for image, _ in live])
        except Exception as e:  # noqa: BLE001 - any predictor failure goes to the requests
            if len(live) > 1:  # find the image that failed: the others still get answers
                for item in live:
                    self._predict([item])
                return
            live[0][1].set_exception(BatchError(_one_line(e)))
            return
        self.stats.batches += 1
        self.stats.images += len(live)
        self.stats.largest = max(self.stats.largest, len(live))
        for i, (_, future) in enumerate(live):
            future.set_result({key: value[i] for key, value in outputs.items()})


def _one_line(error):
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__
