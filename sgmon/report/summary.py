"""The report's opening summary, in sentences a manager reads: what happened, when (the zone of
the machine making the report and UTC), the impact on commits, the cause and the fix.

The impact is counted from the primaries' own numbers in the archive: commits are the
``oracle_redo`` ``user_commits`` rate times each tick's interval, and "how much slower" is log
file sync's average, weighted by the commits of each tick, during the top finding against the
ticks before it.  ``Impact`` keeps those numbers so that a test can check them against the CSV.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sgmon import events
from sgmon.fields import ORACLE_REDO, ORACLE_WAITS
from sgmon.units import fmt_num
from sgmon.verdicts import source_title

if TYPE_CHECKING:
    from sgmon.model import Frame
    from sgmon.report.judged import Judged
    from sgmon.verdicts import Finding


SLOWER = 1.1
"""A log file sync average this many times the one before is "slower"; below it, noise (or a
standby dropped from the commit, which makes commits faster)."""
DB = ORACLE_REDO.Rows.db.instance(None)
"""oracle_redo's one row, the database's."""


@dataclass(frozen=True, slots=True)
class Impact:
    """Commits and their log file sync, during the incident and before it."""

    start: float
    end: float
    commits: float
    """Commits the primaries made between ``start`` and ``end``."""
    lfs_during: float | None
    """Log file sync average (ms) during, weighted by each tick's commits."""
    lfs_before: float | None
    """The same over the ticks before ``start``."""


def impact(judged: Judged, start: float, end: float) -> Impact:
    """The primaries' commits and log file sync in [start, end] and before ``start``."""
    primaries = [h for h, role in judged.hosts if role == "primary"]
    during: list[Frame] = []
    before: list[Frame] = []
    for host in primaries:
        for f in judged.frames.get(host, []):
            (during if start <= f.time <= end else before if f.time < start else []).append(f)
    return Impact(start, end, _commits(during), _lfs(during), _lfs(before))


def _tick_commits(f: Frame) -> float:
    """The commits of one tick: the rate times the tick's interval (none when unknown)."""
    return (ORACLE_REDO.user_commits.at(f, DB) or 0.0) * f.interval


def _commits(frames: list[Frame]) -> float:
    return sum(_tick_commits(f) for f in frames)


def _lfs(frames: list[Frame]) -> float | None:
    """Log file sync's average over these ticks, each weighted by its commits."""
    total = weight = 0.0
    for f in frames:
        avg = ORACLE_WAITS.avg.at(f, events.LOG_FILE_SYNC)
        commits = _tick_commits(f)
        if avg is not None and commits > 0:
            total += avg * commits
            weight += commits
    return total / weight if weight else None


def when(t: float) -> str:
    """``10:31:02 CET (09:31:02 UTC)``: the report maker's zone first, then UTC."""
    local = time.localtime(t)
    here = time.strftime("%H:%M:%S %Z", local)
    utc = datetime.fromtimestamp(t, UTC).strftime("%H:%M:%S")
    return f"{here} ({utc} UTC)" if local.tm_gmtoff else f"{utc} UTC"


def _span(seconds: float) -> str:
    if seconds >= 7200:
        return f"{fmt_num(seconds / 3600)} hours"
    if seconds >= 120:
        return f"{fmt_num(seconds / 60)} minutes"
    return f"{fmt_num(seconds)} seconds"


def sentences(judged: Judged, fix: str | None) -> tuple[list[str], Impact | None]:
    """The summary's sentences and the impact they state (None when nothing happened): of the
    first warning of the findings, which are in the order of the largest impact
    (``sgmon.verdicts.by_impact``), so the longest costliest episode leads, never the latest."""
    top: Finding | None = next((f for f in judged.findings if f.severity in ("warn", "crit")), None)
    day = datetime.fromtimestamp(judged.start, UTC).strftime("%Y-%m-%d")
    if top is None:
        calm = impact(judged, judged.start, judged.end)
        said = [f"Nothing went wrong between {when(judged.start)} and {when(judged.end)} on {day}."]
        if calm.lfs_during is not None:
            said.append(
                f"The primary made {calm.commits:,.0f} commits; log file sync averaged "
                f"{fmt_num(calm.lfs_during)} ms."
            )
        return said, None
    end = top.end if top.end is not None else judged.end
    got = impact(judged, top.start, end)
    ongoing = "" if top.end is not None else " and was still going on when the recording ends"
    what = "A critical problem" if top.severity == "crit" else "A problem"
    said = [
        (
            f"{what} on {top.host} started at {when(top.start)} on {day}{ongoing}; "
            f"it lasted {_span(end - top.start)}, until {when(end)}."
        )
    ]
    if got.lfs_during is not None:
        slower = ""
        if got.lfs_before:
            ratio = got.lfs_during / got.lfs_before
            slower = f", against {fmt_num(got.lfs_before)} ms before: " + (
                f"{fmt_num(ratio)} times slower" if ratio >= SLOWER else "commits were not slowed"
            )
        said.append(
            f"In that time the primary made {got.commits:,.0f} commits, and each waited "
            f"{fmt_num(got.lfs_during)} ms on average for log file sync{slower}."
        )
    said.append(f"Cause: {top.episode} ({top.peaked(when)}); {top.impact()}.")
    said += left(judged)
    source = source_title(top.seed)
    said.append(f"What to do: {fix} (from {source})." if fix else f"Source: {source}.")
    return said, got


def left(judged: Judged) -> list[str]:
    """What the incidents left, one sentence each: the commits and redo on no standby, and
    the share of the extra commit time the named causes explain."""
    state = judged.outcomes
    if state is None:
        return []
    said = [
        f"Not protected by {u.target} ({u.dest}): {u.text()}." for u in state.unprotected if u.sync
    ]
    return said + [f"On {e.host}, {e.text()}." for e in state.explained]
