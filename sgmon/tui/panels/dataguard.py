"""Data Guard state: role and protection, lags, each destination (a standby's onward ones too),
each redo thread (on a standby with its own lag: which RAC thread is behind), log switches and
events."""

from __future__ import annotations

import time
from functools import partial

from rich.console import Group, RenderableType
from rich.style import Style
from rich.text import Text

from sgmon.model import Event, Frame, number
from sgmon.tui.draw import AXIS_LEFT, pairs, runs, title
from sgmon.tui.fit import fit
from sgmon.tui.panels.base import Panel
from sgmon.tui.view import PaneView

EVENT_KINDS = ("log_switch", "role_change", "lgwr_slow_write", "remote_write_split")


def _text(view: PaneView, instance: str, name: str) -> str:
    v = view.value("oracle_dg", instance, name)
    return "" if v is None else str(v)


def transport_lag(view: PaneView) -> Text:
    """The standby's transport lag, and how old its datum is once that is past its threshold."""
    return lag_value(view) + stale_datum(view)


def lag_value(view: PaneView) -> Text:
    """The transport lag, or ``unknown`` (as DGMGRL says) when V$DATAGUARD_STATS has no value:
    a stopped transport shows no growing lag, so a blank here would read as healthy."""
    if view.value("oracle_dg", "db", "lag_unknown") == 1:
        return Text("unknown", style=view.palette.sev("crit"))
    return view.cell("oracle_dg", "db", "transport_lag")


def stale_datum(view: PaneView) -> Text:
    """`` datum N s old`` when the lags' datum is past its threshold (nothing arrives), else
    nothing."""
    age = view.value("oracle_dg", "db", "datum_age")
    if (
        not isinstance(age, int | float)
        or view.severity("oracle_dg", "db", "datum_age", age) == "ok"
    ):
        return Text()
    text = Text(" datum ", style=view.palette.muted)
    text.append_text(view.cell("oracle_dg", "db", "datum_age"))
    text.append(" s old", style=view.palette.muted)
    return text


def render_dataguard(view: PaneView, width: int) -> RenderableType:
    """Role line, lags, one line per destination and per redo thread, then recent events."""
    p = view.palette
    head = title(p, "DATA GUARD")
    problem = view.collector_problem("oracle_dg")
    if problem is not None:
        return Group(head, problem)
    rows = view.rows("oracle_dg")
    role = " ".join(
        x for x in (_text(view, "db", "db_unique_name"), _text(view, "db", "role")) if x
    )
    head.append(f"  {role}  {_text(view, 'db', 'protection_level')}", style=p.muted)
    switchover = f"  switchover {_text(view, 'db', 'switchover_status')}"
    if not switchover.endswith(" ") and head.cell_len + len(switchover) <= width:
        # whether a switchover could run now; whole or not at all ("NOT ALLOWED" cut to "NOT")
        head.append(switchover, style=p.muted)
    parts: list[RenderableType] = [
        head,
        pairs(
            p,
            [
                ("transport lag s", transport_lag(view)),
                ("apply lag s", view.cell("oracle_dg", "db", "apply_lag")),
                ("open", Text(_text(view, "db", "open_mode"))),
            ],
        ),
    ]
    for inst in sorted(k for k in rows if k.startswith("dest_")):
        line = Text(f" {inst} ", style=p.muted)
        line.append(fit(_text(view, inst, "target"), 14, "middle") + " ")
        line.append(f"{_text(view, inst, 'transmit_mode')} {_text(view, inst, 'affirm')} ")
        # the states' colours are the judgement's (sgmon.grading.text_grade), as every cell's
        if _text(view, inst, "status"):
            line.append_text(view.cell("oracle_dg", inst, "status"))
        if _text(view, inst, "gap_status"):
            line.append(" ")
            line.append_text(view.cell("oracle_dg", inst, "gap_status"))
        line.append("  resp p99 ", style=p.muted)
        resp = view.cell("oracle_dg", inst, "resp_p99")
        if resp.plain != "-":  # a histogram bucket's upper bound, in seconds
            resp = Text("≤", style=resp.style) + resp + Text(" s", style=p.muted)
        line.append_text(resp)
        if _text(view, inst, "error"):
            line.append("  ")
            line.append_text(view.cell("oracle_dg", inst, "error"))
        parts.append(line)
    threads = sorted(k for k in rows if k.startswith("thread_"))
    for inst in threads:
        cells = [
            ("seq", view.cell("oracle_dg", inst, "sequence")),
            ("switches/min", per_minute(view, inst)),
            ("srl in use", view.cell("oracle_dg", inst, "srl_in_use")),
        ]
        if view.value("oracle_dg", inst, "thread_lag") is not None:  # a standby: this thread's
            cells.append(("lag s", view.cell("oracle_dg", inst, "thread_lag")))
        parts.append(Text(f" {inst} ", style=p.muted) + pairs(p, cells))
    if threads:
        parts.append(switch_marks(view, threads, width))
    marked = view.memo.column(view.window, ("dg events",), _marked_events)
    events = [e for found in marked if found for e in found]
    for e in events[-3:]:
        stamp = time.strftime("%H:%M:%S", time.localtime(e.time))
        parts.append(Text(fit(f" {stamp} {e.text}", max(20, width)), style=p.muted))
    return Group(*parts)


def per_minute(view: PaneView, inst: str) -> Text:
    """Log switches of one thread over the minute that ends at the cursor: a switch every 5 s
    is 12 a minute, where a per-interval count reads 0 four ticks in five."""
    end = view.frame.time if view.frame is not None else None
    n, seen = 0.0, False
    counts = view.memo.column(view.window, ("switch counts", inst), partial(_switches, inst))
    for at, v in (c for c in counts if c is not None):
        if end is not None and end - 60 < at <= end and v is not None:
            n, seen = n + v, True
    if not seen:
        return Text("-", style=view.palette.muted)
    return view.cell("oracle_dg", inst, "log_switches", value=n)


def switch_marks(view: PaneView, threads: list[str], width: int) -> Text:
    """A mark on the shared time axis at each interval with a log switch (any thread), so a
    switch lines up with the remote-write spikes in the sparklines and heatmap above."""
    p = view.palette
    n = max(1, width - AXIS_LEFT)
    cells: list[tuple[str, Style | None]] = []
    hits = view.memo.column(view.window, ("switched", *threads), partial(_switched, threads))
    for hit in hits[-n:]:
        cells.append(("│", p.sev("warn")) if hit else ("·" if hit is not None else " ", p.muted))
    cells = [(" ", None)] * (n - len(cells)) + cells
    return Text(f"{'switches':>{AXIS_LEFT - 1}} ", style=p.muted) + runs(cells)


def _marked_events(frame: Frame) -> tuple[Event, ...]:
    """A frame's events the panel lists (through the host's memo: read once per frame)."""
    return tuple(e for e in frame.events if e.kind in EVENT_KINDS)


def _switches(inst: str, frame: Frame) -> tuple[float, float | None]:
    """A frame's time and its log switches of one thread."""
    v = frame.value("oracle_dg", inst, "log_switches")
    return frame.time, float(v) if isinstance(v, int | float) else None


def _switched(threads: list[str], frame: Frame) -> bool:
    """Whether any thread switched logs in a frame's interval."""
    return any((number(frame.value("oracle_dg", t, "log_switches")) or 0) > 0 for t in threads)


class DataGuardPanel(Panel):
    """Data Guard role, lags, destinations, log switches."""

    render_view = staticmethod(render_dataguard)
    needs = "oracle_dg"
