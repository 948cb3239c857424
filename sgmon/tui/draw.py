"""Small drawing helpers shared by the panels: titles, labelled values, sparklines."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from rich.cells import cell_len
from rich.style import Style
from rich.text import Span, Text

from sgmon.tui.palette import Palette

BARS = " ▁▂▃▄▅▆▇█"
AXIS_LEFT = 10
"""Columns left of every time graphic (sparklines, heatmaps): the label.  The graphic fills the
rest, its last column is the cursor, so a column is the same instant in every panel and pane."""


def title(palette: Palette, name: str, note: str = "") -> Text:
    """A panel's first line: its name, and an optional muted note."""
    t = Text(name, style=palette.title)
    if note:
        t.append("  " + note, style=palette.muted)
    return t


def pairs(palette: Palette, items: Sequence[tuple[str, Text]]) -> Text:
    """``label value  label value ...`` on one line."""
    out = Text()
    for i, (name, value) in enumerate(items):
        if i:
            out.append("  ")
        out.append(name + " ", style=palette.muted)
        out.append_text(value)
    return out


NARROW = frozenset(c for c in "·│≥≤█▄▀→←●○▸■▒▇▆▅▃▂▁↓↑…░▓─" if cell_len(c) == 1)
"""The characters beyond ASCII that the panels draw and Rich counts one cell wide."""


def cell_count(plain: str) -> int:
    """Terminal cells of a panel line, as Rich counts them.  Rich caches the count of the last
    4,096 strings; a redraw's lines are new strings (their numbers moved), and counting one
    character at a time cost more than all the rest of turning a line into a strip."""
    return len(plain) if plain.isascii() or NARROW.issuperset(plain) else cell_len(plain)


def graph_width(width: int) -> int:
    """Columns of the time graphic in a line ``width`` wide (what a sparkline's series needs)."""
    return width - AXIS_LEFT


FLAT = 1.5
"""A linear series whose largest value is within this factor of its smallest draws flat."""
FLAT_LOG = 2.0
"""The same on a log scale: one power-of-two bucket (a p99 between 1 and 2 ms) is flat."""


def sparkline(
    palette: Palette,
    values: Sequence[float | None],
    width: int,
    severity: Callable[[float], str],
    top: float | None = None,
    log: bool = False,
) -> Text:
    """The last ``width`` values as bars, each coloured by its own severity.

    ``log`` scales by orders of magnitude (latencies: one 500 ms stall must not flatten a
    2 ms to 260 ms step into the bottom row).

    Every pane draws over the same time axis, so the n-th column is the same instant in both;
    unknown values are blanks, and the scale starts at zero so small wobbles stay small.  A flat
    series (its largest value within ``FLAT`` of its smallest, one power-of-two bucket on a log
    scale) draws as a flat line on the bottom row: a steady 1 ms is not a full-height alarm.
    """
    shown: list[float | None] = list(values)[-width:] if width > 0 else []
    vals = [None] * (width - len(shown)) + shown
    known = [v for v in vals if v is not None]
    peak = max([top or 0.0, *known]) if known else 0.0
    if known and top is None and max(known) <= min(known) * (FLAT_LOG if log else FLAT):
        peak = 0.0  # every value on the bottom row
    # a series repeats its values (idle counters, steady gauges): each is graded once
    drawn: dict[float, tuple[str, Style | None]] = {}
    cells: list[tuple[str, Style | None]] = []
    for v in vals:
        if v is None:
            cells.append((" ", None))
            continue
        cell = drawn.get(v)
        if cell is None:
            level = 0 if peak <= 0 else round(_scale(v, peak, log) * (len(BARS) - 2)) + 1
            sev = severity(v)
            style = palette.spark if sev == "ok" else palette.sev(sev)
            cell = drawn[v] = (BARS[min(max(level, 1), len(BARS) - 1)], style)
        cells.append(cell)
    return runs(cells)


def _scale(v: float, peak: float, log: bool) -> float:
    if not log:
        return v / peak
    floor = peak / 1000.0
    return math.log(max(v, floor) / floor) / math.log(peak / floor)


def runs(cells: Sequence[tuple[str, Style | None]]) -> Text:
    """Characters with styles as Text, one span per run of equal styles (cheap to render)."""
    parts: list[str] = []
    spans: list[Span] = []
    at = i = 0
    while i < len(cells):
        j = i
        style = cells[i][1]
        while j < len(cells) and (cells[j][1] is style or cells[j][1] == style):
            j += 1
        run = "".join(c for c, _ in cells[i:j])
        if style:
            spans.append(Span(at, at + len(run), style))
        parts.append(run)
        at += len(run)
        i = j
    return Text("".join(parts), spans=spans)


def spark_row(
    palette: Palette,
    name: str,
    values: Sequence[float | None],
    width: int,
    severity: Callable[[float], str],
    top: float | None = None,
    highlighted: bool = False,
    log: bool = False,
) -> Text:
    """A labelled sparkline on the shared time axis."""
    head = Text(f"{name[: AXIS_LEFT - 1]:>{AXIS_LEFT - 1}} ", style=palette.muted)
    if highlighted:
        head.stylize(palette.highlight)
    return head + sparkline(palette, values, graph_width(width), severity, top, log)


def grid(
    palette: Palette,
    headers: Sequence[str],
    rows: Sequence[Sequence[Text]],
    right_from: int = 1,
) -> list[Text]:
    """Rows of cells as aligned lines under muted headers (cheaper to draw than a Rich Table).

    Columns from ``right_from`` on are right-aligned, as numbers are; one space between columns.
    """
    head = [Text(h, style=palette.muted) for h in headers]
    table = [[_measured(c) for c in row] for row in [head, *rows]]
    widths = [max(cols) for cols in zip(*([n for _, n, _ in row] for row in table), strict=True)]
    return [_line(row, widths, right_from) for row in table]


def _measured(cell: Text) -> tuple[str, int, Text]:
    """A cell's plain text (a property Rich joins each time it is read), its width, the cell."""
    plain = cell.plain
    return plain, cell_count(plain), cell


def _line(cells: list[tuple[str, int, Text]], widths: list[int], right_from: int) -> Text:
    """One row (each cell's plain text and its width, worked out once, and the cell) as a single
    Text built from its parts: the plain string joined once and each cell's spans moved to its
    column (the same Text appending cell by cell gives, at a third of the cost)."""
    parts: list[str] = []
    spans: list[Span] = []
    at = 0
    for i, ((plain, used, cell), w) in enumerate(zip(cells, widths, strict=True)):
        pad = " " * (w - used)
        if i:
            parts.append(" ")
            at += 1
        if i >= right_from:
            parts.append(pad)
            at += len(pad)
        if cell.style:
            spans.append(Span(at, at + len(plain), cell.style))
        if cell.spans:
            spans.extend(Span(start + at, end + at, style) for start, end, style in cell.spans)
        parts.append(plain)
        at += len(plain)
        if i < right_from:
            parts.append(pad)
            at += len(pad)
    return Text("".join(parts), spans=spans)
