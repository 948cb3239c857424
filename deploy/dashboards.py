"""The Grafana dashboards of sgmon's mixin, written to deploy/dashboards_out/ (the monitoring
mixins' layout): a fleet table of Data Guard configurations ranked by commit time, one
configuration with its primary and standbys side by side (as sgmon's own screen), and one host.

Every query names metrics of the contract in docs/metrics.md and the recording rules of
deploy/prometheus_rules.yaml; tests/test_prometheus_live.py runs each against a Prometheus that
scraped `sgmon serve --simulate` and fails on one that returns nothing.

Usage: python deploy/dashboards.py   (rewrites deploy/dashboards_out/*.json)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).with_name("dashboards_out")
DS = {"type": "prometheus", "uid": "${datasource}"}
CFG = 'dg_config="$dg_config"'
PRIMARY = f'{CFG}, host=~"$primary"'
STANDBY = f'{CFG}, host=~"$standby"'
HOST = f'{CFG}, host="$host"'
COMMIT_EVENTS = "log file sync|log file parallel write|SYNC Remote Write|Redo Transport MISC"
STANDBY_EVENTS = "RFS write|RFS random i/o|RFS dispatch|Standby redo I/O"
P99 = "dg_config_host_event:sgmon_oracle_waits_seconds:p99_rate1m"


def target(expr: str, legend: str = "", instant: bool = False, ref: str = "A") -> dict[str, Any]:
    """One query of a panel."""
    t: dict[str, Any] = {"datasource": DS, "expr": expr, "refId": ref, "legendFormat": legend}
    if instant:
        t |= {"instant": True, "range": False, "format": "table"}
    return t


def panel(
    title: str, targets: list[dict], unit: str = "short", kind: str = "timeseries", **extra: Any
) -> dict[str, Any]:
    """A panel; its position is set by ``layout``."""
    refs = "ABCDEFGH"
    for i, t in enumerate(targets):
        t["refId"] = refs[i]
    p = {
        "type": kind,
        "title": title,
        "datasource": DS,
        "targets": targets,
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
    }
    p.update(extra)
    return p


def layout(rows: list[list[dict]], height: int = 8) -> list[dict]:
    """Panels in rows of equal width (a row of two: primary left, standby right)."""
    out = []
    y = 0
    for row in rows:
        w = 24 // len(row)
        for i, p in enumerate(row):
            p["gridPos"] = {"h": height, "w": w, "x": i * w, "y": y}
            p["id"] = len(out) + 1
            out.append(p)
        y += height
    return out


def variable(name: str, query: str, multi: bool = False) -> dict[str, Any]:
    """A query variable filled from a label's values."""
    return {
        "name": name,
        "type": "query",
        "datasource": DS,
        "query": {"query": query, "refId": name},
        "definition": query,
        "refresh": 2,
        "multi": multi,
        "includeAll": multi,
        "sort": 1,
    }


def dashboard(uid: str, title: str, variables: list[dict], rows: list[list[dict]]) -> dict:
    """A whole dashboard with the datasource picker first."""
    ds = {"name": "datasource", "type": "datasource", "query": "prometheus", "label": "Data source"}
    return {
        "uid": uid,
        "title": title,
        "tags": ["sgmon", "oracle", "data-guard"],
        "timezone": "browser",
        "refresh": "10s",
        "time": {"from": "now-30m", "to": "now"},
        "schemaVersion": 39,
        "templating": {"list": [ds, *variables]},
        "panels": layout(rows),
    }


def table(title: str, targets: list[dict], **extra: Any) -> dict[str, Any]:
    """An instant table joining several queries on their labels."""
    return panel(
        title,
        targets,
        kind="table",
        transformations=[{"id": "merge", "options": {}}],
        **extra,
    )


def fleet() -> dict:
    """Every configuration in one table, the slowest commits first."""
    sort = {"sortBy": [{"displayName": "commit p99 (s)", "desc": True}]}
    rows = [
        [
            table(
                "Data Guard configurations, by commit-time risk",
                [
                    target("dg_config:sgmon_commit_seconds:p99_rate1m", instant=True),
                    target("dg_config:sgmon_finding_severity:max", instant=True),
                    target("dg_config:sgmon_host_up:sum", instant=True),
                    target("dg_config:sgmon_host_up:count", instant=True),
                    target("dg_config:sgmon_oracle_dg_transport_lag_seconds:max", instant=True),
                    target(
                        "count by (dg_config, protection_mode, protection_level) "
                        '(sgmon_oracle_dg_info{oracle_db_role="primary"})',
                        instant=True,
                    ),
                ],
                options=sort,
            )
        ],
        [
            panel(
                "log file sync p99, the ten slowest configurations",
                [target("topk(10, dg_config:sgmon_commit_seconds:p99_rate1m)", "{{dg_config}}")],
                unit="s",
            )
        ],
        [
            table(
                "Active findings",
                [target("sgmon_finding", instant=True)],
                description="What sgmon concluded, per host: rule, severity, since (value).",
            )
        ],
    ]
    return dashboard("sgmon-fleet", "sgmon / Data Guard fleet", [], rows)


