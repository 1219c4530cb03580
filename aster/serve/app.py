"""The ASGI application of aster-serve (Starlette): the routes, their JSON and their errors.

    app = build_app(batcher, info, limits)       # then uvicorn.run(app, host="127.0.0.1")

Routes (docs/deploying.md, "HTTP API", has the request and response formats):
    GET  /                 the page (static/index.html, app.js, style.css; nothing fetched
                           from elsewhere)
    GET  /healthz          {"status": "ok", "model", "pending", "batches", "images"}
    GET  /v1/model         the model's facts (loading.model_info)
    POST /v1/recognize     multipart field `images` (repeated), or JSON {"images": [base64 or
                           {"name", "data"}]}; ?rectified=1 adds each rectified image (PNG,
                           base64), ?control_points=1 the rectifier's control points

Each image gets an entry: its text and score (log-probability), or its error. A request none of
whose images can be read gets 400 with every entry; a mixed one 200. Other errors are JSON
{"error": message} with 400 (no images, bad JSON or multipart), 408 (the body took longer than
the timeout to arrive), 413 (too many bytes or images), 415 (another content type), 503 (no
answer from the model within the timeout) or 500; never a traceback.
"""

import asyncio
import base64
import binascii
import io
import json
import os

import numpy as np
from PIL import Image
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.formparsers import MultiPartException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from aster.serve import limits as limits_lib

STATIC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
_MEDIA_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                ".css": "text/css; charset=utf-8"}
_TRUE = {"1", "true", "yes", "on"}
# The rectified images are model outputs in [-1, 1] (the models' preprocess), as aster-demo
# writes them.
_RECTIFIED_RANGE = (-1.0, 1.0)


class RequestError(Exception):
    """A request the server refuses as a whole: its status and message."""

    def __init__(self, status, message, results=None):
        super().__init__(message)
        self.status, self.message, self.results = status, message, results


def _error(status, message, results=None):
    body = {"error": message}
    if results is not None:
        body["results"] = results
    return JSONResponse(body, status_code=status)


async def _read_body(request, max_bytes):
    """The request body, refused once it passes max_bytes (without reading the rest)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise RequestError(413, f"request body of {declared} bytes is more than the "
                                f"{max_bytes} allowed")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise RequestError(413, f"request body is more than the {max_bytes} bytes allowed")
        chunks.append(chunk)
    return b"".join(chunks)


async def _multipart_images(request, body, max_images):
    """[(name, bytes)] of the repeated multipart field `images`."""
    sent = False

    async def replay():
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    # Without "app" in its scope, Starlette raises the parser's MultiPartException itself (with
    # it, a generic 400) and the message can say which limit was passed.
    scope = {key: value for key, value in request.scope.items() if key != "app"}
    try:
        async with Request(scope, replay).form(max_files=max_images,
                                               max_fields=max_images) as form:
            images = []
            for value in form.getlist("images"):
                if isinstance(value, str):
                    raise RequestError(400, "multipart field 'images' must hold files, not text")
                images.append((value.filename or f"image {len(images)}", await value.read()))
            return images
    except MultiPartException as e:
        if str(e).startswith("Too many files"):
            raise RequestError(413, f"more than {max_images} images in one request") from None
        raise RequestError(400, f"malformed multipart body: {e}") from None


def _json_images(body):
    """[(name, bytes or the error of that entry)] of a JSON body {"images": [...]}."""
    try:
        payload = json.loads(body)
    except (ValueError, UnicodeDecodeError) as e:
        raise RequestError(400, f"request body is not JSON ({e})") from None
    entries = payload.get("images") if isinstance(payload, dict) else None
    if not isinstance(entries, list):
        raise RequestError(400, 'JSON body must be {"images": [base64 string or '
                                '{"name": ..., "data": base64 string}, ...]}')
    images = []
    for i, entry in enumerate(entries):
        name, data = f"image {i}", entry
        if isinstance(entry, dict):
            name, data = str(entry.get("name") or name), entry.get("data")
        if not isinstance(data, str):
            images.append((name, limits_lib.ImageError("no base64 string in 'data'")))
            continue
        try:
            images.append((name, base64.b64decode(data, validate=True)))
        except (binascii.Error, ValueError):
            images.append((name, limits_lib.ImageError("not valid base64")))
    return images


def _check_all(images, max_pixels):
    """[(name, bytes for the model or ImageError)], each image checked (limits.check_image)."""
    checked = []
    for name, data in images:
        if not isinstance(data, Exception):
            try:
                data = limits_lib.check_image(data, max_pixels)
            except limits_lib.ImageError as e:
                data = e
        checked.append((name, data))
    return checked


def _png_base64(rectified):
    from aster.utils import visualization

    pixels = visualization.to_uint8(np.asarray(rectified), _RECTIFIED_RANGE)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, "PNG")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _entry(index, name, outcome, rectified, control_points):
    """One image's result: text and score (and what was asked for), or its error."""
    entry = {"index": index, "name": name}
    if isinstance(outcome, Exception):
        entry["error"] = str(outcome)
        return entry
    entry["text"] = outcome["text"].decode("utf-8", errors="replace")
    entry["score"] = float(outcome["scores"])
    if rectified and "rectified_images" in outcome:
        entry["rectified_png"] = _png_base64(outcome["rectified_images"])
    if control_points and "control_points" in outcome:
        entry["control_points"] = np.asarray(outcome["control_points"], float).round(4).tolist()
    return entry


