"""An OSWatcher file's reports: its ``zzz`` blocks, each report at its own time (see the
package docstring on the layouts), a file cut short losing only what the cut went through."""

from __future__ import annotations

import bz2
import calendar
import re
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from sgmon.model import Rows
from sgmon.readers.deadline import Deadline
from sgmon.readers.regular import read_regular

ZZZ = re.compile(r"^zzz ?\**(.*)$")
FIRST_ZZZ = re.compile(r"^zzz ?\**(.*)$", re.M)
DATE = re.compile(r"\w{3}\s+(\w{3})\s+(\d{1,2})\s+(\d{1,2}:\d\d:\d\d)\s+(?:(\S+)\s+)?(\d{4})")
INTERVAL = re.compile(r"Sample interval:\s*(\d+(?:\.\d+)?)\s*sec", re.I)
"""An Exadata cell's ``zzz`` line names the step of the run that follows (sic ``secconds``)."""
SAME_SNAPSHOT = 5.0
"""Blocks of different tools stamped within this many seconds belong to one snapshot (a tool's
second block starts the next one)."""


@dataclass
class Block:
    """One report of a tool: its time, tool, and the collector rows parsed from it.

    A ``zzz`` block holds one report (the classic layout) or a whole run of them (Exadata
    cells: one ``zzz`` then an hour of ``iostat -t -x 5 720``); each report's own time comes
    from its sub-stamp (``tod``, seconds after midnight of the wall clock the ``zzz`` line is
    in) or, for a tool that prints none, its place in the run (``offset`` seconds after the
    ``zzz`` line)."""

    t: float
    tool: str
    rows: dict[str, Rows] = field(default_factory=dict)
    counters: dict[str, dict[str, float]] = field(default_factory=dict)
    """netstat's cumulative counters (instance -> field -> count), turned into rates later."""
    tod: float | None = None
    offset: float = 0.0
    since_boot: bool = False
    """The first report of a run whose tool's banner is in the block: averages since boot."""


class Reports(list[Block]):
    """A block's reports, and how many of its lines were damaged (a row of numbers that does
    not fit the table), which the reading counts in one note."""

    damaged: int = 0


Parser = Callable[[list[str], float | None], list[Block]]
"""A tool's block parser: its reports in a block's lines, given the run's sample interval."""


@dataclass
class Reading:
    """What reading an archive's files shares: the hosts' zone (None: as the ``zzz`` line
    says), the notes, the zone names seen, the files whose run began since boot, and the
    files with damaged rows (path, how many)."""

    zone: ZoneInfo | None
    deadline: Deadline | None = None
    """The import's time bound: past it, the files not read yet are left, with one note."""
    notes: list[str] = field(default_factory=list)
    abbrs: set[str] = field(default_factory=set)
    booted: list[Path] = field(default_factory=list)
    damaged: list[tuple[Path, int]] = field(default_factory=list)


EXPANDS_MAX = 512 << 20
"""The most one compressed OSWatcher file may expand to: an hour of ``ps`` on a host of 5,000
processes is about 120 MB; past it the file is refused with a note instead of held in memory."""
RATIO_MAX = 100
"""...nor past this many times its compressed size (above ``RATIO_FLOOR``): OSWatcher's text
compresses 5:1 to 30:1, a decompression bomb of zeros 1000:1, and is refused early."""
RATIO_FLOOR = 32 << 20
CHUNK = 8 << 20
"""Bytes decompressed at a time, so the bound is checked before memory is spent."""


class _Bomb(Exception):
    """A compressed file that expands past ``EXPANDS_MAX``."""


def _member(raw: bytes, gz: bool, room: int) -> tuple[bytes, bool, bytes]:
    """The first gzip member (or bzip2 stream) of ``raw``: its content, whether it ended whole,
    and the bytes after it; _Bomb once it passes ``room`` bytes."""
    parts: list[bytes] = []

    def take(out: bytes) -> None:
        parts.append(out)
        if sum(map(len, parts)) > room:
            raise _Bomb

    if gz:
        z = zlib.decompressobj(wbits=31)
        pending = raw
        while not z.eof:
            take(out := z.decompress(pending, CHUNK))
            pending = z.unconsumed_tail
            if not pending and len(out) < CHUNK:
                break  # all of it read: the member ended, or the file was cut short
        return b"".join(parts), z.eof, z.unused_data
    b = bz2.BZ2Decompressor()
    take(b.decompress(raw, max_length=CHUNK))
    while not (b.eof or b.needs_input):
        take(b.decompress(b"", max_length=CHUNK))
    return b"".join(parts), b.eof, b.unused_data if b.eof else b""


