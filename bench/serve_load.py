"""`sgmon serve` under a fleet's scrapes: N requests from C concurrent clients on loopback.

Starts ``sgmon serve --simulate healthy`` on a free port, waits until it answers, then C client
threads share N GET /metrics requests (each with a timeout, so the run ends by itself), and
prints how many answered 200, how many timed out or failed, the latency percentiles and the
rate.  Bounded: the server is given ``--duration`` and killed at the end whatever happens.

    python bench/serve_load.py --requests 5000 --clients 200
"""

from __future__ import annotations

import argparse
import http.client
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(port: int, proc: subprocess.Popen[bytes], limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit("serve exited before listening")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/metrics")
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit("serve did not answer within 30 s")


@contextmanager
def serving(
    duration: int = 600, checkout: Path | None = None
) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """``sgmon serve --simulate healthy`` on a free loopback port, answering; killed on exit.
    ``checkout``: the repository whose sgmon runs (first on PYTHONPATH), else the installed."""
    port = _free_port()
    env = None
    if checkout is not None:
        env = {**os.environ, "PYTHONPATH": str(checkout.resolve())}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sgmon", "serve", "--listen", f"127.0.0.1:{port}",
         "--simulate", "healthy", "--duration", str(duration)],
        stderr=subprocess.DEVNULL, env=env, cwd=checkout,
    )  # fmt: skip
    try:
        _wait(port, proc)
        yield port, proc
    finally:
        proc.kill()
        proc.wait()


def load(port: int, requests: int, clients: int, timeout: float) -> dict[str, float]:
    """Fire the requests; the counts and latencies."""
    lock = threading.Lock()
    left = [requests]
    ok, failed, timed_out = [0], [0], [0]
    lat: list[float] = []
    start = threading.Barrier(clients)

    def client() -> None:
        start.wait()
        while True:
            with lock:
                if left[0] == 0:
                    return
                left[0] -= 1
            t0 = time.monotonic()
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
                conn.request("GET", "/metrics")
                resp = conn.getresponse()
                resp.read()
                conn.close()
                good = resp.status == 200
                with lock:
                    (ok if good else failed)[0] += 1
                    lat.append(time.monotonic() - t0)
            except TimeoutError:
                with lock:
                    timed_out[0] += 1
            except OSError:
                with lock:
                    failed[0] += 1

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout + requests * timeout)  # bounded even if the server stalls
    wall = time.monotonic() - t0
    lat.sort()

    def pct(q: float) -> float:
        return lat[min(len(lat) - 1, int(q * len(lat)))] * 1000 if lat else float("nan")

    return {"ok": ok[0], "timed_out": timed_out[0], "failed": failed[0], "wall_s": wall,
            "p50_ms": pct(0.5), "p99_ms": pct(0.99), "max_ms": pct(1.0),
            "per_s": ok[0] / wall if wall else 0.0}  # fmt: skip


def main() -> int:
    """Run the bench and print one result line."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=5000)
    ap.add_argument("--clients", type=int, default=200)
    ap.add_argument("--timeout", type=float, default=5.0, help="per request, seconds")
    args = ap.parse_args()
    with serving() as (port, _):
        time.sleep(2)  # a few ticks: the scrape holds both hosts' metrics
        r = load(port, args.requests, args.clients, args.timeout)
    print(
        f"{args.requests} requests from {args.clients} clients: {r['ok']} ok, "
        f"{r['timed_out']} timed out (>{args.timeout:g}s), {r['failed']} failed; "
        f"p50 {r['p50_ms']:.0f} ms, p99 {r['p99_ms']:.0f} ms, max {r['max_ms']:.0f} ms; "
        f"{r['per_s']:.0f} answers/s over {r['wall_s']:.1f} s"
    )
    return 0 if r["ok"] == args.requests else 1


if __name__ == "__main__":
    sys.exit(main())
