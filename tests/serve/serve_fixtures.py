"""Shared by the tests of aster/serve/: a real uvicorn server on 127.0.0.1 in a thread, the
stand-in predictor, image bytes, multipart bodies and a bounded HTTP client.

    with running_server(app) as port:
        status, body = request(port, "POST", "/v1/recognize", *multipart([("a.png", data)]))
"""

import contextlib
import http.client
import io
import json
import os
import socket
import threading
import time

import numpy as np
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TIMEOUT_SECS = 30.0  # the most any request of these tests may take


@contextlib.contextmanager
def running_server(app, start_timeout_secs=20.0):
    """Serves `app` with uvicorn on 127.0.0.1 (a free port) in a thread; yields the port and
    stops the server (and its thread) on exit."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    # log_config=None: uvicorn leaves logging alone (its handlers would outlive capsys streams).
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, log_level="critical",
                                           timeout_graceful_shutdown=2))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + start_timeout_secs
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        if not server.started:
            raise RuntimeError("uvicorn did not start")
        yield port
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def request(port, method, path, body=None, content_type=None, timeout=TIMEOUT_SECS):
    """One HTTP request to 127.0.0.1:port; returns (status, parsed JSON or raw bytes)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {"Content-Type": content_type} if content_type else {}
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        data = response.read()
    finally:
        connection.close()
    if response.getheader("content-type", "").startswith("application/json"):
        return response.status, json.loads(data)
    return response.status, data


def multipart(files, field="images", boundary="aster-serve-test-4b1d"):
    """(body, content type) of a multipart/form-data upload of [(filename, bytes)]. The boundary
    is fixed so that test ids made of a body are the same in every pytest-xdist worker."""
    parts = []
    for name, data in files:
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"; '
                     f'filename="{name}"\r\nContent-Type: application/octet-stream\r\n\r\n'
                     .encode() + data + b"\r\n")
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


def image_bytes(width=60, height=20, value=120, fmt="PNG", mode="RGB"):
    """An encoded image of one colour."""
    buffer = io.BytesIO()
    Image.new(mode, (width, height), value if mode != "RGB" else (value,) * 3).save(buffer, fmt)
    return buffer.getvalue()


def huge_png(width=12000, height=12000):
    """A small PNG (a few kB) whose header declares width x height pixels."""
    return image_bytes(width, height, 0, "PNG", "1")


def stand_in_predictor(tmp_path, monkeypatch, value=42.0):
    """A CheckpointPredictor of the stand-in model (tests/stand_in_model.py), which reads every
    image as str(round(value)) with score -value, its rectified image 8x16 and 4 control points.

    Returns:
      (predictor, checkpoint prefix).
    """
    from stand_in_model import StandInModel, write_checkpoint

    from aster import inference
    from aster.utils import config_util

    monkeypatch.setattr(inference, "default_model_fn", lambda model_config: StandInModel())
    checkpoint = write_checkpoint(str(tmp_path), 7, value)
    config = config_util.load_pipeline_config(os.path.join(ROOT, "configs", "tiny.config"))
    config_util.save_pipeline_config(config, str(tmp_path / "pipeline.config"))
    return inference.CheckpointPredictor(config, checkpoint), checkpoint


class CountingPredictor:
    """Wraps a predictor: counts its calls and batch sizes; sleeps `delay_secs` in each call."""

    def __init__(self, predictor, delay_secs=0.0):
        self.predictor, self.delay_secs = predictor, delay_secs
        self.batch_sizes = []
        self._lock = threading.Lock()

    def predict(self, images):
        with self._lock:
            self.batch_sizes.append(len(images))
        if self.delay_secs:
            time.sleep(self.delay_secs)
        return self.predictor.predict(images)

    def close(self):
        self.predictor.close()


class EchoPredictor:
    """A predictor without TensorFlow for the batcher's own tests: reads each image (bytes) as
    its own upper-cased text, score -len; fails a batch holding b"bad"."""

    def __init__(self, delay_secs=0.0):
        self.delay_secs = delay_secs
        self.batch_sizes = []

    def predict(self, images):
        self.batch_sizes.append(len(images))
        if self.delay_secs:
            time.sleep(self.delay_secs)
        if b"bad" in images:
            raise ValueError("cannot decode b'bad'\nsecond line of the error")
        return {"text": np.array([i.upper() for i in images], object),
                "scores": np.array([-float(len(i)) for i in images], np.float32)}
