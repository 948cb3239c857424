"""`sgmon import awr-report FILE`: the wait-event histograms of an AWR text report (awrrpt.sql).

For DBAs who only have the report.  The report covers one interval of one instance, so it gives
one frame per file: time = the End Snap's Snap Time, interval = End - Begin Snap Time (the header
``Begin Snap:  37 12-Feb-17 12:16:04``).  Those times are the database host's local time without a
zone: ``--tz +HH:MM`` gives the offset, else they are taken as UTC (and a note says so).  Several
files (consecutive reports) give several frames.

Read, for the commit-path events of the live ``oracle_waits`` (the same event list, ``RFS%``
included; names the report cut to 26 characters are restored):

* "Wait Event Histogram": Total Waits and % of Waits per bucket (<1ms .. <32ms exact, then
  ``<=1s`` (32 ms - 1 s together) and ``>1s``);
* "Wait Event Histogram Detail (64 msec to 2 sec)", "(4 msec to 2 sec)", "(4 sec to 2 min)"
  where present: their buckets replace the coarse ones they cover (their first column, "% under
  the range", is the sum of the smaller buckets and is skipped);
* "Foreground Wait Events" and "Background Wait Events": waits and Total Wait Time (s), summed,
  for ``time_waited`` and ``avg``; "Top 5/10 ... Events" when those sections are missing.

Counts are Total Waits x % / 100, so each bucket is good to the report's 0.1 % rounding.  Bucket
names follow the report's footnotes: ``s`` is 1024 ms, ``m`` 64 x 1024 ms, ``1/8s`` 128 ms.
Layout: columns are found from each section's dashed rule line, as the report prints them
(an 11.2 awrrpt text report was the model; see tests/data/awr/).
"""

from __future__ import annotations

import argparse
import re
import statistics
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from collectors.oracle.waits import percentiles
from sgmon.errors import UsageError
from sgmon.importers import Imported
from sgmon.importers.frames import Builder
from sgmon.model import Rows, Value
from sgmon.oracle import queries
from sgmon.readers.deadline import Deadline, files_within
from sgmon.readers.regular import read_regular
from sgmon.units import parse_offset

HELP = "wait-event histograms of AWR text reports (awrrpt.sql, text format), one frame per file"

TEXT_MAX = 256 << 20
"""The largest AWR text report read (a 24-hour RAC report is a few MB): past it the file is
refused with one line instead of read into memory."""
HISTOGRAM = "Wait Event Histogram"
DETAIL = "Wait Event Histogram Detail"
FOREGROUND = ("Foreground Wait Events", "Background Wait Events")
TOP = ("Top 5 Timed Foreground Events", "Top 10 Foreground Events", "Top 5 Timed Events")
_RULE = re.compile(r"^-{2,}( +-{2,})+\s*$")  # a table's column rule starts the line
_END = re.compile(r"^ {1,16}-{40,}\s*$")  # a section's end (not the indented % underline)
_SNAP = re.compile(r"^\s*(Begin|End) Snap:\s+(\d+)\s+(\d{1,2}-\w{3}-\d{2} \d{2}:\d{2}:\d{2})")
_NUM = re.compile(r"^(\d[\d,]*\.?\d*|\.\d+)([KMG]?)$")
_UNIT = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}
NAME_WIDTH = 26  # the report's Event column


@dataclass
class Report:
    """What one report file holds for the frame."""

    begin: datetime | None = None
    end: datetime | None = None
    host: str = ""
    totals: dict[str, float] = field(default_factory=dict)  # histogram Total Waits
    waits: dict[str, float] = field(default_factory=dict)  # fg + bg waits
    seconds: dict[str, float] = field(default_factory=dict)  # fg + bg Total Wait Time (s)
    top: dict[str, tuple[float, float | None]] = field(default_factory=dict)
    ranges: dict[str, list[tuple[float, float | None, float]]] = field(default_factory=dict)
    """event -> (lower ms, upper ms or None, % of waits), coarse sections first."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The report files, the host they belong to, the database host's UTC offset."""
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE", help="awrrpt text files")
    parser.add_argument("--host", default="", help="host name (default: the report's Host Name)")
    parser.add_argument("--role", choices=("primary", "standby"), default="primary")
    parser.add_argument("--tz", help="the database host's UTC offset (+HH:MM); default UTC")


def read(args: argparse.Namespace) -> Imported:
    """Every file's frame, in time order, on one host."""
    try:
        tz = parse_offset(args.tz) if args.tz else None
    except ValueError as e:
        raise UsageError(str(e)) from None
    notes: list[str] = []
    reports = _reports(args.files, notes, getattr(args, "deadline", None))
    if tz is None:
        notes.append("AWR report times are the database host's local time: taken as UTC (--tz)")
    host = args.host or next((r.host for r in reports if r.host), "") or "awr"
    timed = sorted(((*_times(r, tz or 0.0), r) for r in reports), key=lambda x: x[0])
    steps = [dt for _, dt, _ in timed]
    b = Builder(statistics.median_high(steps) if steps else 0.0)  # as regrid.usual_step
    b.imp.notes.extend(notes)
    for end, dt, rep in timed:
        b.sample(host, args.role, end, dt, {"oracle_waits": wait_rows(rep, dt)})
    b.source(host, {"oracle_waits": PROVENANCE})
    return b.imp