def configuration() -> dict:
    """One configuration: the primary's panels left, the standby's right."""
    variables = [
        variable("dg_config", "label_values(sgmon_host_up, dg_config)"),
        variable(
            "primary",
            'label_values(sgmon_host_info{dg_config="$dg_config", role="primary"}, host)',
            multi=True,
        ),
        variable(
            "standby",
            'label_values(sgmon_host_info{dg_config="$dg_config", role!="primary"}, host)',
            multi=True,
        ),
    ]
    rate = "[$__rate_interval]"
    rows = [
        [
            table("Findings", [target(f"sgmon_finding{{{CFG}}}", instant=True)]),
            table("Databases", [target(f"sgmon_oracle_dg_info{{{CFG}}}", instant=True)]),
        ],
        [table("Destinations", [target(f"sgmon_oracle_dg_dest_info{{{CFG}}}", instant=True)])],
        [
            panel(
                "primary: commit path p99 (from the buckets)",
                [target(f'{P99}{{{PRIMARY}, event=~"{COMMIT_EVENTS}"}}', "{{host}} {{event}}")],
                unit="s",
            ),
            panel(
                "standby: redo receipt p99 (from the buckets)",
                [target(f'{P99}{{{STANDBY}, event=~"{STANDBY_EVENTS}"}}', "{{host}} {{event}}")],
                unit="s",
            ),
        ],
        [
            panel(
                "primary: log file sync histogram",
                [
                    target(
                        "sum by (le) (increase(sgmon_oracle_waits_seconds_bucket"
                        f'{{{PRIMARY}, event="log file sync"}}{rate}))',
                        "{{le}}",
                    )
                ],
                kind="heatmap",
            ),
            panel(
                "standby: transport and apply lag",
                [
                    target(
                        f"sgmon_oracle_dg_transport_lag_seconds{{{STANDBY}}}", "{{host}} transport"
                    ),
                    target(f"sgmon_oracle_dg_apply_lag_seconds{{{STANDBY}}}", "{{host}} apply"),
                ],
                unit="s",
            ),
        ],
        [
            panel(
                "primary: redo and commits per second",
                [
                    target(
                        f"rate(sgmon_oracle_redo_redo_size_bytes_total{{{PRIMARY}}}{rate})",
                        "{{host}} redo bytes",
                    ),
                    target(
                        f"rate(sgmon_oracle_redo_user_commits_total{{{PRIMARY}}}{rate})",
                        "{{host}} commits",
                    ),
                ],
            ),
            panel(
                "standby: redo received per second",
                [
                    target(
                        f"sgmon_oracle_dg_recv_rate_bytes_per_second{{{STANDBY}}}",
                        "{{host}} thread {{thread}}",
                    )
                ],
                unit="Bps",
            ),
        ],
        [
            side_panel("sockets", "primary", PRIMARY),
            side_panel("sockets", "standby", STANDBY),
        ],
        [
            side_panel("disks", "primary", PRIMARY),
            side_panel("disks", "standby", STANDBY),
        ],
        [
            side_panel("cpu", "primary", PRIMARY),
            side_panel("cpu", "standby", STANDBY),
        ],
    ]
    return dashboard("sgmon-configuration", "sgmon / one Data Guard configuration", variables, rows)


