"""The shipped rules and alerts, as promtool checks them: syntax, unit tests in which every
alert has a case where it fires and one where it stays silent (deploy/tests/), the dashboards'
"stopped" transport queries on the recording rules, and `promtool check metrics` on what
`sgmon serve --simulate` exposes."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from kits.prom import free_port, stop
from paths import REPO

DEPLOY = REPO / "deploy"
ALERTS = DEPLOY / "prometheus_alerts.yaml"
TESTS = DEPLOY / "tests" / "prometheus_alerts_test.yaml"
RULE_TESTS = DEPLOY / "tests" / "prometheus_rules_test.yaml"


def _promtool(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    if shutil.which("promtool") is None:
        pytest.fail("promtool is missing: tests/run.sh installs Debian's prometheus package")
    return subprocess.run(
        ["promtool", *argv], cwd=DEPLOY, capture_output=True, text=True, timeout=120, input=stdin
    )


def test_promtool_checks_the_rules() -> None:
    r = _promtool("check", "rules", "prometheus_rules.yaml", "prometheus_alerts.yaml")
    assert r.returncode == 0, r.stdout + r.stderr


def test_promtool_runs_the_alert_unit_tests() -> None:
    r = _promtool("test", "rules", str(TESTS.relative_to(DEPLOY)))
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    assert "SUCCESS" in r.stdout


def test_promtool_runs_the_recording_rule_unit_tests() -> None:
    r = _promtool("test", "rules", str(RULE_TESTS.relative_to(DEPLOY)))
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    assert "SUCCESS" in r.stdout


def _stopped_query(dashboard: str) -> str:
    """The dashboard's one query that tells a stopped transport apart (its lag unknown)."""
    d = json.loads((DEPLOY / "dashboards_out" / dashboard).read_text())
    (expr,) = [t["expr"] for p in d["panels"] for t in p["targets"] if "lag_unknown" in t["expr"]]
    return expr


def test_a_stopped_transport_is_drawn_stopped_never_blank(tmp_path: Path) -> None:
    """The fleet table's largest transport lag and the configuration's transport panel, on the
    series of deploy/tests/prometheus_rules_test.yaml: a stopped standby is -1, which both
    dashboards map to the word "stopped", where the recorded lag alone has no value."""
    fleet = _stopped_query("sgmon-fleet.json")
    standbys = _stopped_query("sgmon-configuration.json")
    standbys = standbys.replace("$dg_config", "PROD").replace("$standby", "stby1|stby2")
    for d in ("sgmon-fleet.json", "sgmon-configuration.json"):
        text = (DEPLOY / "dashboards_out" / d).read_text()
        assert '"-1": {\n' in text and '"text": "stopped"' in text, d
    series = (
        RULE_TESTS.read_text().split("    input_series:\n", 1)[1].split("    promql_expr_test:")[0]
    )
    case = f"""rule_files: [{DEPLOY / "prometheus_rules.yaml"}]
evaluation_interval: 15s
tests:
  - interval: 15s
    input_series:
{series}    promql_expr_test:
      - expr: '{fleet}'
        eval_time: 1m
        exp_samples:
          - {{labels: '{{dg_config="PROD"}}', value: -1}}
          - {{labels: '{{dg_config="TEST"}}', value: 1}}
          - {{labels: '{{dg_config="DEV"}}', value: -1}}
      - expr: '{standbys}'
        eval_time: 1m
        exp_samples:
          - {{labels: '{{dg_config="PROD", host="stby1"}}', value: 3}}
          - {{labels: '{{dg_config="PROD", host="stby2"}}', value: -1}}
"""
    f = tmp_path / "stopped_test.yaml"
    f.write_text(case)
    r = _promtool("test", "rules", str(f))
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]


SCENARIOS = ("healthy", "rto-stall", "transport-stopped", "failover")


def _scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        return r.read().decode()


def test_promtool_check_metrics_on_real_scrapes(tmp_path: Path) -> None:
    """What `sgmon serve --simulate S` exposes passes `promtool check metrics` (names, units,
    HELP, types: the linter Prometheus ships), right after start and after the incident."""
    procs: dict[str, tuple[int, subprocess.Popen[str]]] = {}
    try:
        for sc in SCENARIOS:
            port = free_port()
            procs[sc] = port, subprocess.Popen(
                [sys.executable, "-m", "sgmon", "serve", "--listen", f"127.0.0.1:{port}",
                 "--simulate", sc, "--onset", "6s", "--speed", "3", "--interval", "1s",
                 "--duration", "90s"],
                stderr=subprocess.PIPE, text=True, cwd=tmp_path,
            )  # fmt: skip
        for _, p in procs.values():
            line = p.stderr.readline() if p.stderr else ""
            assert "serving metrics" in line, line
        scrapes: list[tuple[str, str]] = []
        for when, wait in (("at start", 2.0), ("after the onset", 6.0)):
            time.sleep(wait)
            scrapes += [(f"{sc} {when}", _scrape(port)) for sc, (port, _) in procs.items()]
    finally:
        stop([p for _, p in procs.values()])
    for what, text in scrapes:
        assert "sgmon_host_up" in text, what
        r = _promtool("check", "metrics", stdin=text)
        assert r.returncode == 0 and not (r.stdout + r.stderr).strip(), (what, r.stdout + r.stderr)


def _cases() -> dict[str, set[str]]:
    """alert -> the kinds of case the unit tests hold for it: ``fires``, ``silent``."""
    cases: dict[str, set[str]] = {}
    name = None
    for line in TESTS.read_text().splitlines():
        m = re.match(r"\s*alertname: (\w+)", line)
        if m:
            name = m.group(1)
            continue
        if name and re.match(r"\s*exp_alerts: \[\]", line):
            cases.setdefault(name, set()).add("silent")
        elif name and re.match(r"\s*exp_alerts:\s*$", line):
            cases.setdefault(name, set()).add("fires")
    return cases


def test_every_alert_has_a_firing_and_a_silent_case() -> None:
    shipped = re.findall(r"^\s*- alert: (\w+)", ALERTS.read_text(), re.M)
    assert len(shipped) >= 39
    cases = _cases()
    lacking = {a: sorted({"fires", "silent"} - cases.get(a, set())) for a in shipped}
    assert {a: k for a, k in lacking.items() if k} == {}
    assert set(cases) <= set(shipped), "a unit test names an alert that is not shipped"