def _text(path: Path, notes: list[str]) -> str:
    """The file's text; a compressed stream cut short gives what it held, with a note."""
    try:
        raw = read_regular(path)  # a FIFO among the files is refused, not waited on
    except OSError as e:
        notes.append(f"{path}: unreadable ({e.strerror})")
        return ""
    if path.suffix not in (".gz", ".bz2"):
        return raw.decode("utf-8", "replace")
    data, whole = bytearray(), False
    most = min(EXPANDS_MAX, max(RATIO_FLOOR, RATIO_MAX * len(raw)))
    try:
        while raw:  # a file may hold several streams (gzip members, bzip2 streams)
            member, whole, raw = _member(raw, path.suffix == ".gz", most - len(data))
            data += member
            if not whole:
                break
    except _Bomb:
        notes.append(f"{path}: expands past {most >> 20} MB, not OSWatcher text; not read")
        return ""
    except (zlib.error, OSError, ValueError) as e:
        notes.append(f"{path}: not a readable {path.suffix[1:]} file ({e})")
        return ""
    text = data.decode("utf-8", "replace")
    if whole:
        return text
    notes.append(f"{path}: compressed stream cut short; its last report dropped, the rest kept")
    return text[: text.rfind("\n") + 1]  # whole lines: the last report goes in blocks


def blocks(path: Path, parse: Parser, rd: Reading) -> Iterator[Block]:
    """The file's reports, each at its own time.  A file cut short (a torn last line, a cut
    compressed stream) loses the last report of its last block, which the cut may have gone
    through (a classic block holds one report; an Exadata cell's, an hour of them), with one
    note; other unparsable blocks are counted in one note, and a file whose continuous run
    began with a since-boot report (skipped) goes to ``rd.booted``.  Reports before the
    file's first ``zzz`` line are read at their own stamps, in the hour the file's name
    says; without stamps of their own they are refused, with one note."""
    before = len(rd.notes)
    text = _text(path, rd.notes)
    cut = len(rd.notes) > before
    torn = bool(text) and not text.endswith("\n") and not cut
    f = _File(path, parse, rd, torn or cut, torn)
    stamped = False
    for stamp, lines, last in _split(text):
        if torn and last:  # the torn line is no report's
            lines = lines[:-1]
        if stamp is None:
            stamp = _headless(path, text, lines, parse, rd)
        if stamp is not None:
            stamped = True
            yield from f.reports(stamp, lines, last)
    f.close()
    if not stamped and len(rd.notes) == before:  # empty, or not OSWatcher's: never silent
        rd.notes.append(f"{path}: no OSWatcher report (no zzz line) in it; skipped")


@dataclass
class _File:
    """One file's reading: its blocks' reports, and what it tells the reading at its end."""

    path: Path
    parse: Parser
    rd: Reading
    short: bool
    """The file was cut short (``torn``: mid-line; else in its compressed stream)."""
    torn: bool
    bad: list[str] = field(default_factory=list)
    boot: int = 0
    damaged: int = 0

    def reports(self, stamp: str, lines: list[str], last: bool) -> list[Block]:
        """One ``zzz`` block's reports, each at its time."""
        when = _when(stamp, self.rd.zone, self.rd.abbrs)
        step = _sample_interval(stamp)
        reports = self.parse(lines, step) if when is not None else []
        hurt = reports.damaged if isinstance(reports, Reports) else 0
        self.damaged += hurt
        if last and self.short:
            block = f"{self.path}: last block ({stamp})"
            reports = _uncut(reports, self.torn, block, self.rd.notes)
        elif not reports and not hurt:  # a block of damaged rows only is in their note
            self._unreadable(stamp, last)
        if when is None or not reports:
            return []  # (the last block, cut short, may have had no report to spare)
        self.boot += sum(r.since_boot for r in reports)
        return _timed(reports, when, step)

    def _unreadable(self, stamp: str, last: bool) -> None:
        if last:
            self.rd.notes.append(
                f"{self.path}: last block ({stamp}) incomplete; dropped, the rest kept"
            )
        else:
            self.bad.append(stamp)

    def close(self) -> None:
        """The file's notes: its unreadable blocks; and the reading's lists of files."""
        if self.bad:
            self.rd.notes.append(
                f"{self.path}: {len(self.bad)} block(s) not readable, first at "
                f"{self.bad[0]!r}; skipped"
            )
        if self.boot:
            self.rd.booted.append(self.path)
        if self.damaged:
            self.rd.damaged.append((self.path, self.damaged))


HOUR = re.compile(r"_(\d\d)\.(\d\d)\.(\d\d)\.(\d\d)00\.dat(?:\.gz|\.bz2)?$")
"""The hour a file's name says (``<host>_<tool>_<yy.mm.dd.hh00>.dat``)."""


