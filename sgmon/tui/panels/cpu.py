"""CPU: mpstat-style shares for all CPUs, run queue and load, the busiest CPUs, busy % over time."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from sgmon.fields import CPU
from sgmon.tui.draw import graph_width, grid, pairs, spark_row, title
from sgmon.tui.panels.base import Panel, labelled
from sgmon.tui.view import PaneView

SHOWN = labelled(CPU.usr, CPU.sys, (CPU.iowait, "iow"), (CPU.steal, "stl"), CPU.idle)
TOP = 4
"""CPUs listed, busiest first (all of them when the panel is zoomed or wide)."""
ALL = CPU.Rows.all.instance(None)
"""The row of all CPUs together."""


def busiest(view: PaneView) -> list[str]:
    """Per-CPU rows by busy share (100 - idle), the busiest first, as top's `1` view sorts."""
    rows = view.rows(CPU.name)
    cpus = [k for k in rows if not CPU.Rows.all.matches(k)]
    return sorted(cpus, key=lambda k: (CPU.idle.of(rows[k]) or 0.0, k))


def render_cpu(view: PaneView, width: int) -> RenderableType:
    """Title with the CPU count, a line of shares, busy % (100 - idle) as a sparkline, then the
    busiest CPUs: one hot CPU (LGWR spinning) hides in an average over many."""
    p = view.palette
    cpus = busiest(view)
    head = title(p, "CPU", f"{len(cpus)} cpus" if cpus else "")
    problem = view.collector_problem(CPU.name)
    if problem is not None:
        return Group(head, problem)
    items = [(lab, view.cell(f, ALL)) for f, lab in SHOWN]
    items += [("runq", view.cell(CPU.runq_sz, ALL)), ("load", view.cell(CPU.load1, ALL))]
    idle = view.judge(CPU.idle)
    busy = [
        None if v is None else 100.0 - v for v in view.series(CPU.idle, ALL, graph_width(width))
    ]
    spark = spark_row(
        p,
        "busy %",
        busy,
        width,
        lambda v: idle(100.0 - v),
        top=100.0,
        highlighted=view.marked(CPU.idle, ALL),
    )
    shown = cpus if width > 110 else cpus[:TOP]
    rows = [[Text(c), *(view.cell(f, c) for f, _ in SHOWN)] for c in shown]
    table = grid(p, ["busiest", *(lab for _, lab in SHOWN)], rows) if rows else []
    return Group(head, pairs(p, items), spark, *table)


class CpuPanel(Panel):
    """CPU shares, run queue, load, a busy % sparkline and the busiest CPUs."""

    render_view = staticmethod(render_cpu)
    needs = CPU.name
