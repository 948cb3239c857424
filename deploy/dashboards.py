"""The Grafana dashboards of sgmon's mixin, written to deploy/dashboards_out/ (the monitoring
mixins' layout): a fleet table of Data Guard configurations ranked by commit time, one
configuration with its primary and standbys side by side (as sgmon's own screen), and one host.

Built with Grafana's own typed SDK (``grafana-foundation-sdk``, in sgmon's ``[test]`` extras: the
product never imports it), so a panel, a query, a unit or a variable of a type Grafana does not
have is an error when this script runs, not a blank panel in Grafana; ``check`` then holds each
dashboard to what the SDK's models read back and each query to the variables it may use.

Every query names metrics of the contract in docs/metrics.md and the recording rules of
deploy/prometheus_rules.yaml; tests/system/prometheus/test_prometheus_live.py runs each against
a Prometheus that scraped `sgmon serve --simulate` and fails on one that returns nothing.

Usage: python deploy/dashboards.py   (rewrites deploy/dashboards_out/*.json)
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from grafana_foundation_sdk.builders import common, heatmap, statetimeline, table, timeseries
from grafana_foundation_sdk.builders import dashboard as dash
from grafana_foundation_sdk.builders import prometheus as prom
from grafana_foundation_sdk.cog import plugins, runtime
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import dashboard as model
from grafana_foundation_sdk.models import units
from grafana_foundation_sdk.models.common import (
    LegendDisplayMode,
    LegendPlacement,
    SortOrder,
    TooltipDisplayMode,
    VisibilityMode,
)
from grafana_foundation_sdk.models.prometheus import PromQueryFormat

OUT = Path(__file__).with_name("dashboards_out")
DS = model.DataSourceRef(type_val="prometheus", uid="${datasource}")
CFG = 'dg_config="$dg_config"'
PRIMARY = f'{CFG}, host=~"$primary"'
STANDBY = f'{CFG}, host=~"$standby"'
HOST = f'{CFG}, host="$host"'
COMMIT_EVENTS = "log file sync|log file parallel write|SYNC Remote Write|Redo Transport MISC"
STANDBY_EVENTS = "RFS write|RFS random i/o|RFS dispatch|Standby redo I/O"
P99 = "dg_config_host_event:sgmon_oracle_waits_seconds:p99_rate1m"
HEIGHT = 8
GRAFANA_VARIABLES = {"__rate_interval", "__interval", "__range"}

STOPPED = -1
"""What a transport lag query returns for a standby whose transport stopped (its lag unknown:
``sgmon_oracle_dg_lag_unknown`` 1), drawn as the word "stopped" rather than a blank cell."""
SHOWN_STOPPED = [model.ValueMap({str(STOPPED): model.ValueMappingResult("stopped", "red")})]


def stopped_or(lag: str, unknown: str, by: str) -> str:
    """``lag``, or ``STOPPED`` where ``unknown`` (the matching lag_unknown) is 1; labelled
    ``by`` alone either way, so a table joins both on the same labels."""
    stopped = f"max by ({by}) ({unknown} == 1)"
    return f"max by ({by}) ({lag}) unless on ({by}) {stopped} or {stopped} * {STOPPED}"


Panel = timeseries.Panel | table.Panel | heatmap.Panel | statetimeline.Panel
P = TypeVar("P", timeseries.Panel, table.Panel, heatmap.Panel, statetimeline.Panel)


def query(expr: str, legend: str = "", instant: bool = False) -> prom.Dataquery:
    """One Prometheus query of a panel (an instant one as a table's rows)."""
    q = prom.Dataquery().expr(expr).legend_format(legend).datasource(DS)
    return q.instant().format(PromQueryFormat.TABLE) if instant else q


def with_queries(p: P, title: str, queries: Sequence[prom.Dataquery]) -> P:
    """``p`` titled, on the dashboard's datasource, with its queries lettered A, B, C ..."""
    p.title(title).datasource(DS).height(HEIGHT)
    for letter, q in zip("ABCDEFGH", queries, strict=False):
        p.with_target(q.ref_id(letter))
    return p


LEGEND = (
    common.VizLegendOptions()
    .display_mode(LegendDisplayMode.LIST)
    .placement(LegendPlacement.BOTTOM)
    .show_legend(True)
)
TOOLTIP = common.VizTooltipOptions().mode(TooltipDisplayMode.SINGLE).sort(SortOrder.NONE)
"""Grafana's own defaults, written out: a panel's options are an object, never null."""


def graph(title: str, queries: Sequence[prom.Dataquery], unit: str = units.Short) -> Panel:
    """A time series panel."""
    p = with_queries(timeseries.Panel(), title, queries).unit(unit)
    return p.legend(LEGEND).tooltip(TOOLTIP)


def rows_table(title: str, queries: Sequence[prom.Dataquery]) -> table.Panel:
    """An instant table joining several queries on their labels."""
    p = with_queries(table.Panel(), title, queries).unit(units.Short).show_header(True)
    return p.with_transformation(model.DataTransformerConfig("merge", options={}))


def variable(name: str, expr: str, multi: bool = False) -> dash.QueryVariable:
    """A query variable filled from a label's values."""
    return (
        dash.QueryVariable(name)
        .datasource(DS)
        .query({"query": expr, "refId": name})
        .refresh(model.VariableRefresh.ON_TIME_RANGE_CHANGED)
        .multi(multi)
        .include_all(multi)
        .sort(model.VariableSort.ALPHABETICAL_ASC)
    )


def dashboard(
    uid: str, title: str, variables: list[dash.QueryVariable], rows: list[list[Panel]]
) -> dict[str, Any]:
    """A whole dashboard with the datasource picker first, its panels in rows of equal width
    (a row of two: primary left, standby right), checked and as Grafana's JSON."""
    d = (
        dash.Dashboard(title)
        .uid(uid)
        .tags(["sgmon", "oracle", "data-guard"])
        .timezone("browser")
        .refresh("10s")
        .time("now-30m", "now")
        .with_variable(
            dash.DatasourceVariable("datasource").label("Data source").type("prometheus")
        )
    )
    for v in variables:
        d.with_variable(v)
    n = 0
    for row in rows:
        for p in row:
            n += 1
            d.with_panel(p.span(24 // len(row)).id(n))
    out = json.loads(json.dumps(d.build(), cls=JSONEncoder))
    check(out)
    return out


def check(d: dict[str, Any]) -> None:
    """Refuse what Grafana would not show: a key its dashboard and panel models do not read
    back, a panel type it has no plugin for, a query without an expression, a repeated query
    letter, a variable the dashboard does not define."""
    plugins.register_default_plugins()
    read = json.loads(json.dumps(model.Dashboard.from_json(d), cls=JSONEncoder))
    lost = unread(d, read, d["uid"])
    if lost:
        raise ValueError(f"not read back by Grafana's dashboard model: {', '.join(lost)}")
    defined = {v["name"] for v in d["templating"]["list"]} | GRAFANA_VARIABLES
    for p in d["panels"]:
        where = f"{d['uid']} {p['title']!r}"
        if runtime.panelcfg_config(p["type"]) is None:
            raise ValueError(f"{where}: no Grafana panel of type {p['type']!r}")
        letters = [t["refId"] for t in p["targets"]]
        if not letters or len(set(letters)) != len(letters):
            raise ValueError(f"{where}: queries lettered {letters}")
        for t in p["targets"]:
            used = set(re.findall(r"\$\{?(\w+)", t["expr"]))
            if not t["expr"] or used - defined:
                raise ValueError(f"{where}: {t['expr']!r} uses {sorted(used - defined)}")


def unread(written: object, read: object, path: str) -> list[str]:
    """Where ``written`` has a key or a value that ``read`` (the same JSON read back through
    the SDK's models, which add their defaults) does not."""
    if isinstance(written, dict) and isinstance(read, dict):
        return [
            lost
            for k, v in written.items()
            for lost in ([f"{path}.{k}"] if k not in read else unread(v, read[k], f"{path}.{k}"))
        ]
    if isinstance(written, list) and isinstance(read, list) and len(written) == len(read):
        return [lost for i, (w, r) in enumerate(zip(written, read, strict=True))
                for lost in unread(w, r, f"{path}[{i}]")]  # fmt: skip
    return [] if written == read else [path]


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
