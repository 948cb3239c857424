"""The metric contract, the shipped rules and the dashboards against a real Prometheus.

One Prometheus (Debian's ``prometheus``, on a free loopback port, a temporary storage directory,
a default scrape job at 1 s, no ``honor_labels``) scrapes one `sgmon serve --simulate S` per
seed scenario plus a healthy control, each under its own configuration name (``dg_config``),
and loads deploy/prometheus_rules.yaml and deploy/prometheus_alerts.yaml as shipped.  Through
Prometheus' HTTP API it asserts: no ``exported_*`` label anywhere; the series set the same at two
times while healthy, and within the series budget; no alert, not even pending, while healthy;
each scenario's own alert firing within 60 s of its onset; every query of every dashboard in
deploy/dashboards_out returning data.  All scenarios run at once: about a minute and a half.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time

import pytest
from kits.prom import Api, documented_fleet, free_port, prometheus, stop
from paths import REPO

ROOT = REPO
DEPLOY = ROOT / "deploy"
SPEED = 2.0
ONSET = 40.0  # simulated seconds: 20 s of wall-clock time healthy
BUDGET = 540
EXPECTED = {
    "rto-stall": {"SgmonCommitsSlowedByRetransmitsCritical"},
    "standby-iops-cap": {"SgmonCommitsSlowedByStandbyIOCritical"},
    "log-switch-storm": {"SgmonCommitsSlowedByLogSwitches"},
    "primary-cpu-starved": {"SgmonCommitsSlowedByCpu"},
    "transport-stopped": {
        "SgmonSyncDestinationError",
        "SgmonStandbyReceivingNothing",
        "SgmonCommitsUnprotected",
    },
    "failover": {"SgmonHostSilent", "SgmonRoleChanged"},
}
"""Each seed scenario and the alerts it must fire; "healthy" runs beside them and fires none."""

pytestmark = pytest.mark.skipif(
    shutil.which("prometheus") is None, reason="prometheus not installed (Debian package)"
)


def _series(api: Api) -> set[tuple]:
    return {tuple(sorted(r["metric"].items())) for r in api.query('{__name__=~"sgmon_.+"}')}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """Six serves and one Prometheus; (api, onset wall time per scenario, serve processes)."""
    d = tmp_path_factory.mktemp("prom")
    procs: list[subprocess.Popen] = []
    try:
        targets = {}
        onsets = {}
        for sc in ["healthy", *EXPECTED]:
            port = free_port()
            cfg = d / f"{sc}.toml"
            cfg.write_text(f'name = "{sc}"\n')
            p = subprocess.Popen(
                [sys.executable, "-m", "sgmon", "serve", "--listen", f"127.0.0.1:{port}",
                 "--config", str(cfg), "--simulate", sc, "--onset", f"{ONSET:g}s",
                 "--speed", f"{SPEED:g}", "--duration", "400s"],
                stderr=subprocess.PIPE, text=True, cwd=d,
            )  # fmt: skip
            procs.append(p)
            targets[sc] = port
        for sc, p in zip(targets, procs, strict=True):
            line = p.stderr.readline() if p.stderr else ""
            assert "serving metrics" in line, line
            onsets[sc] = time.monotonic() + ONSET / SPEED
        (d / "prometheus.yml").write_text(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            f"rule_files: [{DEPLOY / 'prometheus_rules.yaml'}, "
            f"{DEPLOY / 'prometheus_alerts.yaml'}]\n"
            "scrape_configs:\n"
            "  - job_name: sgmon\n"
            "    static_configs:\n"
            f"      - targets: [{', '.join(f'127.0.0.1:{p}' for p in targets.values())}]\n"
        )
        prom, api = prometheus(d / "prometheus.yml", d / "data")
        procs.append(prom)
        deadline = time.monotonic() + 30
        while not api.ready():
            assert prom.poll() is None, prom.stderr.read() if prom.stderr else "exited"
            assert time.monotonic() < deadline, "prometheus did not become ready"
            time.sleep(0.2)
        yield api, onsets, procs
    finally:
        stop(procs)


def _healthy_until(api: Api, until: float) -> list[dict]:
    """Alerts seen (pending or firing) from now until ``until``, polled every second."""
    seen = []
    while time.monotonic() < until:
        seen += api.alerts()
        time.sleep(1.0)
    return seen


def _substitute(expr: str, values: dict[str, str]) -> str:
    expr = expr.replace("$__rate_interval", "15s")
    for k, v in values.items():
        expr = expr.replace(f"${k}", v)
    assert "$" not in expr, expr
    return expr


def _label_values(api: Api, query: str, values: dict[str, str]) -> list[str]:
    m = re.fullmatch(r"label_values\((.+), (\w+)\)", _substitute(query, values))
    assert m, query
    return sorted({r["metric"].get(m[2], "") for r in api.query(m[1])} - {""})


def test_contract_rules_and_dashboards_on_a_real_prometheus(fleet):
    api, onsets, procs = fleet
    first_onset = min(onsets.values())
    # healthy: every target up, the same series at two times, within budget, no alert at all
    deadline = time.monotonic() + 15
    while len(api.query('up{job="sgmon"} == 1')) < len(onsets):
        assert time.monotonic() < deadline, api.query("up")
        time.sleep(0.5)
    time.sleep(4)  # counters and histograms start after their first interval
    before = _series(api)
    alerts = _healthy_until(api, first_onset - 3)
    after = _series(api)
    assert alerts == [], alerts
    assert before, "no sgmon series scraped"
    assert before == after, (sorted(before ^ after))[:5]
    per_target = {
        r["metric"]["dg_config"]: int(r["value"][1])
        for r in api.query('count by (dg_config) ({__name__=~"sgmon_.+"})')
    }
    assert set(per_target) == set(onsets) and max(per_target.values()) <= BUDGET, per_target
    # the incident: each scenario's own alert fires within 60 s of its onset
    fired: dict[str, float] = {}
    wanted = {(sc, name) for sc, names in EXPECTED.items() for name in names}
    stray = []
    while wanted - set(fired) and time.monotonic() < max(onsets.values()) + 75:
        for a in api.alerts():
            sc = a["labels"].get("dg_config", "")
            if sc == "healthy":
                stray.append(a)
            key = (sc, a["labels"]["alertname"])
            if a["state"] == "firing" and key in wanted and key not in fired:
                fired[key] = time.monotonic() - onsets[sc]
        time.sleep(1.0)
    assert not stray, stray
    assert set(fired) == wanted, wanted - set(fired)
    print(
        "seconds from onset to firing:", {f"{k[0]} {k[1]}": round(v, 1) for k, v in fired.items()}
    )
    assert max(fired.values()) <= 60, fired
    # a stopped transport is -1 in the fleet table's largest transport lag (the word "stopped"
    # there), never a blank cell; a receiving standby's lag is its lag
    fleet_table = json.loads((DEPLOY / "dashboards_out" / "sgmon-fleet.json").read_text())
    (expr,) = [t["expr"] for p in fleet_table["panels"] for t in p["targets"]
               if "lag_unknown" in t["expr"]]  # fmt: skip
    lag = {r["metric"]["dg_config"]: float(r["value"][1]) for r in api.query(expr)}
    assert lag["transport-stopped"] == -1 and lag["healthy"] >= 0, lag
    # nothing Prometheus renamed: no exported_ label on any series, data or recorded
    names = {k for r in api.query('{__name__=~".+", job="sgmon"}') for k in r["metric"]}
    names |= {k for r in api.query('{__name__=~"dg_config.*:.+"}') for k in r["metric"]}
    assert not [n for n in names if n.startswith("exported_")], names
    assert {"dg_config", "db_unique_name", "host"} <= names and "instance" in names
    # every dashboard query returns data
    for f in sorted((DEPLOY / "dashboards_out").glob("*.json")):
        dash = json.loads(f.read_text())
        for values in _variable_sets(api, dash):
            for p in dash["panels"]:
                for t in p.get("targets", []):
                    expr = _substitute(t["expr"], values)
                    assert api.query(expr), f"{f.name} '{p['title']}' no data: {expr}"
    for p in procs[:-1]:
        assert p.poll() is None, p.args  # every serve still running


def _variable_sets(api: Api, dash: dict) -> list[dict[str, str]]:
    """The variable values to run a dashboard's queries with: the rto-stall configuration, and
    for the host dashboard each of its hosts; each variable's own query must find values."""
    values = {"dg_config": "rto-stall"}
    hosts: list[str] = []
    for v in dash["templating"]["list"]:
        if v["type"] != "query":
            continue
        found = _label_values(api, v["query"]["query"], values)
        assert found, f"{dash['uid']}: variable {v['name']} finds nothing"
        if v["name"] == "host":
            hosts = found
        elif v["name"] != "dg_config":
            values[v["name"]] = found[0]
    return [{**values, "host": h} for h in hosts] or [values]


