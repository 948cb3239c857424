"""CPU: mpstat-style shares for all CPUs, run queue and load, and busy % over the shared axis."""

from __future__ import annotations

from rich.console import Group, RenderableType

from sgmon.tui.draw import pairs, spark_row, title
from sgmon.tui.panels.base import Panel
from sgmon.tui.view import PaneView

SHOWN = (("usr", "usr"), ("sys", "sys"), ("iowait", "iow"), ("steal", "stl"), ("idle", "idle"))


def render_cpu(view: PaneView, width: int) -> RenderableType:
    """Title with the CPU count, a line of shares, and busy % (100 - idle) as a sparkline."""
    p = view.palette
    rows = view.rows("cpu")
    ncpu = sum(1 for k in rows if k.startswith("cpu"))
    head = title(p, "CPU", f"{ncpu} cpus" if ncpu else "")
    problem = view.collector_problem("cpu")
    if problem is not None:
        return Group(head, problem)
    items = [(lab, view.cell("cpu", "all", f)) for f, lab in SHOWN]
    items += [
        ("runq", view.cell("cpu", "all", "runq_sz")),
        ("load", view.cell("cpu", "all", "load1")),
    ]
    idle = view.judge("cpu", "idle")
    busy = [None if v is None else 100.0 - v for v in view.series("cpu", "all", "idle")]
    spark = spark_row(
        p,
        "busy %",
        busy,
        width,
        lambda v: idle(100.0 - v),
        top=100.0,
        highlighted=("cpu", "all", "idle") in view.highlight,
    )
    return Group(head, pairs(p, items), spark)


class CpuPanel(Panel):
    """CPU shares, run queue, load and a busy % sparkline."""

    render_view = staticmethod(render_cpu)
    needs = "cpu"