async def _recognize_checked(batcher, checked, timeout_secs):
    """The model's outputs (or errors) for the checked images, in order.

    Raises:
      RequestError: 503, no answer within timeout_secs (the images still queued are dropped).
    """
    futures = {i: batcher.submit(data) for i, (_, data) in enumerate(checked)
               if not isinstance(data, Exception)}
    waiting = [asyncio.wrap_future(f) for f in futures.values()]
    try:
        await asyncio.wait_for(asyncio.gather(*waiting, return_exceptions=True), timeout_secs)
    except TimeoutError:
        for future in futures.values():
            future.cancel()
        raise RequestError(503, f"no answer from the model within {timeout_secs:g} s "
                                f"({batcher.pending()} images waiting); try again") from None
    outcomes = []
    for i, (_, data) in enumerate(checked):
        if i not in futures:
            outcomes.append(data)
            continue
        error = futures[i].exception()
        outcomes.append(error if error is not None else futures[i].result())
    return outcomes


def build_app(batcher, info, limits=None):
    """The Starlette application serving `batcher`'s predictor.

    Args:
      batcher: a batching.Batcher.
      info: the model's facts (loading.model_info), for GET /v1/model.
      limits: a limits.Limits (default: its defaults).

    Returns:
      A Starlette application.
    """
    limits = limits or limits_lib.Limits()
    static = {}
    for name in sorted(os.listdir(STATIC_DIR)):
        with open(os.path.join(STATIC_DIR, name), "rb") as f:
            static[name] = (f.read(), _MEDIA_TYPES.get(os.path.splitext(name)[1], "text/plain"))

    async def page(request):
        name = request.path_params.get("name", "index.html")
        if name not in static:
            raise HTTPException(404, f"no file {name!r}")
        content, media_type = static[name]
        return Response(content, media_type=media_type)

    async def healthz(request):
        stats = batcher.stats
        return JSONResponse({"status": "ok", "model": info.get("name"),
                             "pending": batcher.pending(), "batches": stats.batches,
                             "images": stats.images})

    async def model(request):
        return JSONResponse(info)

    async def recognize(request):
        try:
            return await _recognize(request)
        except RequestError as e:
            return _error(e.status, e.message, e.results)

    async def _recognize(request):
        try:
            body = await asyncio.wait_for(_read_body(request, limits.max_request_bytes),
                                          limits.timeout_secs)
        except TimeoutError:
            raise RequestError(408, f"request body not received within "
                                    f"{limits.timeout_secs:g} s") from None
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type == "multipart/form-data":
            images = await _multipart_images(request, body, limits.max_images)
        elif content_type == "application/json":
            images = _json_images(body)
        elif not body:
            images = []
        else:
            raise RequestError(415, f"content type {content_type or 'none'!r}: send "
                                    "multipart/form-data (field 'images') or application/json")
        if not images:
            raise RequestError(400, "no images in the request: send multipart field 'images' "
                                    'or JSON {"images": [base64, ...]}')
        if len(images) > limits.max_images:
            raise RequestError(413, f"{len(images)} images in one request; at most "
                                    f"{limits.max_images}")
        checked = await asyncio.to_thread(_check_all, images, limits.max_pixels)
        outcomes = await _recognize_checked(batcher, checked, limits.timeout_secs)
        rectified = request.query_params.get("rectified", "").lower() in _TRUE
        points = request.query_params.get("control_points", "").lower() in _TRUE
        results = await asyncio.to_thread(
            lambda: [_entry(i, name, outcome, rectified, points)
                     for i, ((name, _), outcome) in enumerate(zip(checked, outcomes,
                                                                   strict=True))])
        if all("error" in r for r in results):
            raise RequestError(400, f"none of the {len(results)} images could be read",
                               results)
        return JSONResponse({"model": info.get("name"), "results": results})

    async def http_error(request, exc):
        return _error(exc.status_code, str(exc.detail))

    async def internal_error(request, exc):
        return _error(500, "internal error (the server's log has the details)")

    routes = [Route("/", page), Route("/static/{name}", page), Route("/healthz", healthz),
              Route("/v1/model", model), Route("/v1/recognize", recognize, methods=["POST"])]
    return Starlette(routes=routes, exception_handlers={HTTPException: http_error,
                                                        Exception: internal_error})
