"""aster-serve under load: concurrent clients against the server, beside the predictor's own rate.

    .venv/bin/python benchmarks/serve_load.py [--checkpoint_path MODEL | --saved_model_dir DIR]
        [--clients 1 8 32] [--duration_secs 20] [--soak_secs 180] [--soak_clients 8]

What it runs, in one process and one aster-serve subprocess (`python -m aster.serve`, the
shipped model unless told otherwise, on 127.0.0.1 and a free port):

* direct: the same predictor (aster/serve/loading.py) called in this process before the server
  starts, with batches of --max_batch_size copies of the crop for --direct_secs (images/s: the
  batched rate the server should approach), and one image at a time (batch-1 latency, median).
* load: for each --clients count N, N threads each keep one connection and send one crop per
  request (multipart POST /v1/recognize) back to back for --duration_secs, after --warmup_secs
  not counted. Throughput (answered images/s), p50/p99 latency, errors (a status other than 200,
  a text other than the direct predictor's, or no answer: a lost request). Every request has a
  --request_timeout_secs bound.
* CPU: the cores the server and the client threads (this process) used during each run (from
  /proc and time.process_time), since both share the machine.
* soak: --soak_clients clients for --soak_secs while the server's resident memory (VmRSS of
  /proc/<pid>/status) is sampled every --rss_every_secs: first, last and largest sample.

The crop is a rendered word (Pillow's own font, no font files). Prints one table, the targets of
issue 45 (no errors at 32 clients; 32-client throughput >= 70% of direct; 1-client p99 <= 3x the
batch-1 latency) and one JSON line. The clients share the machine's cores with the server.
"""

import argparse
import http.client
import io
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid

import common  # benchmarks/common.py (scripts run as python benchmarks/<name>.py)

WORD = "serve"


def word_png(word=WORD):
    """A dark word on a light background as PNG bytes (Pillow's scalable default font)."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default(size=40)
    left, top, right, bottom = font.getbbox(word)
    image = Image.new("RGB", (right - left + 24, bottom - top + 16), (250, 245, 230))
    ImageDraw.Draw(image).text((12 - left, 8 - top), word, fill=(20, 30, 90), font=font)
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def multipart_body(image, name="word.png"):
    """(body, content type) of a one-image upload."""
    boundary = uuid.uuid4().hex
    body = (f'--{boundary}\r\nContent-Disposition: form-data; name="images"; filename="{name}"'
            f"\r\nContent-Type: image/png\r\n\r\n").encode() + image + \
        f"\r\n--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


def percentile(values, fraction):
    """The nearest-rank percentile of values (fraction in [0, 1]); nan when empty."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(fraction * len(ordered))) - 1))]


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def model_flags(args):
    if args.saved_model_dir:
        return ["--saved_model_dir", args.saved_model_dir]
    flags = ["--checkpoint_path", args.checkpoint_path]
    return flags + (["--pipeline_config_path", args.pipeline_config_path]
                    if args.pipeline_config_path else [])


def start_server(args, port):
    """Starts aster-serve on 127.0.0.1:port and waits for /healthz (bounded); returns the
    process. Raises RuntimeError if it exits or does not answer in time."""
    command = [sys.executable, "-m", "aster.serve", *model_flags(args), "--port", str(port),
               "--max_batch_size", str(args.max_batch_size), "--max_wait_ms",
               str(args.max_wait_ms), "--timeout_secs", str(args.request_timeout_secs)]
    process = subprocess.Popen(command, cwd=common.ROOT, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + args.start_timeout_secs
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"aster-serve exited with {process.returncode}: "
                               f"{process.stderr.read().strip()}")
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        try:
            connection.request("GET", "/healthz")
            if connection.getresponse().status == 200:
                return process
        except OSError:
            time.sleep(0.2)
        finally:
            connection.close()
    stop_server(process)
    raise RuntimeError(f"aster-serve did not answer within {args.start_timeout_secs} s")


