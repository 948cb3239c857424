"""Paging and memory pressure: what sar -B / -W and PSI say about reclaim and swap."""

from __future__ import annotations

from rich.console import Group, RenderableType

from sgmon.fields import PAGING
from sgmon.tui.draw import graph_width, pairs, spark_row, title
from sgmon.tui.panels.base import Panel
from sgmon.tui.view import PaneView

SHOWN = (
    (PAGING.majflt, "majflt/s"),
    (PAGING.pgscank, "scank/s"),
    (PAGING.pgscand, "scand/s"),
    (PAGING.pswpin, "swpin/s"),
    (PAGING.pswpout, "swpout/s"),
    (PAGING.memused, "mem%"),
    (PAGING.psi_mem_some, "psi-mem%"),
)
ALL = PAGING.Rows.all.instance(None)
"""The collector's one row."""


def render_paging(view: PaneView, width: int) -> RenderableType:
    """One line of paging rates and a sparkline of direct-reclaim scanning."""
    p = view.palette
    head = title(p, "PAGING")
    problem = view.collector_problem(PAGING.name)
    if problem is not None:
        return Group(head, problem)
    line = pairs(p, [(lab, view.cell(f, ALL)) for f, lab in SHOWN])
    spark = spark_row(
        p,
        "scand/s",
        view.series(PAGING.pgscand, ALL, graph_width(width)),
        width,
        view.judge(PAGING.pgscand),
        highlighted=view.marked(PAGING.pgscand, ALL),
    )
    return Group(head, line, spark)


class PagingPanel(Panel):
    """Paging rates, memory use and memory pressure."""

    render_view = staticmethod(render_paging)
    needs = PAGING.name
