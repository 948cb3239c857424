"""`sgmon serve --web.config.file`: TLS and basic authentication in the exporter-toolkit format,
checked by a real Prometheus scraping over TLS with a password, and by clients that lack one;
and the endpoint under slow and idle clients (slow loris, a flood of idle connections)."""

from __future__ import annotations

import base64
import contextlib
import socket
import ssl
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from kits.prom import free_port, prometheus, stop

USER, PASSWORD = "prom", "s3cret-pass"


def _cert(d: Path) -> Path:
    """A self-signed certificate for 127.0.0.1 and its key."""
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-nodes", "-keyout", str(d / "key.pem"), "-out", str(d / "cert.pem"), "-days", "2",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return d / "cert.pem"


def _web_config(d: Path, mode: int = 0o600) -> Path:
    import bcrypt

    hashed = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(rounds=10)).decode()
    cfg = d / "web.yml"
    cfg.write_text(
        "tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n"
        f"basic_auth_users:\n  {USER}: {hashed}\n"
    )
    cfg.chmod(mode)
    return cfg


def _serve(d: Path, port: int, *extra: str) -> subprocess.Popen[str]:
    p = subprocess.Popen(
        [sys.executable, "-m", "sgmon", "serve", "--listen", f"127.0.0.1:{port}",
         "--simulate", "healthy", "--duration", "120s", *extra],
        stderr=subprocess.PIPE, text=True, cwd=d,
    )  # fmt: skip
    assert p.stderr is not None
    line = p.stderr.readline()
    assert "serving metrics" in line, line + p.stderr.read()
    return p


def _get(url: str, ctx: ssl.SSLContext | None, auth: tuple[str, str] | None = None) -> int:
    req = urllib.request.Request(url)
    if auth is not None:
        token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
        req.add_header("Authorization", f"Basic {token}")
    try:
        with urllib.request.urlopen(req, timeout=10, context=ctx) as r:
            assert b"sgmon_build_info" in r.read()
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


@pytest.fixture
def tls_serve(tmp_path: Path):
    cert = _cert(tmp_path)
    web = _web_config(tmp_path)
    port = free_port()
    p = _serve(tmp_path, port, "--web.config.file", str(web))
    ctx = ssl.create_default_context(cafile=str(cert))
    try:
        yield tmp_path, port, ctx, cert
    finally:
        stop([p])


def test_clients_without_the_password_get_401(tls_serve) -> None:
    _, port, ctx, _ = tls_serve
    url = f"https://127.0.0.1:{port}/metrics"
    assert _get(url, ctx) == 401
    assert _get(url, ctx, (USER, "wrong")) == 401
    assert _get(url, ctx, ("nobody", PASSWORD)) == 401
    assert _get(url, ctx, (USER, PASSWORD)) == 200
    assert _get(url, ctx, (USER, PASSWORD)) == 200  # the remembered check answers alike
    with pytest.raises(OSError):  # no TLS, no answer (refused or reset)
        urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5)


def test_prometheus_scrapes_over_tls_with_basic_auth(tls_serve) -> None:
    d, port, _, cert = tls_serve
    (d / "prometheus.yml").write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        "scrape_configs:\n"
        "  - job_name: sgmon\n"
        "    scheme: https\n"
        f"    tls_config: {{ca_file: {cert}}}\n"
        f"    basic_auth: {{username: {USER}, password: {PASSWORD}}}\n"
        f"    static_configs: [{{targets: ['127.0.0.1:{port}']}}]\n"
        "  - job_name: sgmon-noauth\n"
        "    scheme: https\n"
        f"    tls_config: {{ca_file: {cert}}}\n"
        f"    static_configs: [{{targets: ['127.0.0.1:{port}']}}]\n"
    )
    prom, api = prometheus(d / "prometheus.yml", d / "data")
    try:
        deadline = time.monotonic() + 60
        up: dict[str, str] = {}
        while time.monotonic() < deadline:
            if api.ready():
                up = {r["metric"]["job"]: r["value"][1] for r in api.query("up")}
                if len(up) == 2 and api.query('sgmon_host_up{job="sgmon"}'):
                    break
            time.sleep(0.5)
        assert up == {"sgmon": "1", "sgmon-noauth": "0"}
        targets = api.get("/api/v1/targets")["activeTargets"]
        errors = {t["labels"]["job"]: t["lastError"] for t in targets}
        assert "401" in errors["sgmon-noauth"], errors
    finally:
        stop([prom])


def test_a_web_config_others_may_read_is_refused(tmp_path: Path) -> None:
    _cert(tmp_path)
    web = _web_config(tmp_path, mode=0o644)
    r = subprocess.run(
        [sys.executable, "-m", "sgmon", "serve", "--simulate", "healthy", "--duration", "2s",
         "--web.config.file", str(web)],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        f"sgmon: --web.config.file {web}: group or others may read it (mode 644); chmod 600 {web}"
    ]


def _scrape_times(port: int, seconds: float) -> list[float]:
    times: list[float] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t = time.monotonic()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
            r.read()
        times.append(time.monotonic() - t)
        time.sleep(0.3)
    return times


@pytest.mark.parametrize(("clients", "trickle"), [(300, True), (1100, False)],
                         ids=["slow-loris-300", "idle-1100"])  # fmt: skip
def test_scrapes_are_answered_beside_slow_and_idle_clients(
    tmp_path: Path, clients: int, trickle: bool
) -> None:
    """300 clients each sending a byte every 4 s (slow loris), or 1,100 that send nothing: every
    scrape is answered within a second.  Bounded: the clients end after 12 s."""
    port = free_port()
    p = _serve(tmp_path, port)
    socks: list[socket.socket] = []
    done = threading.Event()
    try:
        for _ in range(clients):
            socks.append(socket.create_connection(("127.0.0.1", port), timeout=5))
            if trickle:
                socks[-1].send(b"G")

        def drip() -> None:
            while not done.wait(4.0):
                for s in socks:
                    with contextlib.suppress(OSError):
                        s.send(b"E")

        if trickle:
            threading.Thread(target=drip, daemon=True).start()
        times = _scrape_times(port, 12.0)
    finally:
        done.set()
        for s in socks:
            s.close()
        stop([p])
    assert len(times) >= 10
    assert max(times) < 1.0, (max(times), statistics.median(times))
