"""Tests for aster/serve/app.py: the API on a real uvicorn server (127.0.0.1, a free port) with
the stand-in model, the bad inputs of issue 45 item 5, and batching across requests."""

import base64
import concurrent.futures
import io
import json
import socket
import time

import pytest
from PIL import Image
from serve_fixtures import (
    CountingPredictor,
    huge_png,
    image_bytes,
    multipart,
    request,
    running_server,
    stand_in_predictor,
)

from aster.serve import app as app_lib
from aster.serve import batching, limits

INFO = {"name": "stand_in", "step": 7}
TIMEOUT_SECS = 2.0  # the served limit: a request's body, and the model's answer


@pytest.fixture(scope="module")
def predictor(tmp_path_factory):
    with pytest.MonkeyPatch.context() as monkeypatch:
        predictor, _ = stand_in_predictor(tmp_path_factory.mktemp("stand_in"), monkeypatch)
        predictor.predict([image_bytes()])  # the first run builds TensorFlow's kernels
        yield predictor
        predictor.close()


@pytest.fixture
def serve(predictor):
    """serve(predictor=None, **Limits kwargs, max_batch_size=, max_wait_secs=) -> port of a
    running server; all are stopped after the test."""
    stack = []

    def start(wrapped=None, max_batch_size=32, max_wait_secs=0.005, **limit_kwargs):
        limit_kwargs.setdefault("timeout_secs", TIMEOUT_SECS)
        batcher = batching.Batcher(wrapped or predictor, max_batch_size, max_wait_secs)
        server = running_server(app_lib.build_app(batcher, INFO, limits.Limits(**limit_kwargs)))
        stack.append((server, batcher))
        return server.__enter__()

    yield start
    for server, batcher in reversed(stack):
        server.__exit__(None, None, None)
        batcher.close()


def _recognize(port, files, query="", timeout=30.0):
    return request(port, "POST", "/v1/recognize" + query, *multipart(files), timeout=timeout)


def _read_response(sock, first=b""):
    """A whole HTTP response (head and its content-length body) from a raw socket."""
    data = first
    while b"\r\n\r\n" not in data or len(data.split(b"\r\n\r\n", 1)[1]) < int(
            data.lower().split(b"content-length: ", 1)[1].split(b"\r\n", 1)[0]):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def _assert_serving(port):
    """The server still answers a good request."""
    status, body = _recognize(port, [("ok.png", image_bytes())])
    assert status == 200 and body["results"][0]["text"] == "42"


def test_health_model_and_page(serve):
    port = serve()
    assert request(port, "GET", "/healthz")[1]["status"] == "ok"
    assert request(port, "GET", "/v1/model") == (200, INFO)
    status, page = request(port, "GET", "/")
    assert status == 200 and b'<script src="/static/app.js">' in page
    for name in ("app.js", "style.css"):
        assert request(port, "GET", f"/static/{name}")[0] == 200
    assert request(port, "GET", "/static/other.js") == (404, {"error": "no file 'other.js'"})


def test_multipart_images_give_text_and_score_in_order(serve):
    port = serve()
    status, body = _recognize(port, [("a.png", image_bytes()), ("b.jpg", image_bytes(fmt="JPEG"))])
    assert status == 200
    assert body == {"model": "stand_in", "results": [
        {"index": 0, "name": "a.png", "text": "42", "score": -42.0},
        {"index": 1, "name": "b.jpg", "text": "42", "score": -42.0}]}


def test_rectified_image_and_control_points_on_request(serve):
    port = serve()
    status, body = _recognize(port, [("a.png", image_bytes())], "?rectified=1&control_points=true")
    entry = body["results"][0]
    with Image.open(io.BytesIO(base64.b64decode(entry["rectified_png"]))) as rectified:
        assert (rectified.format, rectified.size) == ("PNG", (16, 8))
    assert entry["control_points"] == [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]


def test_json_base64_images_named_or_not(serve):
    port = serve()
    encoded = base64.b64encode(image_bytes()).decode()
    payload = {"images": [encoded, {"name": "word.png", "data": encoded}]}
    status, body = request(port, "POST", "/v1/recognize", json.dumps(payload), "application/json")
    assert status == 200
    assert [(r["name"], r["text"]) for r in body["results"]] == [("image 0", "42"),
                                                                 ("word.png", "42")]


