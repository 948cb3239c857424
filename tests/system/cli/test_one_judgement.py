"""One recording, every sink: the dashboard, the status line, Prometheus, the recorder's
findings.csv, ``check --from`` and ``replay --summary`` must agree on every grade and finding
(Prometheus carries the findings, not the grades).

The recording is made by the real ``sgmon record`` (the simulated pair, standby IOPS capped) with
a config that moves one threshold, so a sink that graded on its own, or ignored the config,
would disagree.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

import themes
from sgmon.config import load_config
from sgmon.grading import RANK
from sgmon.hosts import HostInfo
from sgmon.hosts.replay import ReplaySource
from sgmon.judgement import judge_for
from sgmon.monitor import Monitor
from sgmon.sinks.prometheus import FrameCollector
from sgmon.sinks.statefile import StatePublisher
from sgmon.status import read_states
from sgmon.tui.feed import Feed
from sgmon.tui.palette import Palette
from sgmon.tui.timeline import Timeline

CONFIG = '[thresholds]\n"disk.aqu_sz" = { warn = 10, crit = 100 }\n'


def sgmon(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sgmon", *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("judged")
    cfg = d / "sgmon.toml"
    cfg.write_text(CONFIG)
    r = sgmon(
        "record", "--simulate", "standby-iops-cap", "--onset", "3", "--speed", "10",
        "--duration", "25s", "--dir", str(d / "rec"), "--config", str(cfg), "--quiet",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return d / "rec", cfg


def _played(rec: Path, cfg: Path, run_dir: Path):
    """Play the recording through one Monitor into the dashboard's feed, the status line and
    the exporter at once, as a dashboard replay judges it."""
    config = load_config(str(cfg))
    src = ReplaySource(str(rec), speed=0)
    judge = judge_for(config, [src])
    mon = Monitor([src], history=10_000, judge=judge)
    feed = Feed(mon.history, judge, keep=10_000)
    status, prom = StatePublisher(run_dir), FrameCollector(src.schema)
    mon.sinks += [feed.add, status, prom]
    mon.start()
    assert mon.wait(60)
    mon.stop()
    return mon, feed, status, prom, config


def test_every_sink_grades_every_cell_alike(recording, tmp_path) -> None:
    rec, cfg = recording
    mon, feed, status, _, config = _played(rec, cfg, tmp_path)
    timeline = Timeline(mon, feed, config)
    palette = Palette.from_variables("sgmon-dark", themes.load_themes()["sgmon-dark"]["variables"])
    states = read_states(tmp_path)
    items = {h: e["items"] for h, e in states.items()}
    seen = {"warn": 0, "crit": 0, "override": 0}
    for host in ("primary", "standby"):
        last = mon.history.latest(host)
        view = timeline.pane_view(
            HostInfo(host, last.role), last.time, [], feed.state_at(last.time), palette
        )
        for c, res in last.collectors.items():
            for inst, row in res.rows.items():
                for name, v in row.items():
                    if not isinstance(v, int | float):
                        continue
                    shown = view.severity(c, inst, name)
                    seen[shown] = seen.get(shown, 0) + 1
                    if c == "disk" and name == "aqu_sz" and 1 <= v < 10:
                        # the seeds warn from 1; this config from 10, for every sink
                        seen["override"] += 1
                        outlier = view.judgement.outlier(c, inst, name)
                        assert shown == (outlier.severity if outlier else "ok"), (host, inst, v)
        disks = last.rows("disk")
        busiest = max(disks, key=lambda d: disks[d].get("aqu_sz") or 0)
        cells = {
            "lfs": [("oracle_waits", "log file sync", f) for f in ("avg", "p99")],
            "srw": [("oracle_waits", "SYNC Remote Write", "avg")],
            "rfs": [("oracle_waits", "RFS write", "avg")],
            "aqu": [("disk", busiest, "aqu_sz")],
            "await": [("disk", busiest, "w_await")],
            "rto": [("tcp", s, "rto") for s in last.rows("tcp") if s != "host"],
            "rtx": [("tcp", s, "retransmits") for s in last.rows("tcp") if s != "host"],
        }
        assert items[host], host
        for label, _text, sev in items[host]:
            if label == "<-":  # the cause: the dashboard's leading finding, on its host
                state = feed.state_at(last.time)
                lead = next(f for f in state.findings if f.active and f.severity != "info")
                assert (lead.host, lead.severity) == (host, sev), (host, lead)
                continue
            want = max((view.severity(*cell) for cell in cells[label]), key=RANK.__getitem__)
            assert sev == want, (host, label)
    assert seen["crit"] and seen["warn"] and seen["override"], seen  # grades to disagree on
    status.close()


def test_every_sink_reports_the_same_findings(recording, tmp_path) -> None:
    rec, cfg = recording
    mon, feed, status, prom, _ = _played(rec, cfg, tmp_path)
    status.close()
    last = max(f.time for h in mon.history.hosts() for f in mon.history.frames(h))
    dashboard = {(f.rule, f.host, f.start) for f in feed.state_at(last).findings}
    scraped = {
        (s.labels["rule"], s.labels["host"], s.value)
        for fam in prom.collect()
        if fam.name == "sgmon_finding"
        for s in fam.samples
    }
    active = {(f.rule, f.host, f.start) for f in feed.state_at(last).findings if f.active}
    assert scraped == active and active, (scraped, active)
    logged = set()
    for host in ("primary", "standby"):
        with open(rec / host / "findings.csv", newline="") as fh:
            for row in csv.DictReader(fh):
                if row["event"] == "open":
                    logged.add((row["rule"], row["host"], row["start"]))
    r = sgmon("check", "--from", str(rec), "--config", str(cfg), "--format", "json")
    checked = {(f["rule"], f["host"], f["start"]) for f in json.loads(r.stdout)["findings"]}
    assert checked == dashboard and dashboard, (checked, dashboard)
    from sgmon.archive import fmt_time

    assert {(rule, h, fmt_time(t)) for rule, h, t in dashboard} == logged
    summary = sgmon("replay", str(rec), "--summary", "--config", str(cfg)).stdout
    listed = [ln for ln in summary.splitlines() if ln.startswith("  ") and ": " in ln][
        : len(dashboard)
    ]
    assert len(listed) == len(dashboard), summary
    titles = {f.title for f in feed.state_at(last).findings}
    assert all(any(t in ln for t in titles) for ln in listed), summary


def test_a_remote_third_party_collector_is_graded_by_its_own_declaration() -> None:
    """A collector installed only on the far side (an agent's plug-in) declares its limits in
    the schema the agent sends; the grades and the analysis use them, not this machine's
    collector classes, which know nothing of it."""
    from sgmon import registry
    from sgmon.judgement import Judge
    from sgmon.model import CollectorResult, Field, Frame, Kind, Status

    assert "asm_latency" not in registry.names()
    field = Field("read_ms", "ms", Kind.GAUGE, "ASM disk group read time", warn=100, crit=400)
    judge = Judge(schema_of=lambda host: {"asm_latency": (field,)}, live=False)
    verdicts = []
    for t in range(4):
        rows = {"DATA": {"read_ms": 500.0 if t >= 2 else 20.0}}
        frame = Frame(
            "far", 1_800_000_000.0 + t, t, 1.0, {"asm_latency": CollectorResult(Status.OK, rows)}
        )
        verdicts.append(judge(frame))
    assert verdicts[1].grade("asm_latency", "DATA", "read_ms") == "ok"
    last = verdicts[-1]
    assert last.grade("asm_latency", "DATA", "read_ms") == "crit"
    outlier = last.outlier("asm_latency", "DATA", "read_ms")
    assert outlier is not None and outlier.severity == "crit" and outlier.unit == "ms"
    assert "read_ms 500 ms >= 400 ms (default limit)" in outlier.reason