SIDE_PANELS: dict[str, tuple[str, str, list[tuple[str, str]]]] = {
    "sockets": (
        "Data Guard sockets, rto / rtt and retransmits",
        "s",
        [
            ("sgmon_tcp_rto_seconds{SEL}", "{{host}} rto"),
            ("sgmon_tcp_rtt_seconds{SEL}", "{{host}} rtt"),
            ("rate(sgmon_tcp_retransmits_total{SEL}[$__rate_interval])", "{{host}} retransmits/s"),
        ],
    ),
    "disks": (
        "disks, w_await and queue (iostat -x)",
        "s",
        [
            ("sgmon_disk_w_await_seconds{SEL}", "{{host}} {{device}} w_await"),
            ("sgmon_disk_aqu_sz{SEL}", "{{host}} {{device}} aqu-sz"),
        ],
    ),
    "cpu": (
        "CPU and run queue",
        "percentunit",
        [
            ("sgmon_cpu_usr_ratio{SEL}", "{{host}} usr"),
            ("sgmon_cpu_sys_ratio{SEL}", "{{host}} sys"),
            ("sgmon_cpu_iowait_ratio{SEL}", "{{host}} iowait"),
            ("sgmon_cpu_runq_sz{SEL}", "{{host}} runq-sz"),
        ],
    ),
    "paging": (
        "load and paging",
        "short",
        [
            ("sgmon_cpu_load1{SEL}", "load1"),
            ("rate(sgmon_paging_pgscank_total{SEL}[$__rate_interval])", "pgscank/s"),
            ("rate(sgmon_paging_pgscand_total{SEL}[$__rate_interval])", "pgscand/s"),
            ("rate(sgmon_paging_pswpout_total{SEL}[$__rate_interval])", "pswpout/s"),
        ],
    ),
    "iops": (
        "disks, IOPS and %util",
        "short",
        [
            ("sgmon_disk_w_per_second{SEL}", "{{device}} w/s"),
            ("sgmon_disk_r_per_second{SEL}", "{{device}} r/s"),
            ("sgmon_disk_util_ratio{SEL}", "{{device}} util"),
        ],
    ),
    "interfaces": (
        "interfaces, bytes and drops per second",
        "Bps",
        [
            ("rate(sgmon_netdev_rx_bytes_total{SEL}[$__rate_interval])", "{{device}} rx"),
            ("rate(sgmon_netdev_tx_bytes_total{SEL}[$__rate_interval])", "{{device}} tx"),
            ("rate(sgmon_netdev_rx_drop_total{SEL}[$__rate_interval])", "{{device}} rx drop"),
        ],
    ),
    "processes": (
        "processes, CPU and time waiting for a CPU (s/s)",
        "short",
        [
            ("rate(sgmon_procs_cpu_seconds_total{SEL}[$__rate_interval])", "{{process}} cpu"),
            ("rate(sgmon_procs_runq_seconds_total{SEL}[$__rate_interval])", "{{process}} runq"),
        ],
    ),
    "collectors": (
        "collectors answering",
        "short",
        [("sgmon_collector_success{SEL}", "{{collector}}")],
    ),
}
"""Panels drawn for each side of a configuration and for one host: title, unit, queries with
``{SEL}`` for the side's selector."""


def side_panel(kind: str, side: str, sel: str) -> dict:
    """One of ``SIDE_PANELS`` for the hosts ``sel`` selects."""
    title, unit, queries = SIDE_PANELS[kind]
    return panel(
        f"{side}: {title}",
        [target(q.replace("{SEL}", "{" + sel + "}"), legend) for q, legend in queries],
        unit=unit,
    )


def host() -> dict:
    """One host, every collector."""
    variables = [
        variable("dg_config", "label_values(sgmon_host_up, dg_config)"),
        variable("host", 'label_values(sgmon_host_up{dg_config="$dg_config"}, host)'),
    ]
    rows = [
        [
            panel(
                "wait events p99 (from the buckets)",
                [target(f"{P99}{{{HOST}}}", "{{event}}")],
                unit="s",
            ),
            panel(
                "wait events average",
                [
                    target(
                        f"dg_config_host_event:sgmon_oracle_waits_seconds:avg_rate1m{{{HOST}}}",
                        "{{event}}",
                    )
                ],
                unit="s",
            ),
        ],
        [side_panel("cpu", "host", HOST), side_panel("paging", "host", HOST)],
        [side_panel("disks", "host", HOST), side_panel("iops", "host", HOST)],
        [side_panel("interfaces", "host", HOST), side_panel("sockets", "host", HOST)],
        [side_panel("processes", "host", HOST), side_panel("collectors", "host", HOST)],
    ]
    return dashboard("sgmon-host", "sgmon / one host", variables, rows)


def build() -> dict[str, dict]:
    """File name -> dashboard."""
    return {
        "sgmon-fleet.json": fleet(),
        "sgmon-configuration.json": configuration(),
        "sgmon-host.json": host(),
    }


def main() -> None:
    """Write the dashboards."""
    OUT.mkdir(exist_ok=True)
    for name, dash in build().items():
        (OUT / name).write_text(json.dumps(dash, indent=2) + "\n")


if __name__ == "__main__":
    main()
