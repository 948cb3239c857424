"""Database wait events of the commit path: rate, average, and percentiles from the buckets."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from sgmon.contract import Row
from sgmon.events import SHORT, SHOWN, STANDBY_REDO_IO
from sgmon.fields import ORACLE_WAITS
from sgmon.tui.draw import title
from sgmon.tui.fit import fit
from sgmon.tui.panels.base import Panel, labelled, table_with_spark
from sgmon.tui.view import PaneView

COLUMNS = labelled(
    (ORACLE_WAITS.waits, "waits/s"),
    ORACLE_WAITS.avg,
    ORACLE_WAITS.p50,
    ORACLE_WAITS.p99,
    (ORACLE_WAITS.max_bucket, "max"),
)
TOP = 6


def other_side(event: str, role: str) -> bool:
    """Whether ``event`` is waited on by the other side of Data Guard than ``role``: RFS and
    standby redo I/O on a primary, LGWR's and NSS's on a standby.  V$SYSTEM_EVENT keeps its
    totals across a switchover, so the new primary still has RFS rows (and the new standby log
    file sync rows) that no longer move."""
    standby = event.startswith("RFS ") or event == STANDBY_REDO_IO
    return standby if role == "primary" else role == "standby" and not standby


def events(view: PaneView) -> list[str]:
    """Commit-path events present, then the others by time waited; the other side's events
    only while they are waited on (each pane shows its own host's part of the chain)."""
    rows = {
        e: row
        for e, row in view.rows(ORACLE_WAITS.name).items()
        if not other_side(e, view.role) or ORACLE_WAITS.waits.of(row)
    }
    first = [e for e in SHOWN if e in rows]
    rest = sorted((e for e in rows if e not in first), key=lambda e: -_time_waited(rows[e]))
    return first + rest


def _time_waited(row: Row) -> float:
    """Waits a second times their average: the time an event took, the others' sort key."""
    return (ORACLE_WAITS.waits.of(row) or 0.0) * (ORACLE_WAITS.avg.of(row) or 0.0)


def render_waits(view: PaneView, width: int) -> RenderableType:
    """The events table, then the first event's p99 on the shared time axis."""
    p = view.palette
    head = title(p, "WAIT EVENTS", "ms; p50 p99 max: under that bucket bound, as % OF WAITS")
    problem = view.collector_problem(ORACLE_WAITS.name)
    if problem is not None:
        return Group(head, problem)
    names = events(view)
    shown = names if width > 110 else names[:TOP]
    leads = [Text(fit(e, 23)) for e in shown]
    label = f"{SHORT.get(names[0]) or fit(names[0], 5)} p99" if names else ""
    return table_with_spark(
        view, head, ORACLE_WAITS.name, shown, leads, COLUMNS, (ORACLE_WAITS.p99, label), width
    )


class WaitsPanel(Panel):
    """Wait events with waits/s, avg, p50, p99."""

    render_view = staticmethod(render_waits)
    needs = ORACLE_WAITS.name