def stop_server(process):
    process.terminate()
    try:
        process.wait(15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(15)


def rss_mb(pid):
    """Resident memory of process `pid` in MB (VmRSS), or nan."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


def cpu_secs(pid=None):
    """CPU seconds (user + system) used so far by process `pid` (/proc), or by this process."""
    if pid is None:
        # Not os.times(): it counts clock ticks (10 ms), and a CI run of a short load read 0.0.
        return time.process_time()
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _client(port, body, content_type, expected, stop_at, count_from, timeout, record):
    """One client: requests back to back on one connection until stop_at; records
    (sent_at, latency or None, ok: status 200 and the text `expected`) of those sent after
    count_from."""
    connection = None
    while time.monotonic() < stop_at:
        sent = time.monotonic()
        ok, latency = False, None
        try:
            if connection is None:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
            connection.request("POST", "/v1/recognize", body, {"Content-Type": content_type})
            response = connection.getresponse()
            answer = response.read()
            latency = time.monotonic() - sent
            ok = response.status == 200 and json.loads(answer)["results"][0].get("text") == expected
        except (OSError, http.client.HTTPException, ValueError, KeyError):
            if connection is not None:
                connection.close()
            connection = None
        if sent >= count_from:
            record.append((sent, latency, ok))
    if connection is not None:
        connection.close()


def run_load(port, clients, image, expected, duration_secs, warmup_secs, timeout,
             on_tick=None, server_pid=None):
    """N clients for warmup + duration seconds; returns the figures of the counted part, with
    the CPU (cores) the clients and the server used over the whole run."""
    body, content_type = multipart_body(image)
    start = time.monotonic()
    count_from, stop_at = start + warmup_secs, start + warmup_secs + duration_secs
    records = [[] for _ in range(clients)]
    threads = [threading.Thread(target=_client, daemon=True,
                                args=(port, body, content_type, expected, stop_at, count_from,
                                      timeout, records[i])) for i in range(clients)]
    cpu_start = (cpu_secs(), cpu_secs(server_pid) if server_pid else 0.0)
    for thread in threads:
        thread.start()
    while any(t.is_alive() for t in threads) and time.monotonic() < stop_at + timeout + 5:
        if on_tick:
            on_tick()
        time.sleep(0.2)
    wall = time.monotonic() - start
    client_cores = (cpu_secs() - cpu_start[0]) / wall
    server_cores = (cpu_secs(server_pid) - cpu_start[1]) / wall if server_pid else float("nan")
    lost_threads = sum(t.is_alive() for t in threads)
    done = [r for client in records for r in client]
    latencies = [r[1] for r in done if r[2]]
    return {"clients": clients, "requests": len(done), "ok": len(latencies),
            "errors": len(done) - len(latencies) + lost_threads,
            "images_per_sec": len(latencies) / duration_secs,
            "p50_ms": 1000 * percentile(latencies, 0.50),
            "p99_ms": 1000 * percentile(latencies, 0.99),
            "client_cores": client_cores, "server_cores": server_cores}


def run_direct(args, image):
    """(batched images/s, batch-1 median latency in s, the text read) of the predictor called
    directly."""
    from aster.serve import loading

    predictor, _ = loading.load_model(args.checkpoint_path, args.pipeline_config_path,
                                      args.saved_model_dir or "")
    with predictor:
        batch = [image] * args.max_batch_size
        predictor.predict(batch)
        text = predictor.predict([image])["text"][0].decode("utf-8", errors="replace")
        images, start = 0, time.monotonic()
        while time.monotonic() - start < args.direct_secs:
            predictor.predict(batch)
            images += len(batch)
        rate = images / (time.monotonic() - start)
        latencies, start = [], time.monotonic()
        while time.monotonic() - start < args.direct_secs or len(latencies) < 5:
            began = time.monotonic()
            predictor.predict([image])
            latencies.append(time.monotonic() - began)
    return rate, statistics.median(latencies), text


def run_soak(port, image, expected, args, pid):
    samples = []
    last = [0.0]

    def sample():
        if time.monotonic() - last[0] >= args.rss_every_secs:
            last[0] = time.monotonic()
            samples.append(rss_mb(pid))

    figures = run_load(port, args.soak_clients, image, expected, args.soak_secs, 0.0,
                       args.request_timeout_secs, on_tick=sample, server_pid=pid)
    samples.append(rss_mb(pid))
    figures.update(rss_first_mb=samples[0], rss_last_mb=samples[-1], rss_max_mb=max(samples),
                   rss_samples=len(samples))
    return figures


def report(args, direct_rate, batch1, expected, rows, soak, load_start):
    machine, _ = common.machine()
    print(f"{time.strftime('%Y-%m-%d')}: {machine}, load average {load_start:.1f} at the start; "
          f"`python benchmarks/serve_load.py {' '.join(args.argv)}`".rstrip())
    print(f"\nmodel: {' '.join(model_flags(args))}; max batch {args.max_batch_size}, max wait "
          f"{args.max_wait_ms:g} ms; direct: batch {args.max_batch_size} "
          f"{direct_rate:.1f} images/s, batch-1 latency {1000 * batch1:.1f} ms; the crop "
          f"reads {expected!r} (a request is an error unless it gets that text)\n")
    print("| clients | seconds | requests | errors | images/s | % of direct | p50 ms | p99 ms "
          "| CPU cores: server, clients |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows + ([soak] if soak else []):
        label = f"{row['clients']} (soak)" if row is soak else str(row["clients"])
        seconds = args.soak_secs if row is soak else args.duration_secs
        print(f"| {label} | {seconds:g} | {row['requests']} | {row['errors']} | "
              f"{row['images_per_sec']:.1f} | {100 * row['images_per_sec'] / direct_rate:.0f}% | "
              f"{row['p50_ms']:.1f} | {row['p99_ms']:.1f} | "
              f"{row['server_cores']:.2f}, {row['client_cores']:.2f} |")
    if soak:
        print(f"\nsoak: server RSS {soak['rss_first_mb']:.0f} MB first, {soak['rss_last_mb']:.0f} "
              f"MB last, {soak['rss_max_mb']:.0f} MB largest of {soak['rss_samples']} samples "
              f"(every {args.rss_every_secs:g} s)")
    by_clients = {row["clients"]: row for row in rows}
    checks = []
    if 32 in by_clients:
        row = by_clients[32]
        checks.append(("no errors at 32 clients", row["errors"] == 0, f"{row['errors']}"))
        share = row["images_per_sec"] / direct_rate
        checks.append(("32-client throughput >= 70% of direct", share >= 0.7, f"{share:.0%}"))
    if 1 in by_clients:
        ratio = by_clients[1]["p99_ms"] / (1000 * batch1)
        checks.append(("1-client p99 <= 3x batch-1 latency", ratio <= 3, f"{ratio:.2f}x"))
    for name, met, value in checks:
        print(f"target {name}: {'met' if met else 'NOT met'} ({value})")
    print(json.dumps({"direct_images_per_sec": direct_rate, "batch1_ms": 1000 * batch1,
                      "load": rows, "soak": soak}))
    return all(met for _, met, _ in checks)


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--checkpoint_path", default="aster_base")
    source.add_argument("--saved_model_dir", default="")
    parser.add_argument("--pipeline_config_path", default="")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--duration_secs", type=float, default=20.0)
    parser.add_argument("--warmup_secs", type=float, default=2.0)
    parser.add_argument("--direct_secs", type=float, default=10.0)
    parser.add_argument("--soak_secs", type=float, default=180.0, help="0: no soak")
    parser.add_argument("--soak_clients", type=int, default=8)
    parser.add_argument("--rss_every_secs", type=float, default=5.0)
    parser.add_argument("--max_batch_size", type=int, default=32)
    parser.add_argument("--max_wait_ms", type=float, default=5.0)
    parser.add_argument("--request_timeout_secs", type=float, default=30.0)
    parser.add_argument("--start_timeout_secs", type=float, default=180.0)
    return parser


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    args.argv = argv
    if max(args.clients) > 64 or min(args.clients) < 1:
        raise SystemExit("--clients: between 1 and 64 (a bounded load on 127.0.0.1)")
    os.environ.setdefault("TF_ONEDNN_ASSUME_FROZEN_WEIGHTS", "1")  # as aster-serve sets it
    load_start = os.getloadavg()[0]
    image = word_png()
    direct_rate, batch1, expected = run_direct(args, image)
    port = free_port()
    server = start_server(args, port)
    try:
        rows = [run_load(port, n, image, expected, args.duration_secs, args.warmup_secs,
                         args.request_timeout_secs, server_pid=server.pid)
                for n in args.clients]
        soak = (run_soak(port, image, expected, args, server.pid) if args.soak_secs > 0
                else None)
    finally:
        stop_server(server)
    report(args, direct_rate, batch1, expected, rows, soak, load_start)
    return 0


if __name__ == "__main__":
    sys.exit(main())
