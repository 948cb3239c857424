"""This interval's wait histogram as "% of waits" per bucket, like AWR's wait event histogram.

Averages hide the outliers that hurt (seed 000, table 5); the share of waits in the high buckets
is what shows a 200 ms retransmit stall (seed 001).  Columns are AWR's (``<1ms <2 ... <256 ≥256``),
from ``sgmon.buckets``, so the micro and milli views of the same waits read the same.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from sgmon import buckets
from sgmon.fields import ORACLE_WAITS
from sgmon.model import Frame
from sgmon.tui.draw import grid, title
from sgmon.tui.fit import fit
from sgmon.tui.panels.base import Panel
from sgmon.tui.panels.waits import events
from sgmon.tui.view import PaneView


def frame_shares(frame: Frame | None, event: str) -> list[float] | None:
    """Bucket shares of one event's waits in one frame (None: no waits, or no histogram).

    Not cached by frame: a cache holds its frames after the history has let them go.  The
    heatmap reads its window through the host's memo (``SeriesMemo``), which holds the
    window's frames only."""
    value = ORACLE_WAITS.hist.raw_at(frame, event)
    return buckets.shares(value) if isinstance(value, list) else None


CRIT_COLUMN = buckets.column(128.0)
"""Waits of 64 ms and more (the <128 column onwards) are critical for a commit."""
WARN_COLUMN = buckets.column(32.0)
"""Waits of 16 ms and more (the <32 column onwards) are a warning."""


def cell_severity(col: int, share: float) -> str:
    """How far out the waits of one column are."""
    if share <= 0:
        return "ok"
    return "crit" if col >= CRIT_COLUMN else "warn" if col >= WARN_COLUMN else "ok"


def render_histogram(view: PaneView, width: int) -> RenderableType:
    """One row per event with a histogram, cells coloured by how far out the waits are."""
    p = view.palette
    head = title(p, "% OF WAITS", "this interval")
    problem = view.collector_problem(ORACLE_WAITS.name)
    if problem is not None:
        return Group(head, problem)
    rows_out = []
    for e in events(view)[:5]:
        sh = frame_shares(view.frame, e)
        if sh is None:
            continue
        cells = []
        lit = view.marked(ORACLE_WAITS.hist, e)
        for i, s in enumerate(sh):
            if s <= 0:
                cells.append(Text(""))
                continue
            style = p.sev(cell_severity(i, s))  # one style a cell: no spans to merge
            cells.append(
                Text(
                    f"{s * 100:.1f}" if s < 0.995 else "100",
                    style=style + p.highlight if lit else style,
                )
            )
        rows_out.append([Text(fit(e, 18)), *cells])
    if not rows_out:
        return Group(head, Text("  no waits with histograms this interval", style=p.muted))
    return Group(head, *grid(p, ["event", *buckets.HEADERS], rows_out))


class HistogramPanel(Panel):
    """The live "% of waits" histogram of the current interval."""

    render_view = staticmethod(render_histogram)
    needs = ORACLE_WAITS.name