def _reports(files: list[Path], notes: list[str], deadline: Deadline | None) -> list[Report]:
    """Every file's report that has rows to import; none at all is a usage error (one line),
    not an empty archive."""
    within = files_within(deadline, files, notes)
    reports = [rep for path in within if (rep := _report(path, notes)) is not None]
    if not reports:
        raise UsageError(notes[0] if len(notes) == 1 else f"{notes[0]} (and {len(notes) - 1} more)")
    return reports


def _report(path: Path, notes: list[str]) -> Report | None:
    """One report file, parsed; None (and a note) when it holds no wait event section of the
    commit path, a usage error when it is no AWR text report."""
    try:  # a FIFO is refused, not waited on; a report is a few MB, never gigabytes
        text = read_regular(path, TEXT_MAX).decode("utf-8", "replace")
    except OSError as e:
        raise UsageError(f"{path}: {e.strerror}") from None
    rep = parse(text.splitlines())
    if rep.begin is None or rep.end is None or rep.end <= rep.begin:
        raise UsageError(f"{path}: no Begin Snap / End Snap times: not an AWR text report?")
    if not rep.ranges and not rep.waits:
        notes.append(f"{path}: no wait event section of the commit path: nothing imported")
        return None
    return rep


PROVENANCE = {
    "waits": "AWR report: Foreground + Background Wait Events Waits (else the histogram's)",
    "time_waited": "AWR report: Foreground + Background Wait Events, Total Wait Time (s)",
    "avg": "AWR report: Total Wait Time (s) / Waits of the Wait Events sections",
    "hist": "AWR report: Wait Event Histogram (+ Detail) % of Waits x Total Waits, 0.1 % steps",
    "p50": "AWR report histogram: bucket of the interval",
    "p90": "AWR report histogram: bucket of the interval",
    "p99": "AWR report histogram: bucket of the interval",
    "max_bucket": "AWR report histogram: highest bucket hit",
}


def _times(rep: Report, tz: float) -> tuple[float, float]:
    """The End Snap in UTC epoch seconds (``tz``: the host's offset east of UTC), and the
    seconds from the Begin Snap to it."""
    assert rep.begin is not None and rep.end is not None  # read() keeps only such reports
    return rep.end.replace(tzinfo=UTC).timestamp() - tz, (rep.end - rep.begin).total_seconds()


def wait_rows(rep: Report, dt: float) -> Rows:
    """The report's ``dt`` seconds as ``oracle_waits`` rows, one per commit-path event."""
    out: Rows = {}
    for event in dict.fromkeys([*rep.ranges, *rep.waits, *rep.top]):
        # exact counts first: the histogram's Total Waits are rounded to 3 figures (61.2K)
        total = rep.waits.get(event) or rep.totals.get(event) or rep.top.get(event, (None,))[0]
        secs = rep.seconds.get(event)
        if secs is None and event in rep.top:
            secs = rep.top[event][1]
        hist = histogram(rep.ranges.get(event, []), total or 0.0) if event in rep.ranges else None
        row: dict[str, Value] = {
            "waits": total / dt if total is not None else None,
            "time_waited": round(secs * 1000 / dt, 3) if secs is not None else None,
            "avg": round(secs * 1000 / total, 4) if secs is not None and total else None,
            "hist": hist,
        }
        row.update(percentiles(hist))
        out[event] = row
    return out


def histogram(ranges: list[tuple[float, float | None, float]], total: float) -> list[list]:
    """Interval bucket counts [[upper ms or None, count]] from (lower, upper, %) ranges, finer
    later sections replacing the coarse ranges they cover."""
    kept: list[tuple[float, float | None, float]] = []
    for lo, hi, pct in ranges:  # a range drops every kept one reaching above its lower bound
        kept = [r for r in kept if r[1] is not None and r[1] <= lo] + [(lo, hi, pct)]
    return [[hi, round(total * pct / 100)] for _, hi, pct in kept]


def parse(lines: list[str]) -> Report:
    """Walk the report once: header times and host, then the sections read here."""
    rep = Report()
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _SNAP.match(line)
        if m:
            t = datetime.strptime(m.group(3), "%d-%b-%y %H:%M:%S")
            setattr(rep, "begin" if m.group(1) == "Begin" else "end", t)
        elif line.startswith("Host Name") and not rep.host:
            table = _table(lines, i)
            if table:
                rep.host = table[1][0][0] if table[1] else ""
        elif line.startswith(HISTOGRAM):
            table = _table(lines, i)
            if table:
                _histogram(rep, *table, detail=line.startswith(DETAIL))
        elif line.startswith(FOREGROUND):
            table = _table(lines, i)
            if table:
                _waits(rep, *table)
        elif line.startswith(TOP):
            table = _table(lines, i)
            if table:
                _top(rep, *table)
        i += 1
    return rep


