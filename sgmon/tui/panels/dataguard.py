"""Data Guard state: role and protection, lags, each destination (a standby's onward ones too),
each redo thread (on a standby with its own lag: which RAC thread is behind), log switches and
events."""

from __future__ import annotations

import time
from functools import partial

from rich.console import Group, RenderableType
from rich.style import Style
from rich.text import Text

from sgmon.contract import Text as TextRef
from sgmon.fields import ORACLE_DG
from sgmon.model import Event, Frame
from sgmon.outcomes import RULE
from sgmon.tui.draw import AXIS_LEFT, pairs, runs, title
from sgmon.tui.fit import fit
from sgmon.tui.panels.base import Panel
from sgmon.tui.view import PaneView

EVENT_KINDS = (
    "log_switch",
    "role_change",
    "lgwr_slow_write",
    "remote_write_split",
    "transport_stopped",
)
DB = ORACLE_DG.Rows.db.instance(None)
"""The database's own row (role, protection, lags)."""


def _text(view: PaneView, ref: TextRef, instance: str = DB) -> str:
    """A text field of ``instance`` at the cursor, or nothing."""
    return ref.at(view.frame, instance) or ""


def transport_lag(view: PaneView) -> Text:
    """The standby's transport lag, and how old its datum is once that is past its threshold."""
    return lag_value(view) + stale_datum(view)


def lag_value(view: PaneView) -> Text:
    """The transport lag, or ``unknown`` (as DGMGRL says) when V$DATAGUARD_STATS has no value:
    a stopped transport shows no growing lag, so a blank here would read as healthy."""
    if view.value(ORACLE_DG.lag_unknown, DB) == 1:
        return Text("unknown", style=view.palette.sev("crit"))
    return view.cell(ORACLE_DG.transport_lag, DB)


def stale_datum(view: PaneView) -> Text:
    """`` datum N s old`` when the lags' datum is past its threshold (nothing arrives), else
    nothing."""
    age = view.value(ORACLE_DG.datum_age, DB)
    if not isinstance(age, int | float) or view.grade(ORACLE_DG.datum_age, DB, age) == "ok":
        return Text()
    text = Text(" datum ", style=view.palette.muted)
    text.append_text(view.cell(ORACLE_DG.datum_age, DB))
    text.append(" s old", style=view.palette.muted)
    return text


def render_dataguard(view: PaneView, width: int) -> RenderableType:
    """Role line, lags, one line per destination and per redo thread, then recent events."""
    p = view.palette
    head = title(p, "DATA GUARD")
    problem = view.collector_problem(ORACLE_DG.name)
    if problem is not None:
        return Group(head, problem)
    rows = view.rows(ORACLE_DG.name)
    lags = [
        ("transport lag s", transport_lag(view)),
        ("apply lag s", view.cell(ORACLE_DG.apply_lag, DB)),
        ("open", Text(_text(view, ORACLE_DG.open_mode))),
    ]
    parts: list[RenderableType] = [role_line(view, head, width), pairs(p, lags)]
    parts += [dest_line(view, inst) for inst in sorted(ORACLE_DG.Rows.dest.of(rows))]
    threads = sorted(ORACLE_DG.Rows.thread.of(rows))
    parts += [thread_line(view, inst) for inst in threads]
    if threads:
        parts.append(switch_marks(view, threads, width))
    parts += event_lines(view, width)
    return Group(*parts)


def role_line(view: PaneView, head: Text, width: int) -> Text:
    """The title with the database's name, role and protection level, and whether a
    switchover could run now when that fits whole ("NOT ALLOWED" cut to "NOT" would mislead)."""
    p = view.palette
    said = (_text(view, ORACLE_DG.db_unique_name), _text(view, ORACLE_DG.role))
    role = " ".join(x for x in said if x)
    head.append(f"  {role}  {_text(view, ORACLE_DG.protection_level)}", style=p.muted)
    switchover = f"  switchover {_text(view, ORACLE_DG.switchover_status)}"
    if not switchover.endswith(" ") and head.cell_len + len(switchover) <= width:
        head.append(switchover, style=p.muted)
    return head


