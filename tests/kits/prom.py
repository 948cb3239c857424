"""A real Prometheus for the tests: Debian's ``prometheus`` on a free loopback port, and its
HTTP API."""

from __future__ import annotations

import json
import socket
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Api:
    """Prometheus' HTTP API on one port."""

    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"

    def get(self, path: str, **params: str) -> dict:
        url = f"{self.base}{path}?{urllib.parse.urlencode(params)}"
        with urllib.request.urlopen(url, timeout=10) as r:
            body = json.load(r)
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str) -> list[dict]:
        return self.get("/api/v1/query", query=expr)["result"]

    def alerts(self) -> list[dict]:
        return self.get("/api/v1/alerts")["alerts"]

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base}/-/ready", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False


def prometheus(
    config: Path, data: Path, user: str | None = None
) -> tuple[subprocess.Popen[str], Api]:
    """Debian's Prometheus on a free loopback port with ``config``, storing under ``data``
    (as ``user`` when given, through runuser): the process (its stderr piped) and its API."""
    port = free_port()
    argv = ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={data}",
            f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"]  # fmt: skip
    if user is not None:
        argv = ["runuser", "-u", user, "--", *argv]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return proc, Api(port)


def stop(procs: list[subprocess.Popen]) -> None:
    """Terminate the processes, and kill those that do not end within 10 s."""
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(5)
