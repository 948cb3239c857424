"""The Grafana dashboards of sgmon's mixin, written to deploy/dashboards_out/ (the monitoring
mixins' layout): a fleet table of Data Guard configurations ranked by commit time, one
configuration with its primary and standbys side by side (as sgmon's own screen), and one host.

Built with Grafana's own typed SDK (``grafana-foundation-sdk``, in sgmon's ``[test]`` extras: the
product never imports it), so a panel, a query, a unit or a variable of a type Grafana does not
have is an error when this script runs, not a blank panel in Grafana (deploy/panels.py: the
builders as these dashboards use them, and the check each dashboard passes).

Every query names metrics of the contract in docs/metrics.md and the recording rules of
deploy/prometheus_rules.yaml; tests/system/prometheus/test_prometheus_live.py runs each against
a Prometheus that scraped `sgmon serve --simulate` and fails on one that returns nothing.

Usage: python deploy/dashboards.py   (rewrites deploy/dashboards_out/*.json)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from grafana_foundation_sdk.builders import common, heatmap, statetimeline
from grafana_foundation_sdk.builders import dashboard as dash
from grafana_foundation_sdk.models import dashboard as model
from grafana_foundation_sdk.models import units
from grafana_foundation_sdk.models.common import VisibilityMode
from panels import (
    LEGEND,
    SHOWN_STOPPED,
    TOOLTIP,
    Panel,
    dashboard,
    graph,
    query,
    rows_table,
    stopped_or,
    variable,
    with_queries,
)

OUT = Path(__file__).with_name("dashboards_out")
CFG = 'dg_config="$dg_config"'
PRIMARY = f'{CFG}, host=~"$primary"'
STANDBY = f'{CFG}, host=~"$standby"'
HOST = f'{CFG}, host="$host"'
COMMIT_EVENTS = "log file sync|log file parallel write|SYNC Remote Write|Redo Transport MISC"
STANDBY_EVENTS = "RFS write|RFS random i/o|RFS dispatch|Standby redo I/O"
P99 = "dg_config_host_event:sgmon_oracle_waits_seconds:p99_rate1m"


def fleet() -> dict[str, Any]:
    """Every configuration in one table, the slowest commits first."""
    lag = "dg_config:sgmon_oracle_dg_transport_lag_seconds:max"
    unknown = "dg_config:sgmon_oracle_dg_lag_unknown:max"
    configurations = rows_table(
        "Data Guard configurations, by commit-time risk",
        [
            query("dg_config:sgmon_commit_seconds:p99_rate1m", instant=True),
            query("dg_config:sgmon_finding_severity:max", instant=True),
            query("dg_config:sgmon_host_up:sum", instant=True),
            query("dg_config:sgmon_host_up:count", instant=True),
            query(stopped_or(lag, unknown, "dg_config"), instant=True),
            query(
                "count by (dg_config, protection_mode, protection_level) "
                '(sgmon_oracle_dg_info{oracle_db_role="primary"})',
                instant=True,
            ),
        ],
    )
    configurations.sort_by([common.TableSortByFieldState().display_name("commit p99").desc(True)])
    configurations.override_by_name(
        "Value #A",
        [
            model.DynamicConfigValue("displayName", "commit p99"),
            model.DynamicConfigValue("unit", units.Seconds),
        ],
    )
    configurations.override_by_name(
        "Value #E",
        [
            model.DynamicConfigValue("displayName", "largest transport lag"),
            model.DynamicConfigValue("unit", units.Seconds),
            model.DynamicConfigValue("mappings", SHOWN_STOPPED),
        ],
    )
    rows: list[list[Panel]] = [
        [configurations],
        [
            graph(
                "log file sync p99, the ten slowest configurations",
                [query("topk(10, dg_config:sgmon_commit_seconds:p99_rate1m)", "{{dg_config}}")],
                unit=units.Seconds,
            )
        ],
        [
            rows_table("Active findings", [query("sgmon_finding", instant=True)]).description(
                "What sgmon concluded, per host: rule, severity, since (value)."
            )
        ],
    ]
    return dashboard("sgmon-fleet", "sgmon / Data Guard fleet", [], rows)


def transport(sel: str) -> statetimeline.Panel:
    """Each standby's transport lag, or "stopped" where its transport stopped."""
    lag = f"sgmon_oracle_dg_transport_lag_seconds{{{sel}}}"
    unknown = f"sgmon_oracle_dg_lag_unknown{{{sel}}}"
    steps = [
        model.Threshold(None, "green"),
        model.Threshold(5, "yellow"),
        model.Threshold(30, "red"),
    ]
    return (
        with_queries(
            statetimeline.Panel(),
            "standby: redo transport, lag or stopped",
            [query(stopped_or(lag, unknown, "dg_config, host"), "{{host}}")],
        )
        .unit(units.Seconds)
        .mappings(SHOWN_STOPPED)
        .show_value(VisibilityMode.AUTO)
        .merge_values(True)
        .legend(LEGEND)
        .tooltip(TOOLTIP)
        .thresholds(dash.ThresholdsConfig().mode(model.ThresholdsMode.ABSOLUTE).steps(steps))
    )


