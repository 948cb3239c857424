"""Commits held before they start: sessions that wait for log buffer space or for a log switch.

These waits are not in log file sync: the session cannot even generate its redo.  ``log file
switch (checkpoint incomplete)`` means the next log is still needed by a checkpoint (too few or
too small logs, seed 000 Table 2); ``(archiving needed)`` that the archiver (or an archive
destination) is behind; ``log buffer space`` that LGWR does not free the buffer as fast as redo
arrives (slow log writes, or a small log buffer).  Each is named for what it is, at warn when
the stall costs more than ``STALL_MS`` of session time per second.
"""

from __future__ import annotations

from collections.abc import Iterable

from sgmon.analysis.context import Context
from sgmon.analysis.rules.base import CAUSE, Claim, rule
from sgmon.fields import ORACLE_WAITS
from sgmon.oracle.queries import LOG_SPACE
from sgmon.units import fmt_num

STALL_MS = 10.0
"""Session milliseconds per second waited on one of these events that make a finding."""
MEANING = {
    "log buffer space": "LGWR does not free the log buffer as fast as redo arrives: slow log "
    "writes, or a log buffer too small",
    "log file switch (checkpoint incomplete)": "the next log is still needed by a checkpoint: "
    "too few or too small redo logs (Best Practices for Synchronous Redo Transport, Table 2)",
    "log file switch (archiving needed)": "the next log is not archived yet: the archiver or an "
    "archive destination is behind",
    "log file switch completion": "sessions wait for each log switch to finish: switches too "
    "frequent (Best Practices for Synchronous Redo Transport, Table 2)",
    "log file switch (private strand flush incomplete)": "private redo strands flushed at each "
    "switch: switches too frequent",
}


@rule("log_space", seed="000", weight=CAUSE)
def log_space(ctx: Context) -> Iterable[Claim]:
    """A session stall on log space or a log switch, per event, on the primary."""

    p = ctx.primary
    if p is None:
        return
    for event in LOG_SPACE:
        row = p.frame.rows(ORACLE_WAITS.name).get(event)
        spent, avg = ORACLE_WAITS.time_waited.of(row), ORACLE_WAITS.avg.of(row)
        if spent is None or spent < STALL_MS:
            continue
        ev = [
            f"{event}: {fmt_num(spent)} ms of session time per second, avg {fmt_num(avg)} ms",
            MEANING[event],
            (
                "these waits come before the commit (not in log file sync): the sessions cannot "
                "generate redo meanwhile"
            ),
        ]
        yield Claim(
            host=p.name,
            subject=event,
            severity="warn",
            cause=f"{event} {fmt_num(spent)} ms/s",
            where=p.name,
            conclusion=MEANING[event].split(":")[0],
            evidence=ev,
            series=[f.key(p.name, event) for f in (ORACLE_WAITS.time_waited, ORACLE_WAITS.avg)],
            explains=False,
        )