def test_the_documented_fleet_config_with_discovered_targets(tmp_path):
    """docs/metrics.md's prometheus.yml as written, with targets from `sgmon discover --serve`:
    the serve is up under its configuration's name and nothing is renamed."""
    etc = tmp_path / "etc"
    etc.mkdir()
    cfg, port = documented_fleet(etc, tmp_path)
    prom, api = prometheus(etc / "prometheus.yml", tmp_path / "data")
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "sgmon", "serve", "--listen", f"127.0.0.1:{port}",
             "--config", str(cfg), "--simulate", "healthy", "--duration", "120s"],
            stderr=subprocess.DEVNULL, cwd=tmp_path,
        ),
        prom,
    ]  # fmt: skip
    try:
        deadline = time.monotonic() + 45
        while not (api.ready() and api.query('sgmon_host_up{dg_config="PROD"}')):
            assert time.monotonic() < deadline, "no sgmon series scraped through file_sd"
            time.sleep(0.5)
        assert [r["value"][1] for r in api.query('up{job="sgmon", dg_config="PROD"}')] == ["1"]
        hosts = {r["metric"]["host"] for r in api.query('sgmon_host_up{dg_config="PROD"}')}
        assert hosts == {"primary", "standby"}
        names = {k for r in api.query('{job="sgmon"}') for k in r["metric"]}
        assert not [n for n in names if n.startswith("exported_")], names
        groups = api.get("/api/v1/rules")["groups"]
        assert {g["name"] for g in groups} == {
            "sgmon.rules", "sgmon-configuration", "sgmon-commit-path",
        }  # fmt: skip
    finally:
        stop(procs)