def configuration() -> dict[str, Any]:
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
    rows: list[list[Panel]] = [
        [
            rows_table("Findings", [query(f"sgmon_finding{{{CFG}}}", instant=True)]),
            rows_table("Databases", [query(f"sgmon_oracle_dg_info{{{CFG}}}", instant=True)]),
        ],
        [
            rows_table(
                "Destinations", [query(f"sgmon_oracle_dg_dest_info{{{CFG}}}", instant=True)]
            ),
            transport(STANDBY),
        ],
        [
            graph(
                "primary: commit path p99 (from the buckets)",
                [query(f'{P99}{{{PRIMARY}, event=~"{COMMIT_EVENTS}"}}', "{{host}} {{event}}")],
                unit=units.Seconds,
            ),
            graph(
                "standby: redo receipt p99 (from the buckets)",
                [query(f'{P99}{{{STANDBY}, event=~"{STANDBY_EVENTS}"}}', "{{host}} {{event}}")],
                unit=units.Seconds,
            ),
        ],
        [
            with_queries(
                heatmap.Panel(),
                "primary: log file sync histogram",
                [
                    query(
                        "sum by (le) (increase(sgmon_oracle_waits_seconds_bucket"
                        f'{{{PRIMARY}, event="log file sync"}}{rate}))',
                        "{{le}}",
                    )
                ],
            )
            .unit(units.Short)
            .calculate(False),
            graph(
                "standby: transport and apply lag",
                [
                    query(
                        f"sgmon_oracle_dg_transport_lag_seconds{{{STANDBY}}}", "{{host}} transport"
                    ),
                    query(f"sgmon_oracle_dg_apply_lag_seconds{{{STANDBY}}}", "{{host}} apply"),
                ],
                unit=units.Seconds,
            ),
        ],
        [
            graph(
                "primary: redo and commits per second",
                [
                    query(
                        f"rate(sgmon_oracle_redo_redo_size_bytes_total{{{PRIMARY}}}{rate})",
                        "{{host}} redo bytes",
                    ),
                    query(
                        f"rate(sgmon_oracle_redo_user_commits_total{{{PRIMARY}}}{rate})",
                        "{{host}} commits",
                    ),
                ],
            ),
            graph(
                "standby: redo received per second",
                [
                    query(
                        f"sgmon_oracle_dg_recv_rate_bytes_per_second{{{STANDBY}}}",
                        "{{host}} thread {{thread}}",
                    )
                ],
                unit=units.BytesPerSecondSI,
            ),
        ],
        [side_panel("sockets", "primary", PRIMARY), side_panel("sockets", "standby", STANDBY)],
        [side_panel("disks", "primary", PRIMARY), side_panel("disks", "standby", STANDBY)],
        [side_panel("cpu", "primary", PRIMARY), side_panel("cpu", "standby", STANDBY)],
    ]
    return dashboard("sgmon-configuration", "sgmon / one Data Guard configuration", variables, rows)


