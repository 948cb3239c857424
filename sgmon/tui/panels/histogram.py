"""This interval's wait histogram as "% of waits" per bucket, like AWR's wait event histogram.

Averages hide the outliers that hurt (seed 000, table 5); the share of waits in the high buckets
is what shows a 200 ms retransmit stall (seed 001).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.text import Text

from sgmon.model import Frame
from sgmon.tui.draw import grid, title
from sgmon.tui.fit import fit
from sgmon.tui.panels.base import Panel
from sgmon.tui.panels.waits import events
from sgmon.tui.view import PaneView

LIMITS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
"""Upper bounds (ms) of the columns; one more column holds everything above."""
HEADERS = ("≤1ms", "≤2", "≤4", "≤8", "≤16", "≤32", "≤64", "≤128", "≤256", ">256")


def column_of(bound: float | None) -> int:
    """The column a bucket with this upper bound (ms; None = open) falls in."""
    if bound is None:
        return len(LIMITS)
    return next((i for i, lim in enumerate(LIMITS) if bound <= lim + 1e-9), len(LIMITS))


def shares(hist: Sequence) -> list[float] | None:
    """Share of waits per column (0..1), or None when the interval had no waits."""
    counts = [0.0] * (len(LIMITS) + 1)
    for bound, count in hist:
        counts[column_of(bound)] += float(count or 0)
    total = sum(counts)
    return [c / total for c in counts] if total > 0 else None


_CACHE: OrderedDict[tuple[int, str], tuple[Frame, list[float] | None]] = OrderedDict()
_CACHE_SIZE = 8000


def frame_shares(frame: Frame | None, event: str) -> list[float] | None:
    """Bucket shares of one event in one frame, computed once per frame (frames never change).

    The cache holds the frame itself, so its id cannot be reused by another frame meanwhile.
    """
    if frame is None:
        return None
    key = (id(frame), event)
    hit = _CACHE.get(key)
    if hit is None or hit[0] is not frame:
        value = frame.value("oracle_waits", event, "hist")
        hit = (frame, shares(value) if isinstance(value, list) else None)
        _CACHE[key] = hit
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return hit[1]


def cell_severity(col: int, share: float) -> str:
    """Any waits past 64 ms are critical for a commit, past 16 ms a warning."""
    if share <= 0:
        return "ok"
    return (
        "crit" if col >= LIMITS.index(64) + 1 else "warn" if col >= LIMITS.index(16) + 1 else "ok"
    )


def render_histogram(view: PaneView, width: int) -> RenderableType:
    """One row per event with a histogram, cells coloured by how far out the waits are."""
    p = view.palette
    head = title(p, "% OF WAITS", "this interval")
    problem = view.collector_problem("oracle_waits")
    if problem is not None:
        return Group(head, problem)
    rows_out = []
    for e in events(view)[:5]:
        sh = frame_shares(view.frame, e)  # the heatmap's last column: computed once per frame
        if sh is None:
            continue
        cells = []
        lit = ("oracle_waits", e, "hist") in view.highlight
        for i, s in enumerate(sh):
            txt = Text("" if s <= 0 else f"{s * 100:.1f}" if s < 0.995 else "100")
            txt.stylize(p.sev(cell_severity(i, s)))
            if lit and s > 0:
                txt.stylize(p.highlight)
            cells.append(txt)
        rows_out.append([Text(fit(e, 18)), *cells])
    if not rows_out:
        return Group(head, Text("  no waits with histograms this interval", style=p.muted))
    return Group(head, *grid(p, ["event", *HEADERS], rows_out))


class HistogramPanel(Panel):
    """The live "% of waits" histogram of the current interval."""

    render_view = staticmethod(render_histogram)
    needs = "oracle_waits"