def dest_line(view: PaneView, inst: str) -> Text:
    """One destination: target, transport mode, status and gap, response p99, error."""
    p = view.palette
    line = Text(f" {inst} ", style=p.muted)
    line.append(fit(_text(view, ORACLE_DG.target, inst), 14, "middle") + " ")
    mode = _text(view, ORACLE_DG.transmit_mode, inst)
    line.append(f"{mode} {_text(view, ORACLE_DG.affirm, inst)} ")
    # the states' colours are the judgement's (sgmon.grading.text_grade), as every cell's
    if _text(view, ORACLE_DG.status, inst):
        line.append_text(view.cell(ORACLE_DG.status, inst))
    if _text(view, ORACLE_DG.gap_status, inst):
        line.append(" ")
        line.append_text(view.cell(ORACLE_DG.gap_status, inst))
    line.append("  resp p99 ", style=p.muted)
    resp = view.cell(ORACLE_DG.resp_p99, inst)
    if resp.plain != "-":  # a histogram bucket's upper bound, in seconds
        resp = Text("≤", style=resp.style) + resp + Text(" s", style=p.muted)
    line.append_text(resp)
    if _text(view, ORACLE_DG.error, inst):
        line.append("  ")
        line.append_text(view.cell(ORACLE_DG.error, inst))
    return line + exposure(view, inst)


def exposure(view: PaneView, inst: str) -> Text:
    """While the destination does not protect, the analysis' running count of what is on no
    standby (``  3,600 commits, 18.8 MB of redo on no standby for 4 s``), in its finding's
    colour; an ASYNC destination's redo not yet received, muted.  Nothing otherwise."""
    state = view.judgement.state if view.judgement is not None else None
    if state is None:
        return Text()
    u = next(
        (u for u in state.unprotected if u.host == view.host and u.dest == inst and u.active),
        None,
    )
    if u is None:
        return Text()
    key = f"{RULE}:{view.host}:{inst}"
    found = next((f for f in state.findings if f.key == key and f.active), None)
    style = view.palette.sev(found.severity) if found is not None else view.palette.muted
    return Text(f"  {u.text()}", style=style)


def thread_line(view: PaneView, inst: str) -> Text:
    """One redo thread: sequence, switches a minute, standby logs in use, and on a standby
    this thread's own lag."""
    cells = [
        ("seq", view.cell(ORACLE_DG.sequence, inst)),
        ("switches/min", per_minute(view, inst)),
        ("srl in use", view.cell(ORACLE_DG.srl_in_use, inst)),
    ]
    if view.value(ORACLE_DG.thread_lag, inst) is not None:  # a standby: this thread's
        cells.append(("lag s", view.cell(ORACLE_DG.thread_lag, inst)))
    return Text(f" {inst} ", style=view.palette.muted) + pairs(view.palette, cells)


def event_lines(view: PaneView, width: int) -> list[Text]:
    """The last three events of the window the panel lists, oldest first."""
    marked = view.memo.column(view.window, ("dg events",), _marked_events)
    events = [e for found in marked if found for e in found]
    return [
        Text(fit(f" {_stamp(e)} {e.text}", max(20, width)), style=view.palette.muted)
        for e in events[-3:]
    ]


def _stamp(e: Event) -> str:
    """An event's local time of day."""
    return time.strftime("%H:%M:%S", time.localtime(e.time))


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
    return view.cell(ORACLE_DG.log_switches, inst, value=n)


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
    v = ORACLE_DG.log_switches.raw_at(frame, inst)
    return frame.time, float(v) if isinstance(v, int | float) else None


def _switched(threads: list[str], frame: Frame) -> bool:
    """Whether any thread switched logs in a frame's interval."""
    return any((ORACLE_DG.log_switches.at(frame, t) or 0) > 0 for t in threads)


class DataGuardPanel(Panel):
    """Data Guard role, lags, destinations, log switches."""

    render_view = staticmethod(render_dataguard)
    needs = ORACLE_DG.name
