"""`sgmon serve`: scrape the real endpoint and parse it with prometheus_client's own parser."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from paths import REPO

from sgmon.collector import Collector
from sgmon.engine import Engine
from sgmon.grading import RANK
from sgmon.hosts.sim import SimSource
from sgmon.judgement import Judge
from sgmon.model import Kind
from sgmon.sinks.prometheus import FrameCollector, counter_column, metric_name

parser = pytest.importorskip("prometheus_client.parser")
ROOT = REPO
PORT = 26364  # below the ephemeral range (32768-60999), so no client socket holds it


def _scrape(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text = r.read().decode()
    return {f.name: f for f in parser.text_string_to_metric_families(text)}


def _wait_port(port: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 30
    while True:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else "serve exited"
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        assert time.monotonic() < deadline, "serve did not listen"
        time.sleep(0.1)


def test_scrape_the_simulated_pair():
    proc = subprocess.Popen(
        [sys.executable, "-m", "sgmon", "serve", "--listen", f"127.0.0.1:{PORT}",
         "--simulate", "rto-stall", "--interval", "0.5", "--duration", "60"],
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        _wait_port(PORT, proc)
        time.sleep(2.5)
        first = _scrape(PORT)
        time.sleep(1.2)
        fams = _scrape(PORT)
    finally:
        proc.terminate()
        assert proc.wait(10) == 0
    ok = fams["sgmon_collector_success"]
    assert {s.labels["host"] for s in ok.samples} == {"primary", "standby"}
    assert {s.labels["role"] for s in ok.samples} == {"primary", "standby"}
    assert fams["sgmon_collector_duration_seconds"].type == "gauge"
    # wait events as real histograms: le in seconds, cumulative, +Inf == count
    h = fams["sgmon_oracle_waits_hist_seconds"]
    assert h.type == "histogram" and h.documentation.startswith("waits of the interval")
    lfs = [s for s in h.samples if s.labels.get("instance") == "log file sync"
           and s.labels["host"] == "primary"]  # fmt: skip
    buckets = [s for s in lfs if s.name.endswith("_bucket")]
    les = [float(s.labels["le"]) for s in buckets]
    assert les == sorted(les) and les[-1] == float("inf") and les[0] < 0.01
    counts = [s.value for s in buckets]
    assert counts == sorted(counts) and counts[-1] > 0
    count = next(s.value for s in lfs if s.name.endswith("_count"))
    assert count == counts[-1]
    # rates become counters that only grow
    c1 = first["sgmon_oracle_redo_user_commits"]
    c2 = fams["sgmon_oracle_redo_user_commits"]
    assert c2.type == "counter"
    v1 = {s.labels["host"]: s.value for s in c1.samples if s.name.endswith("_total")}
    v2 = {s.labels["host"]: s.value for s in c2.samples if s.name.endswith("_total")}
    assert all(v2[h] > v1[h] for h in v1)
    g = fams["sgmon_disk_w_await_ms"]
    assert g.type == "gauge" and "iostat w_await" in g.documentation
    assert {s.labels["host"] for s in g.samples} == {"primary", "standby"}
    info = fams["sgmon_oracle_dg_info"]
    assert any(s.labels.get("role") == "primary" and s.labels.get("instance") == "db"
               for s in info.samples)  # fmt: skip


def test_port_in_use_is_one_line():
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", PORT + 1))
        s.listen()
        r = subprocess.run(
            [sys.executable, "-m", "sgmon", "serve", "--listen", f"127.0.0.1:{PORT + 1}",
             "--duration", "2"],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("sgmon: --listen")
    assert "in use" in r.stderr
    r = subprocess.run(
        [sys.executable, "-m", "sgmon", "serve", "--listen", "nonsense"],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert r.returncode == 2 and r.stderr.startswith("sgmon: --listen")


class Hang(Collector):
    """A collector that never answers in time: the frame reports it stale."""

    name = "hang"
    fields = ()
    timeout = 0.05

    def sample(self):
        time.sleep(0.3)
        return {}


def test_stale_collector_and_silent_host_report_success_zero():
    from sgmon import registry

    eng = Engine([registry.load("cpu")(), Hang()], 0.2, host="h", role="standby")
    try:
        eng.tick()
        frame = eng.tick()
    finally:
        eng.close()
    col = FrameCollector(lambda h: eng.schema())
    judgement = Judge(schema_of=lambda h: eng.schema(), analysis=False)(frame)
    col(frame, judgement)
    fams = {f.name: f for f in col.collect()}
    ok = {s.labels["collector"]: s.value for s in fams["sgmon_collector_success"].samples}
    assert ok == {"cpu": 1.0, "hang": 0.0}
    assert "sgmon_cpu_usr_pct" in fams
    # the grades are the Judge's, the ones the dashboard and the status line show
    grades = {
        (g.labels["instance"], g.labels["field"]): g.value for g in fams["sgmon_grade"].samples
    }
    assert grades[("all", "idle")] == RANK[judgement.grade("cpu", "all", "idle")]
    assert ("all", "usr") not in grades  # no limit, no grade
    time.sleep(3 * 0.2 + 1.2)  # nothing new from the host for more than 3 intervals
    fams = {f.name: f for f in col.collect()}
    assert all(s.value == 0.0 for s in fams["sgmon_collector_success"].samples)
    assert "sgmon_cpu_usr_pct" not in fams  # no stale values


def _possible_names() -> set[str]:
    src = SimSource("healthy")
    names = {"sgmon_collector_success", "sgmon_collector_duration_seconds", "sgmon_grade"}
    for h in src.hosts:
        for c, fields in src.schema(h.name).items():
            names.add(metric_name(c, "info"))
            for f in fields:
                if f.kind is Kind.GAUGE:
                    names.add(metric_name(c, f.column))
                elif f.kind in (Kind.RATE, Kind.DELTA):
                    names.add(metric_name(c, counter_column(f)) + "_total")
                elif f.kind is Kind.HISTOGRAM:
                    base = metric_name(c, f.name + ("_seconds" if f.unit in ("ms", "s") else ""))
                    names |= {base + "_bucket", base + "_count", base + "_sum"}
    src.close()
    return names


def test_rules_and_dashboard_name_real_metrics():
    possible = _possible_names()
    rules = (ROOT / "deploy" / "prometheus-rules.yml").read_text()
    dash_text = (ROOT / "deploy" / "grafana-dashboard.json").read_text()
    dash = json.loads(dash_text)
    for text in (rules, dash_text):
        used = set(re.findall(r"\bsgmon_[a-z0-9_]+", text))
        assert used and used <= possible, used - possible
    titles = [p["title"] for p in dash["panels"] if p["type"] != "row"]
    assert sum("$primary" in t for t in titles) == sum("$standby" in t for t in titles) > 3
    if shutil.which("promtool") is None:
        pytest.skip("promtool not installed (Debian package prometheus)")
    r = subprocess.run(
        ["promtool", "check", "rules", str(ROOT / "deploy" / "prometheus-rules.yml")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
