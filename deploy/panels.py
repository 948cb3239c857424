"""Grafana's typed SDK (``grafana-foundation-sdk``) as sgmon's dashboards use it: queries on the
dashboard's Prometheus, panels in rows of equal width, and the check every dashboard passes
before deploy/dashboards.py writes it.

A panel, a query, a unit or a variable of a type Grafana does not have is an error of the SDK's
builders (and of mypy) when the dashboards are built; ``check`` then refuses what Grafana would
not show: a key its dashboard model does not read back, a panel type it has no plugin for, a
query without an expression or with a variable the dashboard does not define.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
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
)
from grafana_foundation_sdk.models.prometheus import PromQueryFormat

DS = model.DataSourceRef(type_val="prometheus", uid="${datasource}")
HEIGHT = 8
GRAFANA_VARIABLES = {"__rate_interval", "__interval", "__range"}

STOPPED = -1
"""What a transport lag query returns for a standby whose transport stopped (its lag unknown:
``sgmon_oracle_dg_lag_unknown`` 1), drawn as the word "stopped" rather than a blank cell."""
SHOWN_STOPPED: list[model.ValueMapping] = [
    model.ValueMap({str(STOPPED): model.ValueMappingResult("stopped", "red")})
]


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
    out: dict[str, Any] = json.loads(json.dumps(d.build(), cls=JSONEncoder))
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