def _headless(path: Path, text: str, lines: list[str], parse: Parser, rd: Reading) -> str | None:
    """The stamp that places the reports before a file's first ``zzz`` line: the hour of the
    file's name, in the zone its first ``zzz`` line names; None when there is none to read
    (OSWatcher's banner lines only), or (with a note) when a report has no stamp of its own
    to place it in that hour."""
    reports = parse(lines, None)
    if not reports:
        return None
    hour = HOUR.search(path.name)
    if hour is None or any(r.tod is None for r in reports):
        rd.notes.append(
            f"{path}: {len(reports)} report(s) before the first zzz line, with no time of "
            "their own; not read"
        )
        return None
    yy, mm, dd, hh = (int(g) for g in hour.groups())
    first = FIRST_ZZZ.search(text)
    date = DATE.search(first.group(1)) if first else None
    zone = date.group(4) or "" if date else ""
    return datetime(2000 + yy, mm, dd, hh).strftime(f"%a %b %d %H:%M:%S {zone} %Y")


def _uncut(reports: list[Block], torn: bool, block: str, notes: list[str]) -> list[Block]:
    """A file's last block cut short: its reports but the last one, which the cut may have
    gone through; a cut mid-line is noted (a cut compressed stream was, as it was read)."""
    if torn:
        what = "its last report dropped" if reports[:-1] else "dropped"
        notes.append(f"{block} cut mid-line; {what}, the rest kept")
    return reports[:-1]


def _timed(reports: list[Block], when: tuple[float, float], step: float | None) -> list[Block]:
    """The reports a block keeps, each at its time: those over an interval (one since boot
    never is, even when it is all the block holds); a block that states no sample interval
    and spans at most ``SAME_SNAPSHOT`` (``tool 1 3``) stands for one snapshot, its last 1 s
    report."""
    t0, tod0 = when
    kept = [r for r in reports if not r.since_boot]
    at = [_at(r, t0, tod0) for r in kept]
    if len(kept) > 1 and step is None and max(at) - min(at) <= SAME_SNAPSHOT:
        kept, at = kept[-1:], at[-1:]
    for r, t in zip(kept, at, strict=True):
        r.t = t
    return kept


def _at(r: Block, t0: float, tod0: float) -> float:
    """A report's epoch time: its sub-stamp's time of day after the ``zzz`` line's (a run
    that passes midnight goes on into the next day), else its place in the run."""
    if r.tod is None:
        return t0 + r.offset
    return t0 + (r.tod - tod0) % 86400


def _split(text: str) -> Iterator[tuple[str | None, list[str], bool]]:
    """``zzz`` blocks one at a time: (the date text, the lines up to the next one, whether it
    is the file's last); the lines before the first ``zzz`` come first, with no date text.
    Each block's lines are split apart at once (``str.splitlines``), a run of blank lines
    read as one (every report parser reads one as it reads many), so a file of blank or junk
    lines costs tens of nanoseconds a line, not microseconds."""
    text = BLANKS.sub("\n\n", text.replace("\r\n", "\n"))
    starts = _zzz_lines(text)
    head = text[: starts[0] if starts else len(text)].splitlines()
    if head:
        yield None, head, not starts
    for i, at in enumerate(starts):
        last = i + 1 == len(starts)
        lines = text[at : None if last else starts[i + 1]].splitlines()
        zzz = ZZZ.match(lines[0])
        assert zzz is not None  # the line begins with zzz
        yield zzz.group(1).strip(), lines[1:], last


ENDS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
"""Where ``str.splitlines`` ends a line (and at ``\\r\\n``)."""
BLANKS = re.compile(f"[{ENDS}][ \t{ENDS}]*[{ENDS}]")
"""A line's end and the blank lines (empty, or spaces and tabs) after it, CRLF made LF."""


def _zzz_lines(text: str) -> list[int]:
    """Where the ``zzz`` lines begin."""
    found, at = [], text.find("zzz")
    while at >= 0:
        if at == 0 or text[at - 1] in ENDS:
            found.append(at)
        at = text.find("zzz", at + 3)
    return found


def _when(stamp: str, zone: ZoneInfo | None, abbrs: set[str]) -> tuple[float, float] | None:
    """``Mon Nov 24 11:00:05 UTC 2026`` -> (epoch seconds, seconds after midnight on the
    host's clock); see the module docstring on zones."""
    m = DATE.search(stamp)
    if not m:
        return None
    mon, day, hms, abbr, year = m.groups()
    try:
        st = time.strptime(f"{year} {mon} {day} {hms}", "%Y %b %d %H:%M:%S")
    except ValueError:
        return None
    if abbr:
        abbrs.add(abbr)
    tod = st.tm_hour * 3600.0 + st.tm_min * 60 + st.tm_sec
    if zone is not None:
        return datetime(*st[:6], tzinfo=zone).timestamp(), tod
    if abbr in ("UTC", "GMT", "Z"):
        return float(calendar.timegm(st)), tod
    return time.mktime(st), tod


def _sample_interval(stamp: str) -> float | None:
    """The step a continuous run's ``zzz`` line states (``Sample interval: 5 secconds``)."""
    m = INTERVAL.search(stamp)
    return float(m.group(1)) if m else None
