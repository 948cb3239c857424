"""`sgmon serve`: scrape the real endpoint and parse it with prometheus_client's own parser."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from paths import REPO

from sgmon.collector import Collector, Unavailable
from sgmon.engine import Engine
from sgmon.hosts.sim import SimSource
from sgmon.judgement import Judge
from sgmon.model import Kind
from sgmon.sinks.prometheus import CONTRACT, FrameCollector, metric_name

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
    ok = fams["sgmon_scrape_collector_success"]
    assert {s.labels["host"] for s in ok.samples} == {"primary", "standby"}
    # self-metrics: each collector's time in the tick, the judgement's, the process'
    took = fams["sgmon_scrape_collector_duration_seconds"]
    assert {(s.labels["host"], s.labels["collector"]) for s in took.samples} == {
        (s.labels["host"], s.labels["collector"]) for s in ok.samples
    }
    assert all(0 <= s.value < 5 for s in took.samples)
    judged = fams["sgmon_analysis_duration_seconds"]
    assert judged.type == "summary"
    n1 = {s.labels["host"]: s.value for s in first["sgmon_analysis_duration_seconds"].samples
          if s.name.endswith("_count")}  # fmt: skip
    n2 = {s.labels["host"]: s.value for s in judged.samples if s.name.endswith("_count")}
    assert set(n2) == {"primary", "standby"} and all(n2[h] > n1.get(h, 0) for h in n2)
    assert all(s.value > 0 for s in judged.samples if s.name.endswith("_sum"))
    assert fams["process_cpu_seconds"].samples[0].value > 0
    assert fams["process_resident_memory_bytes"].samples[0].value > 0
    # identity on every series; the role only on an info metric; never instance or job
    for fam in fams.values():
        for s in fam.samples:
            assert "instance" not in s.labels and "job" not in s.labels, s
            assert "role" not in s.labels or fam.name.endswith("_info"), s
            if fam.name != "sgmon_build_info" and fam.name.startswith("sgmon_"):
                assert {"dg_config", "db_unique_name", "host"} <= set(s.labels), s
    roles = {s.labels["host"]: s.labels["role"] for s in fams["sgmon_host_info"].samples}
    assert roles == {"primary": "primary", "standby": "standby"}
    assert fams["sgmon_build_info"].samples[0].labels["contract"] == CONTRACT == "2"
    # wait events as real histograms: one fixed le set in seconds, cumulative, +Inf == count
    h = fams["sgmon_oracle_waits_seconds"]
    assert h.type == "histogram" and h.documentation.startswith("waits of the interval")
    lfs = [s for s in h.samples if s.labels.get("event") == "log file sync"
           and s.labels["host"] == "primary"]  # fmt: skip
    assert {s.labels["db_unique_name"] for s in lfs} == {"PROD"}
    buckets = [s for s in lfs if s.name.endswith("_bucket")]
    les = [float(s.labels["le"]) for s in buckets]
    assert les == [2**e / 1e6 for e in range(8, 21)] + [float("inf")]
    per_event = {}
    for s in h.samples:
        if s.name.endswith("_bucket"):
            per_event.setdefault((s.labels["host"], s.labels["event"]), []).append(s.labels["le"])
    assert all(v == per_event[("primary", "log file sync")] for v in per_event.values())
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
    assert v2["primary"] > v1["primary"] and all(v2[h] >= v1[h] for h in v1)
    assert v1["standby"] == v2["standby"] == 0  # there from the start: a standby commits nothing
    # base units: seconds and ratios, not ms and %
    g = fams["sgmon_disk_w_await_seconds"]
    assert g.type == "gauge" and "iostat w_await" in g.documentation
    assert {s.labels["host"] for s in g.samples} == {"primary", "standby"}
    assert all(s.value < 1 for s in g.samples)  # seconds: a 1 ms write is 0.001
    idle = fams["sgmon_cpu_idle_ratio"].samples
    assert len(idle) == 2 and all(0 <= s.value <= 1 and "cpu" not in s.labels for s in idle)
    assert {s.labels["device"] for s in fams["sgmon_disk_util_ratio"].samples} >= {"sdb"}
    # the volatile text only on *_info, the lag's datum nowhere, no PID in a label
    info = fams["sgmon_oracle_dg_info"]
    assert {s.labels["oracle_db_role"] for s in info.samples} == {"primary", "standby"}
    assert "lag_datum" not in str(fams)
    procs = {s.labels["process"] for s in fams["sgmon_procs_cpu_seconds"].samples}
    assert "RFS" in procs and not any("[" in p for p in procs)


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


class Absent(Collector):
    """A collector that cannot run on the host (as procs on a host with nothing installed)."""

    name = "absent"
    fields = ()

    def open(self) -> None:
        raise Unavailable("needs sgmon installed on the host")


def test_stale_collector_and_silent_host_report_success_zero():
    from sgmon import registry

    eng = Engine([registry.load("cpu")(), Hang(), Absent()], 0.2, host="h", role="standby")
    try:
        eng.tick()
        frame = eng.tick()
    finally:
        eng.close()
    col = FrameCollector(lambda h: eng.schema())
    judgement = Judge(schema_of=lambda h: eng.schema(), analysis=False)(frame)
    col(frame, judgement)
    fams = {f.name: f for f in col.collect()}
    ok = {s.labels["collector"]: s.value for s in fams["sgmon_scrape_collector_success"].samples}
    assert ok == {"cpu": 1.0, "hang": 0.0}  # "absent" cannot run there: no scrape of it fails
    took = fams["sgmon_scrape_collector_duration_seconds"].samples
    took = {s.labels["collector"]: s.value for s in took}
    assert took["cpu"] < 0.05 and took["hang"] >= 0.05  # a stale one: how long it has been busy
    assert "sgmon_cpu_usr_ratio" in fams
    assert [s.value for s in fams["sgmon_host_up"].samples] == [1.0]
    time.sleep(3 * 0.2 + 1.2)  # nothing new from the host for more than 3 intervals
    fams = {f.name: f for f in col.collect()}
    assert all(s.value == 0.0 for s in fams["sgmon_scrape_collector_success"].samples)
    assert [s.value for s in fams["sgmon_host_up"].samples] == [0.0]
    assert "sgmon_cpu_usr_ratio" not in fams  # no stale values
    assert "sgmon_scrape_collector_duration_seconds" not in fams


def _possible_names() -> set[str]:
    src = SimSource("healthy")
    names = {
        "sgmon_build_info", "sgmon_host_up", "sgmon_host_info", "sgmon_scrape_collector_success",
        "sgmon_scrape_collector_duration_seconds", "sgmon_analysis_duration_seconds_count",
        "sgmon_analysis_duration_seconds_sum", "sgmon_finding", "sgmon_oracle_dg_dest_info",
        "sgmon_unreceived_redo_bytes", "sgmon_incident_explained_ratio",
        *(f"sgmon_unprotected_{n}_total"
          for n in ("commits", "redo_bytes", "seconds", "hung_seconds")),
    }  # fmt: skip
    for h in src.hosts:
        for c, fields in src.schema(h.name).items():
            names.add(f"sgmon_{c}_info")
            for f in fields:
                name = metric_name(c, f)
                if name is None:
                    continue
                if f.kind in (Kind.RATE, Kind.DELTA):
                    names.add(name + "_total")
                elif f.kind is Kind.HISTOGRAM:
                    names |= {name + "_bucket", name + "_count", name + "_sum"}
                else:
                    names.add(name)
    src.close()
    return names


def test_rules_and_dashboards_name_real_metrics():
    possible = _possible_names()
    rules = (ROOT / "deploy" / "prometheus_rules.yaml").read_text()
    alerts = (ROOT / "deploy" / "prometheus_alerts.yaml").read_text()
    recorded = set(re.findall(r"record: (\S+)", rules))
    dashboards = sorted((ROOT / "deploy" / "dashboards_out").glob("*.json"))
    assert [d.name for d in dashboards] == [
        "sgmon-configuration.json", "sgmon-fleet.json", "sgmon-host.json",
    ]  # fmt: skip
    for text in (rules, alerts, *(d.read_text() for d in dashboards)):
        plain = re.sub(r"\w+:\w+:\w+", "", text)  # recording rules: level:metric:operations
        used = set(re.findall(r"\bsgmon_[a-z0-9_]+", plain))
        assert used and used <= possible, used - possible
        assert not re.search(r"\binstance=", text)  # a dimension is never Prometheus' label
        for name in re.findall(r"\b(dg_config\w*:\w+:\w+)", text):
            assert name in recorded, name
    # the committed dashboards are what deploy/dashboards.py writes
    r = subprocess.run(
        [sys.executable, "-c", "import json, dashboards; print(json.dumps(dashboards.build()))"],
        cwd=ROOT / "deploy", capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    built = json.loads(r.stdout)
    for d in dashboards:
        assert json.loads(d.read_text()) == built[d.name], "run python deploy/dashboards.py"
    # promtool checks and unit-tests them: tests/system/prometheus/test_promtool.py
    # every alert has a severity, a summary, a description and a runbook
    for block in alerts.split("- alert: ")[1:]:
        for key in ("severity: ", "summary: ", "description: ", "runbook_url: "):
            assert key in block, block.splitlines()[0]


def test_the_dashboards_type_check():
    """deploy/dashboards.py is written against Grafana's typed SDK: mypy refuses a panel
    option, an enum value or a builder Grafana's schema does not have (the script itself
    refuses what the builders take but Grafana would not show, when it runs)."""
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--python-version", "3.11",
         "--cache-dir", "/dev/null", "panels.py", "dashboards.py"],
        cwd=ROOT / "deploy", capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_contract_names_every_metric():
    doc = (ROOT / "docs" / "metrics.md").read_text()
    assert f"Contract version **{CONTRACT}**" in doc
    for name in _possible_names():
        base = re.sub(r"_(bucket|count|sum)$", "", name)
        if base.endswith("_info") and base != "sgmon_host_info":
            continue  # one row for the *_info family
        assert f"`{base}`" in doc, base


def test_a_third_party_collector_never_takes_a_reserved_label():
    from sgmon.grading import Grader
    from sgmon.model import CollectorResult, Field, Frame, Status
    from sgmon.verdicts import Judgement

    fields = (
        Field("depth", "ms", Kind.GAUGE, "queue depth"),
        Field("host", "", Kind.TEXT, "the peer's host"),
        Field("instance", "", Kind.TEXT, "its instance"),
        Field("item", "", Kind.TEXT, "its item"),
    )
    row = {"depth": 2.0, "host": "x9", "instance": "orcl2", "item": "q"}
    frame = Frame("h1", time.time(), 1, 1.0, {"queues": CollectorResult(Status.OK, {"q-1": row})})
    col = FrameCollector(lambda h: {"queues": fields})
    col(frame, Judgement(frame, Grader()))
    fams = {f.name: f for f in col.collect()}
    (depth,) = fams["sgmon_queues_depth_seconds"].samples
    assert depth.labels == {"dg_config": "sgmon", "db_unique_name": "", "host": "h1",
                            "item": "q-1"} and depth.value == 0.002  # fmt: skip
    (info,) = fams["sgmon_queues_info"].samples
    assert info.labels["host"] == "h1" and info.labels["item"] == "q-1"
    assert info.labels["queues_host"] == "x9" and info.labels["queues_instance"] == "orcl2"
    assert info.labels["queues_item"] == "q" and "instance" not in info.labels


def test_a_fields_declaration_says_what_is_exposed():
    from sgmon.grading import Grader
    from sgmon.model import CollectorResult, Field, Frame, Status
    from sgmon.verdicts import Judgement

    fields = (
        Field("depth", "ms", Kind.GAUGE, "queue depth"),
        Field("pid", "", Kind.GAUGE, "its process id", export=False),
        Field("mode", "", Kind.TEXT, "its mode", label="queue_mode"),
        Field("owner", "", Kind.TEXT, "who owns it", export=False),
    )
    rows = {"all": {"depth": 1.0}, "q-1": {"depth": 2.0, "pid": 42, "mode": "fifo", "owner": "x"}}
    frame = Frame("h1", time.time(), 1, 1.0, {"queues": CollectorResult(Status.OK, rows)})
    col = FrameCollector(lambda h: {"queues": fields})
    col(frame, Judgement(frame, Grader()))
    fams = {f.name: f for f in col.collect()}
    assert not any("pid" in name for name in fams)
    depth = {s.labels.get("item"): s.value for s in fams["sgmon_queues_depth_seconds"].samples}
    assert depth == {None: 0.001, "q-1": 0.002}  # the whole row carries no dimension
    (info,) = fams["sgmon_queues_info"].samples
    assert info.labels["queue_mode"] == "fifo" and "owner" not in info.labels


def test_per_cpu_rows_only_on_request():
    from sgmon.grading import Grader
    from sgmon.sim import SimPair
    from sgmon.verdicts import Judgement

    pair = SimPair("healthy")
    try:
        frames = [f for _ in range(2) for f in pair.step()]
    finally:
        pair.close()
    each = {i for i in frames[0].rows("cpu") if i != "all"}
    assert each
    for per_cpu in (False, True):
        col = FrameCollector(pair.schema, per_cpu=per_cpu)
        for f in frames:
            col(f, Judgement(f, Grader()))
        fams = {f.name: f for f in col.collect()}
        cpus = {s.labels.get("cpu") for s in fams["sgmon_cpu_idle_ratio"].samples}
        assert cpus == ({None} | each if per_cpu else {None})  # None: the all-CPU row


def test_every_counter_from_the_first_scrape_that_has_its_row():
    """A counter is exposed at 0 from the first frame that has its row, even with no value yet
    (the standby's log switches before the first switch), so ``increase()`` sees the first
    increase: a scrape right after start against one after the scenario's log switches."""
    from sgmon.grading import Grader
    from sgmon.sim import SimPair
    from sgmon.verdicts import Judgement

    def counters(col: FrameCollector) -> set[tuple]:
        return {
            (s.name, tuple(sorted((k, v) for k, v in s.labels.items() if k != "le")))
            for fam in col.collect() if fam.type in ("counter", "histogram", "summary")
            for s in fam.samples
        }  # fmt: skip

    pair = SimPair("log-switch-storm", onset=5.0)
    col = FrameCollector(pair.schema)
    try:
        first = pair.step()
        for f in first:
            col(f, Judgement(f, Grader()))
        at_start = counters(col)
        for _ in range(60):
            for f in pair.step():
                col(f, Judgement(f, Grader()))
        later = counters(col)
    finally:
        pair.close()
    switches = {s for s in later if s[0] == "sgmon_oracle_dg_log_switches_total"}
    assert {dict(s[1])["host"] for s in switches} == {"primary", "standby"}
    # only the row the first frame did not have: the simulated primary's V$LOG_HISTORY is empty
    # until its first switch
    assert {dict(s[1])["host"] for s in later - at_start} == {"primary"}
    assert all(s in switches for s in later - at_start)
    assert not any(f.rows("oracle_dg").get("thread_1") for f in first if f.host == "primary")


def test_rendered_once_a_tick_for_the_formats_scraped_and_never_for_nobody():
    """The exposition is rendered by the sink once every host's frame of a tick is in, for each
    format scraped since its last rendering; a format nobody asked for since is dropped, and
    the next scrape renders it; the scrapes in between take the same bytes."""
    from sgmon.commands.serve import ScrapeServer
    from sgmon.grading import Grader
    from sgmon.sim import SimPair
    from sgmon.verdicts import Judgement

    pair = SimPair("healthy")
    server = ScrapeServer(pair.schema, "127.0.0.1", 0, hosts=[h for h, _ in pair.hosts])
    renders: list[tuple] = []
    real = server._render
    server._render = lambda *a: renders.append(a) or real(*a)  # type: ignore[method-assign]

    def frames() -> list:
        return [(f, Judgement(f, Grader())) for f in pair.step()]

    try:
        for f, j in frames():
            server(f, j)
        assert renders == []  # nobody scraped: nothing rendered
        server.render("", False)
        assert len(renders) == 1
        for f, j in frames():
            server(f, j)
        assert len(renders) == 1  # not asked since its rendering: dropped, not rendered again
        _, body = server.render("", False)
        assert len(renders) == 2
        assert server.render("", False)[1] is body  # the same bytes, asked after its rendering
        (first, j1), (last, j2) = frames()
        server(first, j1)
        assert len(renders) == 2  # the tick is not all in yet
        server(last, j2)
        assert len(renders) == 3  # now it is: rendered in the sink, for the scrapes to come
        _, fresh = server.render("", False)
        assert len(renders) == 3 and fresh != body
    finally:
        server.close()
        pair.close()
