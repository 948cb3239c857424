"""Latency heatmap over time for log file sync and SYNC Remote Write.

Columns are the shared time axis (the last column is the cursor), rows the histogram buckets, and
the colour is the share of that interval's waits in the bucket.  Two buckets share a character
cell (upper and lower half block), so ten buckets fit in five lines per event.
"""

from __future__ import annotations

import math
from functools import cache

from rich.console import Group, RenderableType
from rich.style import Style
from rich.text import Text

from sgmon import buckets, events
from sgmon.fields import ORACLE_WAITS
from sgmon.tui.draw import AXIS_LEFT, runs, title
from sgmon.tui.palette import Palette
from sgmon.tui.panels.base import Panel
from sgmon.tui.panels.histogram import frame_shares
from sgmon.tui.view import PaneView

EVENTS = events.HEATMAP
"""Heatmaps drawn, the first two present (the standby has RFS write but no log file sync)."""
NB = len(buckets.HEADERS)
ROW_LABELS = (
    f"≥{buckets.HEADERS[NB - 3][1:]} ms",  # the top two columns: 128 ms and more
    *(buckets.HEADERS[NB - 1 - 2 * r] for r in range(1, NB // 2)),
)
"""Each line holds two columns (upper half block: the higher); labelled by its upper bound."""


def grid(view: PaneView, event: str) -> list[list[float] | None]:
    """Per instant of the window: the share of waits per bucket column (None: no data); through
    the host's memo, so a tick works out the newest instant's only."""
    return view.memo.column(view.window, ("shares", event), lambda f: frame_shares(f, event))


def render_event(view: PaneView, event: str, width: int) -> list[Text]:
    """Five lines of half blocks for one event, with the bucket labels on the left."""
    p = view.palette
    n = max(1, width - AXIS_LEFT)
    known = grid(view, event)[-n:]
    cols = [None] * (n - len(known)) + known
    nb = NB
    lines = []
    for r, label in enumerate(ROW_LABELS):
        hi, lo = nb - 1 - 2 * r, nb - 2 - 2 * r
        line = Text(f"{label:>{AXIS_LEFT - 1}} ", style=p.muted)
        cells = [_cell(view, sh[hi] if sh else 0.0, sh[lo] if sh else 0.0) for sh in cols]
        lines.append(line + runs(cells))
    return lines


def _cell(view: PaneView, top: float, bottom: float) -> tuple[str, Style | None]:
    if top <= 0 and bottom <= 0:
        return " ", None
    return _half_blocks(view.palette, _level(top), _level(bottom))


@cache
def _half_blocks(p: Palette, top: float | None, bottom: float | None) -> tuple[str, Style]:
    """The character and style of one cell (levels are quantised, so few distinct ones)."""
    if top is None:
        return "▄", Style(color=p.heat(bottom or 0.0))
    if bottom is None:
        return "▀", Style(color=p.heat(top))
    return "▀", Style(color=p.heat(top), bgcolor=p.heat(bottom))


def _level(share: float) -> float | None:
    """Square root so that a 2 % tail is still clearly visible next to a 90 % body; eight steps
    so neighbouring cells share styles.  None for an empty bucket (not drawn)."""
    if share <= 0:
        return None
    return round((0.15 + 0.85 * math.sqrt(share)) * 8) / 8


def render_heatmap(view: PaneView, width: int) -> RenderableType:
    """Heatmaps of the first two commit-path events this host has."""
    p = view.palette
    head = title(p, "LATENCY HEATMAP", "ms buckets over time, colour = share of waits")
    problem = view.collector_problem(ORACLE_WAITS.name)
    if problem is not None:
        return Group(head, problem)
    present = [e for e in EVENTS if any(grid(view, e))]
    if not present:
        return Group(head, Text("  no histogram data yet", style=p.muted))
    parts: list[RenderableType] = [head]
    for e in present[:2]:
        style = p.highlight if view.marked(ORACLE_WAITS.hist, e) else p.muted
        parts.append(Text(f" {e}", style=style))
        parts.extend(render_event(view, e, width))
    return Group(*parts)


class HeatmapPanel(Panel):
    """Wait latency buckets over time."""

    render_view = staticmethod(render_heatmap)
    needs = ORACLE_WAITS.name