def test_mixed_request_answers_the_good_images_and_names_each_bad_one(serve):
    port = serve()
    files = [("good.png", image_bytes()), ("cut.png", image_bytes(200, 100)[:90]),
             ("notes.txt", b"not an image"), ("huge.png", huge_png()), ("empty.png", b"")]
    status, body = _recognize(port, files)
    assert status == 200
    good, cut, text, huge, empty = body["results"]
    assert good["text"] == "42"
    assert cut["name"] == "cut.png" and cut["error"].startswith("damaged image (")
    assert text["error"] == "not an image (no format Pillow reads)"
    assert "144000000 pixels" in huge["error"] and "text" not in huge
    assert empty["error"] == "empty file"


def test_mixed_json_request_names_bad_base64(serve):
    port = serve()
    payload = {"images": [base64.b64encode(image_bytes()).decode(), "@@not base64@@",
                          {"name": "no data"}]}
    status, body = request(port, "POST", "/v1/recognize", json.dumps(payload), "application/json")
    assert status == 200
    assert [r.get("error") for r in body["results"]] == [None, "not valid base64",
                                                         "no base64 string in 'data'"]


@pytest.mark.parametrize("files, why", [
    ([("cut.png", image_bytes(200, 100)[:90])], "damaged image ("),
    ([("body.bin", b"\x00\x01 random bytes")], "not an image"),
    ([("huge.png", huge_png())], "144000000 pixels"),
])
def test_request_without_a_readable_image_is_400_naming_each(serve, files, why):
    port = serve()
    start = time.monotonic()
    status, body = _recognize(port, files + files)
    assert time.monotonic() - start < 10
    assert status == 400 and body["error"] == "none of the 2 images could be read"
    assert [r["name"] for r in body["results"]] == [files[0][0]] * 2
    assert all(why in r["error"] for r in body["results"])
    _assert_serving(port)


def test_non_image_body_of_another_content_type_is_415(serve):
    port = serve()
    status, body = request(port, "POST", "/v1/recognize", b"\x89PNG\r\n truncated", "image/png")
    assert status == 415 and "content type 'image/png'" in body["error"]


@pytest.mark.parametrize("body, content_type", [
    (None, None), (b"", "application/json"), (json.dumps({"images": []}), "application/json"),
    multipart([]),
])
def test_empty_request_is_400(serve, body, content_type):
    port = serve()
    if content_type == "application/json" and body == b"":
        status, answer = request(port, "POST", "/v1/recognize", body, content_type)
        assert status == 400 and answer["error"].startswith("request body is not JSON")
        return
    status, answer = request(port, "POST", "/v1/recognize", body, content_type)
    assert status == 400 and answer["error"].startswith("no images in the request")


@pytest.mark.parametrize("payload, message", [
    ("[1, 2]", 'JSON body must be {"images"'),
    ('{"images": "x"}', 'JSON body must be {"images"'),
    ("{not json", "request body is not JSON"),
])
def test_malformed_json_is_400(serve, payload, message):
    status, body = request(serve(), "POST", "/v1/recognize", payload, "application/json")
    assert status == 400 and body["error"].startswith(message)


def test_malformed_multipart_is_400(serve):
    port = serve()
    body = b'--zz\r\nContent-Disposition: form-data; name="images"\r\n\r\nabc\r\n--zz--\r\n'
    status, body = request(port, "POST", "/v1/recognize", body,
                           "multipart/form-data; boundary=b")  # not the body's boundary
    assert (status, body) == (400, {"error": "malformed multipart body: "
                                             "Invalid multipart data."}), body


def test_text_field_instead_of_files_is_400(serve):
    port = serve()
    body = (b'--b\r\nContent-Disposition: form-data; name="images"\r\n\r\nhello\r\n--b--\r\n')
    status, answer = request(port, "POST", "/v1/recognize", body,
                             "multipart/form-data; boundary=b")
    assert status == 400 and answer["error"] == "multipart field 'images' must hold files, not text"


def test_thousand_images_in_one_request_are_413(serve):
    port = serve(max_images=64)
    one = image_bytes(8, 8)
    start = time.monotonic()
    status, body = _recognize(port, [(f"{i}.png", one) for i in range(1000)])
    assert status == 413 and body["error"] == "more than 64 images in one request"
    payload = json.dumps({"images": [base64.b64encode(one).decode()] * 1000})
    status, body = request(port, "POST", "/v1/recognize", payload, "application/json")
    assert status == 413 and body["error"] == "1000 images in one request; at most 64"
    assert time.monotonic() - start < 10
    _assert_serving(port)


