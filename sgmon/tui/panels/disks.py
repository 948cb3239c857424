"""Disks like iostat -x: the redo devices pinned on top, then the slowest by await."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from sgmon import buckets
from sgmon.model import number
from sgmon.tui.draw import AXIS_LEFT, pairs, title
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
    table = table_with_spark(view, head, "disk", devs, leads, COLUMNS, spark, width)
    lat = latency_lines(view, devs)
    if not lat or not isinstance(table, Group):
        return table
    return Group(*table.renderables, *lat)  # one flat Group: the filter note reads its title


def latency_lines(view: PaneView, devs: list[str]) -> list[Text]:
    """Under the table, each redo device's latency tail from biolat's histogram (await is a
    mean; p99 and max are the I/Os a commit waited for), in Oracle's bucket names (<128ms)."""
    lines = []
    for d in devs:
        if number(view.value("biolat", d, "p99")) is None:
            continue
        cells = [(f, _bucket(view, d, f)) for f in ("p50", "p99", "max")]
        cells.append(("I/Os", view.cell("biolat", d, "ios")))
        lead = Text(" " + fit(d, 12, "middle") + " ").append("I/O latency ", view.palette.muted)
        lines.append(lead.append_text(pairs(view.palette, cells)))
    return lines


def _bucket(view: PaneView, dev: str, field: str) -> Text:
    """A percentile as the name of its bucket, styled as the dashboard styles the cell."""
    v = number(view.value("biolat", dev, field))
    cell = view.cell("biolat", dev, field)
    out = Text("-" if v is None else buckets.name(buckets.exponent(v)))
    for span in cell.spans:
        out.stylize(span.style)
    return out


class DisksPanel(Panel):
    """Devices by await with the redo devices pinned."""

    render_view = staticmethod(render_disks)
    needs = "disk"
    filters = "disk"