SIDE_PANELS: dict[str, tuple[str, str, list[tuple[str, str]]]] = {
    "sockets": (
        "Data Guard sockets, rto / rtt and retransmits",
        units.Seconds,
        [
            ("sgmon_tcp_rto_seconds{SEL}", "{{host}} rto"),
            ("sgmon_tcp_rtt_seconds{SEL}", "{{host}} rtt"),
            ("rate(sgmon_tcp_retransmits_total{SEL}[$__rate_interval])", "{{host}} retransmits/s"),
        ],
    ),
    "disks": (
        "disks, w_await and queue (iostat -x)",
        units.Seconds,
        [
            ("sgmon_disk_w_await_seconds{SEL}", "{{host}} {{device}} w_await"),
            ("sgmon_disk_aqu_sz{SEL}", "{{host}} {{device}} aqu-sz"),
        ],
    ),
    "cpu": (
        "CPU and run queue",
        units.PercentUnit,
        [
            ("sgmon_cpu_usr_ratio{SEL}", "{{host}} usr"),
            ("sgmon_cpu_sys_ratio{SEL}", "{{host}} sys"),
            ("sgmon_cpu_iowait_ratio{SEL}", "{{host}} iowait"),
            ("sgmon_cpu_runq_sz{SEL}", "{{host}} runq-sz"),
        ],
    ),
    "paging": (
        "load and paging",
        units.Short,
        [
            ("sgmon_cpu_load1{SEL}", "load1"),
            ("rate(sgmon_paging_pgscank_total{SEL}[$__rate_interval])", "pgscank/s"),
            ("rate(sgmon_paging_pgscand_total{SEL}[$__rate_interval])", "pgscand/s"),
            ("rate(sgmon_paging_pswpout_total{SEL}[$__rate_interval])", "pswpout/s"),
        ],
    ),
    "iops": (
        "disks, IOPS and %util",
        units.Short,
        [
            ("sgmon_disk_w_per_second{SEL}", "{{device}} w/s"),
            ("sgmon_disk_r_per_second{SEL}", "{{device}} r/s"),
            ("sgmon_disk_util_ratio{SEL}", "{{device}} util"),
        ],
    ),
    "interfaces": (
        "interfaces, bytes and drops per second",
        units.BytesPerSecondSI,
        [
            ("rate(sgmon_netdev_rx_bytes_total{SEL}[$__rate_interval])", "{{device}} rx"),
            ("rate(sgmon_netdev_tx_bytes_total{SEL}[$__rate_interval])", "{{device}} tx"),
            ("rate(sgmon_netdev_rx_drop_total{SEL}[$__rate_interval])", "{{device}} rx drop"),
        ],
    ),
    "processes": (
        "processes, CPU and time waiting for a CPU (s/s)",
        units.Short,
        [
            ("rate(sgmon_procs_cpu_seconds_total{SEL}[$__rate_interval])", "{{process}} cpu"),
            ("rate(sgmon_procs_runq_seconds_total{SEL}[$__rate_interval])", "{{process}} runq"),
        ],
    ),
    "collectors": (
        "collectors answering",
        units.Short,
        [("sgmon_scrape_collector_success{SEL}", "{{collector}}")],
    ),
}
"""Panels drawn for each side of a configuration and for one host: title, unit, queries with
``{SEL}`` for the side's selector."""


def side_panel(kind: str, side: str, sel: str) -> Panel:
    """One of ``SIDE_PANELS`` for the hosts ``sel`` selects."""
    title, unit, queries = SIDE_PANELS[kind]
    return graph(
        f"{side}: {title}",
        [query(q.replace("{SEL}", "{" + sel + "}"), legend) for q, legend in queries],
        unit=unit,
    )


def host() -> dict[str, Any]:
    """One host, every collector."""
    variables = [
        variable("dg_config", "label_values(sgmon_host_up, dg_config)"),
        variable("host", 'label_values(sgmon_host_up{dg_config="$dg_config"}, host)'),
    ]
    rows: list[list[Panel]] = [
        [
            graph(
                "wait events p99 (from the buckets)",
                [query(f"{P99}{{{HOST}}}", "{{event}}")],
                unit=units.Seconds,
            ),
            graph(
                "wait events average",
                [
                    query(
                        f"dg_config_host_event:sgmon_oracle_waits_seconds:avg_rate1m{{{HOST}}}",
                        "{{event}}",
                    )
                ],
                unit=units.Seconds,
            ),
        ],
        [side_panel("cpu", "host", HOST), side_panel("paging", "host", HOST)],
        [side_panel("disks", "host", HOST), side_panel("iops", "host", HOST)],
        [side_panel("interfaces", "host", HOST), side_panel("sockets", "host", HOST)],
        [side_panel("processes", "host", HOST), side_panel("collectors", "host", HOST)],
    ]
    return dashboard("sgmon-host", "sgmon / one host", variables, rows)


def build() -> dict[str, dict[str, Any]]:
    """File name -> dashboard."""
    return {
        "sgmon-fleet.json": fleet(),
        "sgmon-configuration.json": configuration(),
        "sgmon-host.json": host(),
    }


def main() -> None:
    """Write the dashboards."""
    OUT.mkdir(exist_ok=True)
    for name, d in build().items():
        (OUT / name).write_text(json.dumps(d, indent=2) + "\n")


if __name__ == "__main__":
    main()
