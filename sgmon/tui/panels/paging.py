"""Paging and memory pressure: what sar -B / -W and PSI say about reclaim and swap."""

from __future__ import annotations

from rich.console import Group, RenderableType

from sgmon.tui.draw import graph_width, pairs, spark_row, title
from sgmon.tui.panels.base import Panel
from sgmon.tui.view import PaneView

SHOWN = (
    ("majflt", "majflt/s"),
    ("pgscank", "scank/s"),
    ("pgscand", "scand/s"),
    ("pswpin", "swpin/s"),
    ("pswpout", "swpout/s"),
    ("memused", "mem%"),
    ("psi_mem_some", "psi-mem%"),
)


def render_paging(view: PaneView, width: int) -> RenderableType:
    """One line of paging rates and a sparkline of direct-reclaim scanning."""
    p = view.palette
    head = title(p, "PAGING")
    problem = view.collector_problem("paging")
    if problem is not None:
        return Group(head, problem)
    line = pairs(p, [(lab, view.cell("paging", "all", f)) for f, lab in SHOWN])
    spark = spark_row(
        p,
        "scand/s",
        view.series("paging", "all", "pgscand", graph_width(width)),
        width,
        view.judge("paging", "pgscand"),
        highlighted=("paging", "all", "pgscand") in view.highlight,
    )
    return Group(head, line, spark)


class PagingPanel(Panel):
    """Paging rates, memory use and memory pressure."""

    render_view = staticmethod(render_paging)
    needs = "paging"