def test_body_over_the_byte_limit_is_413(serve):
    port = serve(max_request_bytes=10_000)
    status, body = _recognize(port, [("big.bmp", image_bytes(100, 100, fmt="BMP"))])
    assert status == 413 and "more than the 10000 allowed" in body["error"]
    _assert_serving(port)


def test_chunked_body_over_the_byte_limit_is_413(serve):
    port = serve(max_request_bytes=10_000)
    body, content_type = multipart([("big.bmp", image_bytes(100, 100, fmt="BMP"))])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"POST /v1/recognize HTTP/1.1\r\nHost: t\r\nContent-Type: {content_type}\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n".encode())
        for start in range(0, len(body), 4096):
            chunk = body[start:start + 4096]
            sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        sock.sendall(b"0\r\n\r\n")
        answer = _read_response(sock).decode("latin-1")
    assert answer.startswith("HTTP/1.1 413") and "more than the 10000 bytes allowed" in answer


def test_slow_client_gets_408_and_others_are_served_meanwhile(serve):
    port = serve(timeout_secs=1.0)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"POST /v1/recognize HTTP/1.1\r\nHost: t\r\nContent-Type: application/json"
                     b"\r\nContent-Length: 1000\r\n\r\n")
        sock.settimeout(0.05)
        start, answer, others = time.monotonic(), b"", None
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            other = pool.submit(_recognize, port, [("ok.png", image_bytes())])
            while time.monotonic() - start < 8 and not answer:  # a byte each 50 ms, 8 s at most
                try:
                    sock.sendall(b"{")
                    answer = sock.recv(4096)
                except TimeoutError:
                    pass
                except (BrokenPipeError, ConnectionResetError):
                    break
            others = other.result(timeout=10)
        elapsed = time.monotonic() - start
        sock.settimeout(10)
        answer = _read_response(sock, answer)
    assert answer.startswith(b"HTTP/1.1 408"), answer
    assert b"request body not received within 1 s" in answer
    assert 0.9 < elapsed < 5
    assert others[0] == 200 and others[1]["results"][0]["text"] == "42"
    _assert_serving(port)


def test_model_that_answers_too_late_gives_503_and_the_server_recovers(serve, predictor):
    port = serve(CountingPredictor(predictor, delay_secs=1.5), timeout_secs=0.5)
    start = time.monotonic()
    status, body = _recognize(port, [("a.png", image_bytes())])
    assert time.monotonic() - start < 1.4
    assert status == 503 and body["error"].startswith("no answer from the model within 0.5 s")
    assert request(port, "GET", "/healthz")[0] == 200


def test_concurrent_requests_are_answered_from_shared_batches(serve, predictor):
    counting = CountingPredictor(predictor, delay_secs=0.3)
    port = serve(counting, max_batch_size=32, max_wait_secs=0.05)
    clients = 8
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        answers = list(pool.map(lambda i: _recognize(port, [(f"{i}.png", image_bytes(value=i))]),
                                range(clients)))
    assert all(status == 200 and body["results"][0]["text"] == "42" for status, body in answers)
    assert [body["results"][0]["name"] for _, body in answers] == [f"{i}.png" for i in range(8)]
    assert sum(counting.batch_sizes) == clients
    assert len(counting.batch_sizes) < clients / 2, counting.batch_sizes
    health = request(port, "GET", "/healthz")[1]
    assert health["images"] == clients and health["batches"] == len(counting.batch_sizes)


def test_unexpected_failure_is_json_500_without_traceback():
    class Broken:
        stats = None

        def pending(self):
            raise RuntimeError("secret internal detail")

    with running_server(app_lib.build_app(Broken(), INFO)) as port:
        status, body = request(port, "GET", "/healthz")
        assert status == 500
        assert body == {"error": "internal error (the server's log has the details)"}
        assert request(port, "GET", "/v1/model")[0] == 200


def test_wrong_method_and_unknown_path_are_json(serve):
    port = serve()
    assert request(port, "GET", "/v1/recognize")[0] == 405
    status, body = request(port, "GET", "/v2/nothing")
    assert status == 404 and body == {"error": "Not Found"}
