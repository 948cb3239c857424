"""What the LGWR trace tells that the database's views may not: slow log writes, and a redo
transport process that died.

Slow log writes as the LGWR trace tells them (``Warning: log write elapsed time 1900ms, size
4KB``), when the database's own waits cannot show them: no login (no waits read), or writes of
the past (a trace read ``from_start`` after the incident: they all land in the first recorded
tick, while the waits read now are today's).

Seed 000 ("Diagnosing High Log File SYNC Waits"): Oracle prints the warning for writes over
500 ms by default (``_long_log_write_warning_threshold`` lowers it); under SYNC the write waits
for the standby too, and the warnings' times are where to start tracing the remote writes
(event 16410 on both sides) to tell the standby from the local disk.  When the waits are read
and log file sync has moved, the chain's causes speak and these writes are its events; a
write of now beside waits that have not moved yet is left to the chain too, which opens once
the symptom holds (a finding of its own for the same seconds would be the same fault twice).
"""

from __future__ import annotations

from collections.abc import Iterable

from sgmon.analysis.context import Context
from sgmon.analysis.findings import AT_ONCE
from sgmon.analysis.rules.base import CAUSE, GENERIC, LGWR_TRACE, Claim, rule
from sgmon.fields import ORACLE_TRACE, ORACLE_WAITS
from sgmon.model import Event
from sgmon.units import fmt_num, fmt_utc, plural

SLOW_WRITE = "lgwr_slow_write"
"""The event of one warning (collectors/oracle/trace.py)."""
STOPPED = "transport_stopped"
"""The event of ``NSS2 is not running anymore.`` (11.2: LNSn) in the LGWR trace."""
PAST_S = 60.0
"""A warning this much older than the tick is of the past (a backlog), not the tick's own:
LGWR stamps a line when it writes it, and the reader is at most a few ticks behind."""


@rule("lgwr_slow_writes", seed="000", weight=GENERIC, persist=AT_ONCE)
def lgwr_slow_writes(ctx: Context) -> Iterable[Claim]:
    """The primary's LGWR trace warned of slow writes this interval, beyond their limit, and
    no commit-path chain says more."""
    p = ctx.primary
    if p is None or ctx.chain is not None:
        return
    n = ORACLE_TRACE.slow_writes.at(p.frame, LGWR_TRACE)
    longest = ORACLE_TRACE.max_write.at(p.frame, LGWR_TRACE)
    key = ORACLE_TRACE.max_write.key(p.name, LGWR_TRACE)
    if not n or longest is None:
        return
    severity = ctx.grader.grade(*key, longest)
    if severity == "ok":
        return
    writes = sorted((e for e in p.frame.events if e.kind == SLOW_WRITE), key=lambda e: e.time)
    past = any(e.time < ctx.now - PAST_S for e in writes)
    if p.frame.rows(ORACLE_WAITS.name) and not past:
        return  # the waits of now are read: the chain speaks for these writes
    yield Claim(
        host=p.name,
        subject=LGWR_TRACE,
        severity=severity,
        cause=f"LGWR log write {fmt_num(longest)} ms",
        where=p.name,
        conclusion=f"{plural(n, 'slow log write')} in the LGWR trace{_traced(writes, ctx.now)}",
        evidence=[
            _span(writes, n, longest),
            (
                "under SYNC a log write waits for the standby as well: trace the remote writes "
                "at these times (event 16410 level 16 on the primary and the standby, their "
                "NSS and RFS traces given to sgmon) to split network from standby I/O (Oracle "
                "MAA, Best Practices for Synchronous Redo Transport: Diagnosing High Log File "
                "SYNC Waits)"
            ),
        ],
        series=[key, ORACLE_TRACE.slow_writes.key(p.name, LGWR_TRACE)],
    )


def _traced(events: list[Event], now: float) -> str:
    """``, traced 2026-11-20 14:16:00 to 14:18:37 UTC`` for lines of the past (a backlog, read
    long after): the title says when they were, not only the tick they were read in."""
    if not events or events[0].time >= now - PAST_S:
        return ""
    first, last = fmt_utc(events[0].time), fmt_utc(events[-1].time)
    if first == last:
        return f", traced {first} UTC"
    same_day = first[:10] == last[:10]
    return f", traced {first} to {last[11:] if same_day else last} UTC"


def _span(writes: list[Event], n: float, longest: float) -> str:
    """The warnings' own times (a backlog read ``from_start`` is older than the tick)."""
    text = f"{plural(n, 'warning')} 'log write elapsed time', the longest {fmt_num(longest)} ms"
    if not writes:
        return text
    worst = max(writes, key=lambda e: e.value or 0.0)
    first, last = writes[0].time, writes[-1].time
    when = fmt_utc(first) if first == last else f"{fmt_utc(first)} to {fmt_utc(last)}"
    return f"{text} at {fmt_utc(worst.time)} UTC; trace times {when} UTC"


@rule("transport_stopped", seed="trace", weight=CAUSE, persist=AT_ONCE)
def transport_stopped(ctx: Context) -> Iterable[Claim]:
    """The LGWR trace says a redo transport process it started (NSSn, LNSn in 11.2) is not
    running anymore: named at once, with the trace's own times."""
    p = ctx.primary
    if p is None:
        return
    stops = sorted((e for e in p.frame.events if e.kind == STOPPED), key=lambda e: e.time)
    names = sorted({e.text.split()[0] for e in stops})
    for name in names:
        mine = [e for e in stops if e.text.split()[0] == name]
        times = [e.time for e in mine]
        yield Claim(
            host=p.name,
            subject=name,
            severity="warn",
            cause=f"{name} stopped",
            where=p.name,
            conclusion=f"a redo transport process died (LGWR trace){_traced(mine, ctx.now)}",
            evidence=[
                f"LGWR trace: '{name} is not running anymore.' at "
                + ", ".join(f"{fmt_utc(t)} UTC" for t in times[:3])
                + (f" and {len(times) - 3} more" if len(times) > 3 else ""),
                (
                    "the process that ships redo to a standby ended; the destination's status "
                    "and error (V$ARCHIVE_DEST_STATUS) and the alert log say whether it went "
                    "into error and the standby fell behind"
                ),
            ],
            series=[],
        )
