"""Journey: a fleet watched by Prometheus, as an SRE team sets it up from docs/metrics.md.

`sgmon discover` writes the targets file; Debian's Prometheus, running as its own unprivileged
user (as the package runs it), reads the documented prometheus.yml, the shipped rules and that
file; `sgmon serve` watches one configuration whose transport then stops.  The SRE sees the
fault's alert firing with its runbook link, and, once serve is killed, an alert that says sgmon
stopped watching that configuration (its other alerts resolved because their series are gone,
not because the configuration is healthy).
"""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kits.prom import Api, documented_fleet, prometheus, stop
from paths import REPO

USER = "prometheus"
"""The user Debian's package runs Prometheus as."""
FAULT_ALERT = "SgmonSyncDestinationError"

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(shutil.which("prometheus") is None, reason="prometheus not installed"),
]


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


@pytest.fixture
def world() -> Iterator[Path]:
    """A directory Prometheus' user can walk (pytest's own are root's alone), removed after."""
    if not _user_exists(USER):
        pytest.skip(f"no {USER} user (Debian's prometheus package makes it)")
    d = Path(tempfile.mkdtemp(prefix="sgmon-fleet-"))
    d.chmod(0o755)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _firing(api: Api, name: str, deadline: float) -> dict:
    """The alert ``name`` once it fires, polled every second until ``deadline``."""
    while True:
        firing = [a for a in api.alerts() if a["labels"]["alertname"] == name]
        firing = [a for a in firing if a["state"] == "firing"]
        if firing:
            return firing[0]
        assert time.monotonic() < deadline, (name, api.alerts())
        time.sleep(1)


def _runbook(alert: dict) -> Path:
    """The document a firing alert's runbook link names, checked to hold its anchor."""
    url = alert["annotations"]["runbook_url"]
    doc, _, anchor = url.partition("#")
    path = REPO / doc
    text = path.read_text()
    headings = [line.lstrip("#").strip().lower().replace(" ", "-")
                for line in text.splitlines() if line.startswith("#")]  # fmt: skip
    assert anchor in headings or f'<a id="{anchor}"></a>' in text, (url, headings)
    return path


def test_discover_prometheus_as_its_user_then_the_alerts(world: Path) -> None:
    etc, data = world / "etc", world / "data"
    etc.mkdir(mode=0o755)
    data.mkdir()
    os.chown(data, pwd.getpwnam(USER).pw_uid, pwd.getpwnam(USER).pw_gid)
    cfg, port = documented_fleet(etc, world)
    assert stat.S_IMODE((etc / "targets.json").stat().st_mode) & 0o004  # others may read it
    serve = subprocess.Popen(
        [sys.executable, "-m", "sgmon", "serve", "--listen", f"127.0.0.1:{port}",
         "--config", str(cfg), "--simulate", "transport-stopped", "--onset", "10s",
         "--duration", "600s"],
        stderr=subprocess.DEVNULL, cwd=world,
    )  # fmt: skip
    prom, api = prometheus(etc / "prometheus.yml", data, user=USER)
    try:
        deadline = time.monotonic() + 45
        while not (api.ready() and api.query('up{job="sgmon", dg_config="PROD"}')):
            assert prom.poll() is None, prom.communicate()[1]
            assert time.monotonic() < deadline, "Prometheus scraped no target from the file"
            time.sleep(0.5)
        fault = _firing(api, FAULT_ALERT, time.monotonic() + 90)
        assert fault["labels"]["dg_config"] == "PROD", fault
        assert _runbook(fault).is_file()
        serve.kill()
        serve.wait(10)
        gone = _firing(api, "SgmonWatcherDown", time.monotonic() + 150)
        assert gone["annotations"]["summary"].startswith("PROD: sgmon stopped watching"), gone
        assert _runbook(gone).is_file()
    finally:
        stop([serve, prom])
    assert "permission denied" not in (prom.stderr.read() if prom.stderr else "").lower()
