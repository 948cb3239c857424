"""Disks like iostat -x: the redo devices pinned on top, then the slowest by await."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from sgmon import buckets
from sgmon.contract import Num, Row
from sgmon.fields import BIOLAT, DISK
from sgmon.tui.draw import AXIS_LEFT, pairs, title
from sgmon.tui.fit import fit
from sgmon.tui.panels.base import Panel, labelled, table_with_spark
from sgmon.tui.view import PaneView

COLUMNS = labelled(
    (DISK.r_s, "r/s"),
    (DISK.w_s, "w/s"),
    (DISK.wkb_s, "wkB/s"),
    DISK.r_await,
    DISK.w_await,
    (DISK.aqu_sz, "aqu-sz"),
    DISK.svctm,
    (DISK.util, "%util"),
)
TOP = 4
"""Devices listed besides the pinned ones (all of them when the panel is zoomed)."""


def await_of(row: Row) -> float:
    """The worse of read and write await, the sort key."""
    return max(f.of(row) or 0.0 for f in (DISK.r_await, DISK.w_await))


def _iops(row: Row) -> float:
    """Reads and writes a second, the next sort key."""
    return (DISK.r_s.of(row) or 0.0) + (DISK.w_s.of(row) or 0.0)


def ordered(view: PaneView, limit: int | None) -> list[str]:
    """Pinned devices first (in config order), then the rest by await, worst first."""
    rows = view.rows(DISK.name)
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
    rows = view.rows(DISK.name)
    note = f"{len(devs)}/{len(rows)} by await, graph w_await"
    head = title(p, "DISKS", note)
    problem = view.collector_problem(DISK.name)
    if problem is not None:
        return Group(head, problem)
    leads = [Text(("*" if d in view.pinned else " ") + fit(d, 12, "middle")) for d in devs]
    spark = (DISK.w_await, fit(devs[0], AXIS_LEFT - 1, "middle") if devs else "")
    table = table_with_spark(view, head, DISK.name, devs, leads, COLUMNS, spark, width)
    lat = latency_lines(view, devs)
    if not lat or not isinstance(table, Group):
        return table
    return Group(*table.renderables, *lat)  # one flat Group: the filter note reads its title


def latency_lines(view: PaneView, devs: list[str]) -> list[Text]:
    """Under the table, each redo device's latency tail from biolat's histogram (await is a
    mean; p99 and max are the I/Os a commit waited for), in Oracle's bucket names (<128ms)."""
    lines = []
    for d in devs:
        if BIOLAT.p99.at(view.frame, d) is None:
            continue
        cells = [(f.name, _bucket(view, d, f)) for f in (BIOLAT.p50, BIOLAT.p99, BIOLAT.max)]
        cells.append(("I/Os", view.cell(BIOLAT.ios, d)))
        lead = Text(" " + fit(d, 12, "middle") + " ").append("I/O latency ", view.palette.muted)
        lines.append(lead.append_text(pairs(view.palette, cells)))
    return lines


def _bucket(view: PaneView, dev: str, field: Num) -> Text:
    """A percentile as the name of its bucket, styled as the dashboard styles the cell."""
    v = field.at(view.frame, dev)
    cell = view.cell(field, dev)
    out = Text("-" if v is None else buckets.name(buckets.exponent(v)))
    for span in cell.spans:
        out.stylize(span.style)
    return out


class DisksPanel(Panel):
    """Devices by await with the redo devices pinned."""

    render_view = staticmethod(render_disks)
    needs = DISK.name
    filters = DISK.name