def _table(lines: list[str], start: int) -> tuple[list[str], list[list[str]]] | None:
    """The column labels and the rows of the section starting at ``start``, cut at the spans
    of its dashed rule line; None when the section has no table ("No data exists")."""
    j = start + 1
    while j < len(lines):
        if _END.match(lines[j]) or (j > start + 1 and lines[j].startswith(HISTOGRAM)):
            return None
        if _RULE.match(lines[j]):
            break
        j += 1
    else:
        return None
    spans = [(m.start(), m.end()) for m in re.finditer(r"-+", lines[j])]
    labels = [_cut(lines[j - 1], spans, k) for k in range(len(spans))]
    rows = []
    for line in lines[j + 1 :]:
        if not line.strip() or _END.match(line) or _RULE.match(line):
            break
        rows.append([_cut(line, spans, k) for k in range(len(spans))])
    return labels, rows


def _cut(line: str, spans: list[tuple[int, int]], k: int) -> str:
    """Cell ``k``: from the end of the previous column to the end of this one (numbers are
    right-aligned and may reach left into the gap); the name column is cut at its own end."""
    lo = spans[k - 1][1] if k else 0
    hi = spans[k][1] if k + 1 < len(spans) else len(line)
    return line[lo:hi].strip()


def _histogram(rep: Report, labels: list[str], rows: list[list[str]], detail: bool) -> None:
    bounds = [_bound(label) for label in labels[2:]]
    for row in rows:
        event = _event(row[0])
        if event is None:
            continue
        if not detail:
            total = _number(row[1])
            if total is not None:
                rep.totals[event] = total
        lo = 0.0
        out = rep.ranges.setdefault(event, [])
        for k, (cell, hi) in enumerate(zip(row[2:], bounds, strict=False)):
            if detail and k == 0 and out:  # "% under the range": the smaller buckets' sum,
                lo = hi or 0.0  # known from the coarser section already read
                continue
            pct = _number(cell) if cell else 0.0
            if pct is not None:
                out.append((lo, hi, pct))
            lo = hi if hi is not None else lo


def _counts(
    labels: list[str], rows: list[list[str]]
) -> Iterator[tuple[str, float | None, float | None]]:
    """(event, waits, seconds) of each commit-path row of a wait-event table."""
    col = _columns(labels)
    if col.get("waits") is None:
        return
    for row in rows:
        event = _event(row[0])
        if event is None:
            continue
        n = _number(row[col["waits"]])
        s = _number(row[col["time"]]) if col.get("time") is not None else None
        yield event, n, s


def _waits(rep: Report, labels: list[str], rows: list[list[str]]) -> None:
    for event, n, s in _counts(labels, rows):
        if n is not None:
            rep.waits[event] = rep.waits.get(event, 0.0) + n
        if s is not None:
            rep.seconds[event] = rep.seconds.get(event, 0.0) + s


def _top(rep: Report, labels: list[str], rows: list[list[str]]) -> None:
    for event, n, s in _counts(labels, rows):
        if n is not None:
            rep.top[event] = (n, s)


def _columns(labels: list[str]) -> dict[str, int]:
    """Where the waits and total time (s) columns are, by their labels."""
    out: dict[str, int] = {}
    for k, label in enumerate(labels):
        if label == "Waits":
            out.setdefault("waits", k)
        elif re.search(r"Time ?\((s|sec)\)", label):
            out.setdefault("time", k)
    return out


def known_events() -> tuple[str, ...]:
    """The live collector's event names, both versions' (a report may come from either)."""
    return tuple(
        dict.fromkeys(
            (*queries.EVENTS_12C, *queries.EVENTS_11G, *queries.LOG_SPACE, *queries.RAC_EVENTS)
        )
    )


def _event(cell: str) -> str | None:
    """The full event name of a report cell when it is a commit-path event, else None."""
    for name in known_events():
        if cell == name or (len(cell) >= NAME_WIDTH and name.startswith(cell)):
            return name
    prefixes = tuple(p.rstrip("%") for p in queries.EVENT_PATTERNS)
    return cell if cell.startswith(prefixes) else None


def _bound(label: str) -> float | None:
    """A bucket column's upper bound in ms (None: the open last bucket) from its heading:
    ``<1ms``, ``<512us``, ``<=1s`` (truly < 1024 ms), ``<1/8s``, ``<2s``, ``< 1m``, ``>=2s``."""
    s = label.replace(" ", "")
    if s.startswith(">"):
        return None
    m = re.fullmatch(r"<=?(\d+)(?:/(\d+))?(us|ms|s|m)", s)
    if not m:
        raise UsageError(f"AWR report: unknown histogram column {label!r}")
    n = float(m.group(1)) / float(m.group(2) or 1)
    return n * {"us": 0.001, "ms": 1.0, "s": 1024.0, "m": 65536.0}[m.group(3)]


def _number(cell: str) -> float | None:
    """``3,825`` / ``35.9K`` / ``.7`` -> a number; anything else None."""
    m = _NUM.match(cell.strip())
    if not m:
        return None
    return float(m.group(1).replace(",", "")) * _UNIT[m.group(2)]
