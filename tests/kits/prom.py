"""A real Prometheus for the tests: Debian's ``prometheus`` on a free loopback port, and its
HTTP API."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path

from paths import REPO


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


PROD = 'name = "PROD"\n[[host]]\nname = "primary"\n[[host]]\nname = "standby"\n'
"""A two-host configuration named PROD."""


def documented_fleet(etc: Path, config_dir: Path, config: str = PROD) -> tuple[Path, int]:
    """docs/metrics.md's prometheus.yml as written (its paths under ``etc``, 1 s intervals) with
    the shipped rules beside it, the configuration ``config`` (its TOML) in ``config_dir``, and
    `sgmon discover --serve` writing the targets file there: the configuration's file and the
    port serve listens on."""
    doc = (REPO / "docs" / "metrics.md").read_text()
    block = doc.split("```yaml\n", 1)[1].split("```", 1)[0]
    assert "honor_labels: true" in block and "file_sd_configs" in block
    (etc / "prometheus.yml").write_text(
        block.replace("/etc/prometheus/sgmon/", f"{etc}/").replace("15s", "1s")
    )
    for f in ("prometheus_rules.yaml", "prometheus_alerts.yaml"):
        shutil.copy(REPO / "deploy" / f, etc / f)
        (etc / f).chmod(0o644)
    cfg = config_dir / "sgmon.toml"
    cfg.write_text(config)
    cfg.chmod(0o600)
    port = free_port()
    r = subprocess.run(
        [sys.executable, "-m", "sgmon", "discover", "--config", str(cfg),
         "--serve", f"127.0.0.1:{port}", "--output", str(etc / "targets.json")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return cfg, port
