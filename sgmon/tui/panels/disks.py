"""Disks like iostat -x: the redo devices pinned on top, then the slowest by await."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from sgmon.tui.draw import AXIS_LEFT, title
from sgmon.tui.fit import fit
from sgmon.tui.panels.base import Panel, table_with_spark
from sgmon.tui.view import PaneView

COLUMNS = (
    ("r_s", "r/s"),
    ("w_s", "w/s"),
    ("wkb_s", "wkB/s"),
    ("r_await", "r_await"),
    ("w_await", "w_await"),
    ("aqu_sz", "aqu-sz"),
    ("svctm", "svctm"),
    ("util", "%util"),
)
TOP = 4
"""Devices listed besides the pinned ones (all of them when the panel is zoomed)."""


def await_of(row: dict) -> float:
    """The worse of read and write await, the sort key."""
    return max(float(row.get(k) or 0.0) for k in ("r_await", "w_await"))


def _iops(row: dict) -> float:
    return float(row.get("r_s") or 0.0) + float(row.get("w_s") or 0.0)


def ordered(view: PaneView, limit: int | None) -> list[str]:
    """Pinned devices first (in config order), then the rest by await, worst first."""
    rows = view.rows("disk")
    pinned = [d for d in view.pinned if d in rows and view.matches(d)]
    rest = sorted(
        (d for d in rows if d not in pinned and view.matches(d)),
        key=lambda d: (-await_of(rows[d]), -_iops(rows[d]), d),
    )
    return pinned + (rest if limit is None else rest[:limit])


def render_disks(view: PaneView, width: int) -> RenderableType:
    """A table of devices (the TOP by await when narrow) and a sparkline of the first device's
    write await."""
    p = view.palette
    devs = ordered(view, None if width > 110 else TOP)
    rows = view.rows("disk")
    note = f"{len(devs)}/{len(rows)} by await, graph w_await"
    head = title(p, "DISKS", note)
    problem = view.collector_problem("disk")
    if problem is not None:
        return Group(head, problem)
    leads = [Text(("*" if d in view.pinned else " ") + fit(d, 12, "middle")) for d in devs]
    spark = ("w_await", fit(devs[0], AXIS_LEFT - 1, "middle") if devs else "")
    return table_with_spark(view, head, "disk", devs, leads, COLUMNS, spark, width)


class DisksPanel(Panel):
    """Devices by await with the redo devices pinned."""

    render_view = staticmethod(render_disks)
    needs = "disk"
    filters = "disk"
