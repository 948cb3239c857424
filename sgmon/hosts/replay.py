"""A recording as a source: the archive read back into the frames the live engine produced.

Every host of the archive becomes a host of this source.  A frame is rebuilt for each tick time
found in any of the host's tables; a collector without rows at that tick gets the status that
``events.csv`` last recorded for it (``collector_error`` ...) or ``ok`` with no rows.  Frame
events come back from ``events.csv`` and go to the first frame at or after their time.

A damaged archive is read around the damage, in bounded memory: torn (no newline), malformed
(a stray ``\r``, binary garbage, a field over the csv module's 128 KiB) and over-long rows,
rows naming another host and ticks at impossible times are skipped and counted per file
(``skipped``, ``problems()``), a value no source measures (inf, a negative duration or count) is
left out of its row and counted, a damaged meta.json entry leaves out that host or collector
with a note, and names are escaped before any terminal sees them.
"""

from __future__ import annotations

import bisect
import csv
import itertools
import math
import statistics
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from sgmon.archive import (
    STATUS_KIND,
    Lines,
    data_files,
    decode_row,
    event_files,
    parse_time,
    printable,
    valid_step,
)
from sgmon.errors import ArchiveError
from sgmon.hosts import HostInfo
from sgmon.hosts.archived import archived_hosts, meta_or_csv
from sgmon.model import CollectorResult, Event, Field, Frame, Rows, Schema, Status
from sgmon.readers.deadline import Deadline
from sgmon.regrid import common_step, needs_regrid, regrid

SHOWN = 4
"""Files named in one problem line; the others are counted."""


def _rows(
    lines: Iterable[tuple[int, str]], bad: Callable[[int], None]
) -> Iterator[tuple[int, list[str]]]:
    """(line number, cells) of each line parsed alone: a stray quote never joins lines (the
    recorder writes one physical line per row), a line the csv module refuses is ``bad``."""
    for n, line in lines:
        if line.count('"') % 2:
            bad(n)
            continue
        try:
            cells = next(csv.reader((line,)))
        except (csv.Error, StopIteration):
            bad(n)
            continue
        yield n, cells


class ReplaySource:
    """Plays an archive back; ``speed`` 1 is real time, 0 as fast as the sinks take it."""

    def __init__(
        self,
        directory: str | Path,
        speed: float = 1.0,
        start: float | None = None,
        deadline: Deadline | None = None,
    ) -> None:
        self.root = Path(directory)
        self.deadline = deadline or Deadline()
        """The reading's time bound: past it, the tables not read yet are left, with a note."""
        self.start = start
        """Ticks before this instant are played at once (history and analysis need them), so
        paced playback begins there (``replay --from``)."""
        if not self.root.is_dir():
            raise ArchiveError(f"{self.root} is not a directory; name an sgmon record --dir")
        self.notes: list[str] = []
        """What meta.json could not tell (a damaged host or collector entry, a bad step)."""
        meta = meta_or_csv(self.root, self.notes)
        if meta is None:
            raise ArchiveError(f"{self.root} has no meta.json; is it an sgmon record --dir?")
        self.meta = meta
        self.speed = speed
        self.damage: dict[str, list[int]] = {}
        """File (relative to the archive) -> [rows skipped, first line skipped]."""
        self.impossible: dict[str, dict[str, int]] = {}
        """File -> column -> values left out as impossible."""
        interval = valid_step(meta.get("interval", 1.0))
        if interval is None:
            self.notes.append(
                f"meta.json: interval {printable(str(meta.get('interval')))} is no sampling "
                "step; the ticks' own spacing is used"
            )
        self.interval = interval or 0.0
        self.regridded: float | None = None
        """The common step, when the hosts' steps differed and their frames were regridded."""
        self._schemas: dict[str, Schema] = {}
        self._steps: dict[str, float | None] = {}
        self._dirs: dict[str, str] = {}
        self.hosts: list[HostInfo] = []
        for name, h in archived_hosts(self.root, meta, self.notes).items():
            self.hosts.append(HostInfo(name, h["role"]))
            steps = h["steps"] if isinstance(h["steps"], dict) else {}
            good = [v for v in map(valid_step, steps.values()) if v is not None]
            self._steps[name] = max(good) if good else interval
            self._schemas[name] = h["schema"]
            self._dirs[name] = h["dir"]
        self._frames: dict[str, list[Frame]] | None = None

    @property
    def skipped(self) -> int:
        """Rows skipped as unreadable, in every file."""
        return sum(n for n, _ in self.damage.values())

    def problems(self) -> list[str]:
        """One ``sgmon:`` line for each kind of damage read around: the rows skipped and
        where, the values left out, what meta.json could not tell."""
        out = [f"sgmon: {note}" for note in self.notes[:SHOWN]]
        if len(self.notes) > SHOWN:
            out.append(f"sgmon: {len(self.notes) - SHOWN} more like these")
        if self.damage:
            where = sorted(self.damage.items(), key=lambda kv: -kv[1][0])
            shown = ", ".join(f"{f} ({n} from line {first})" for f, (n, first) in where[:SHOWN])
            more = f" and {len(where) - SHOWN} more files" if len(where) > SHOWN else ""
            out.append(f"sgmon: {self.skipped} torn or malformed row(s) skipped: {shown}{more}")
        if self.impossible:
            total = sum(sum(c.values()) for c in self.impossible.values())
            worst = sorted(self.impossible.items(), key=lambda kv: -sum(kv[1].values()))
            shown = ", ".join(f"{f} ({', '.join(sorted(cols))})" for f, cols in worst[:SHOWN])
            more = f" and {len(worst) - SHOWN} more files" if len(worst) > SHOWN else ""
            out.append(
                f"sgmon: {total} impossible value(s) (negative durations or counts, "
                f"infinities) left out of the analysis: {shown}{more}"
            )
        return out

    def _bad(self, path: Path, line: int, n: int = 1) -> None:
        key = str(path.relative_to(self.root))
        got = self.damage.setdefault(key, [0, line])
        got[0] += n
        got[1] = min(got[1], line)

    def schema(self, host: str) -> Schema:
        """Declared fields of the host's collectors, as recorded."""
        return self._schemas.get(host, {})

    def frames(self, host: str) -> list[Frame]:
        """All frames of one host, oldest first (loaded once)."""
        if self._frames is None:
            frames = {h.name: self._load(h) for h in self.hosts}
            if needs_regrid(frames):
                step = self.regridded = self.interval = common_step(frames)
                frames = {h: regrid(fs, self.schema(h), step) for h, fs in frames.items()}
            self._frames = frames
        return self._frames.get(host, [])

    def _load(self, host: HostInfo) -> list[Frame]:
        hdir = self.root / self._dirs[host.name]
        schema = self.schema(host.name)
        ticks: dict[float, dict[str, Rows]] = {}
        if hdir.is_dir():
            tables = [
                (path, collector, fields)
                for collector, files in data_files(hdir).items()
                if (fields := schema.get(collector)) is not None
                for path in files
            ]
            for i, (path, collector, fields) in enumerate(tables):
                if self.deadline.passed():
                    self._unread(host.name, tables[i:], i)
                    break
                self._read_table(path, host.name, collector, fields, ticks)
        statuses, events = self._read_events(event_files(hdir) if hdir.is_dir() else [], host.name)
        frames = []
        times = sorted(ticks)
        step = self._steps[host.name] or _spacing(times)
        if not self.interval:
            self.interval = step
        for seq, t in enumerate(times, 1):
            got = ticks[t]
            results = {}
            for c in schema:
                if got.get(c):
                    results[c] = CollectorResult(Status.OK, rows=got[c])
                else:
                    results[c] = _status_at(statuses.get(c, []), t)
            frames.append(Frame(host.name, t, seq, step, results, (), host.role))
        return _attach_events(frames, events)

    def _read_table(
        self,
        path: Path,
        host: str,
        collector: str,
        fields: tuple[Field, ...],
        ticks: dict[float, dict[str, Rows]],
    ) -> None:
        lines = Lines(path)
        rows = _rows(lines, lambda n: self._bad(path, n))
        try:
            first, cols = next(rows, (0, []))
            if cols[:3] != ["time", "host", "instance"]:
                n = sum(1 for _ in rows) + (1 if first else 0)  # no header: nothing is readable
                if n:
                    self._bad(path, first, n)
                elif not lines.lost and not lines.cut:  # not a line in it: not even a header
                    self.notes.append(f"{path.relative_to(self.root)}: empty; nothing to read")
                rows = iter(())
            impossible: list[str] = []
            for n, cells in rows:
                try:
                    t, h, inst, row = decode_row(cols, cells, fields, impossible)
                except (ValueError, KeyError):
                    self._bad(path, n)
                    continue
                if h != host:
                    self._bad(path, n)  # never attribute a row to the wrong host
                    continue
                ticks.setdefault(t, {}).setdefault(collector, {})[inst] = row
                if impossible:
                    self._impossible(path, impossible)
                    impossible.clear()
        except OSError as e:
            self.notes.append(f"{path.relative_to(self.root)}: {e.strerror or e}; not read")
        self._lines_lost(path, lines)

    def _unread(
        self, host: str, left: list[tuple[Path, str, tuple[Field, ...]]], done: int
    ) -> None:
        """The note of a reading stopped by its deadline (said once): the host's tables read,
        those not."""
        if self.deadline.told:
            return
        first = left[0][0].relative_to(self.root)
        self.notes.append(
            self.deadline.said(
                f"{done} of {done + len(left)} table(s) of {printable(host)}",
                f"{len(left)} from {printable(str(first))} on, and any host after it",
            )
        )

    def _impossible(self, path: Path, columns: list[str]) -> None:
        got = self.impossible.setdefault(str(path.relative_to(self.root)), {})
        for c in columns:
            got[c] = got.get(c, 0) + 1

    def _lines_lost(self, path: Path, lines: Lines) -> None:
        """Count the lines the reader passed over: too long, or a torn last one."""
        if lines.cut:
            self.notes.append(
                f"{path.relative_to(self.root)}: {lines.cut}; what came before it was read"
            )
        if lines.lost:
            self._bad(path, lines.lost_at, lines.lost)

    def _read_events(
        self, paths: list[Path], host: str
    ) -> tuple[dict[str, list[tuple[float, str, str]]], list[tuple[float, Event]]]:
        """The statuses and events of a host's event files, each in time order."""
        statuses: dict[str, list[tuple[float, str, str]]] = {}
        events: list[tuple[float, Event]] = []
        for path in paths:
            self._read_event_file(path, host, statuses, events)
        for said in statuses.values():
            said.sort()
        if len(paths) > 1:  # one file is in the order it was written
            events.sort(key=lambda e: e[0])
        return statuses, events

    def _read_event_file(
        self,
        path: Path,
        host: str,
        statuses: dict[str, list[tuple[float, str, str]]],
        events: list[tuple[float, Event]],
    ) -> None:
        lines = Lines(path)
        rows = _rows(lines, lambda n: self._bad(path, n))
        try:
            _, cols = next(rows, (0, []))
            for n, cells in rows:
                try:
                    d = {k: printable(v) for k, v in zip(cols, cells, strict=True)}
                    t = parse_time(d["time"])
                    if d["host"] != host:
                        raise ValueError("other host")
                    if d["kind"].startswith(STATUS_KIND):
                        status = d["kind"].removeprefix(STATUS_KIND)
                        Status(status)
                        statuses.setdefault(d["collector"], []).append((t, status, d["text"]))
                    elif d["kind"] != "gap":
                        value = float(d["value"]) if d["value"] else None
                        if value is not None and not math.isfinite(value):
                            value = None
                        tick = parse_time(d["tick"]) if d.get("tick") else t
                        ev = Event(t, d["collector"], d["kind"], d["instance"], d["text"], value)
                        events.append((tick, ev))
                except (ValueError, KeyError):
                    self._bad(path, n)
        except OSError as e:
            self.notes.append(f"{path.relative_to(self.root)}: {e.strerror or e}; not read")
        self._lines_lost(path, lines)

    def run(self, emit: Callable[[Frame], None], stop: threading.Event) -> None:
        """Emit every host's frames merged in time order, paced by ``speed``."""
        merged = sorted(
            (f for h in self.hosts for f in self.frames(h.name)), key=lambda f: (f.time, f.host)
        )
        prev: float | None = None
        for f in merged:
            if stop.is_set():
                return
            early = self.start is not None and f.time < self.start
            pause = 0.0 if prev is None or self.speed <= 0 or early else max(0.0, f.time - prev)
            if pause and stop.wait(min(pause, 5 * self.interval) / self.speed):
                return
            prev = f.time
            emit(f)

    def close(self) -> None:
        """Nothing to release (files are read whole and closed)."""


def _spacing(times: list[float]) -> float:
    """The usual step between ticks, for an archive whose meta.json gives none."""
    steps = [b - a for a, b in itertools.pairwise(times) if b > a]
    return statistics.median(steps) if steps else 1.0


def _status_at(changes: list[tuple[float, str, str]], t: float) -> CollectorResult:
    i = bisect.bisect_right(changes, (t, "\uffff", ""))
    if i == 0:
        return CollectorResult(Status.OK)
    _, status, text = changes[i - 1]
    return CollectorResult(Status(status), error=text or None)


def _attach_events(frames: list[Frame], events: list[tuple[float, Event]]) -> list[Frame]:
    """Each event goes back to the frame that carried it (its ``tick``), in recorded order."""
    if not events or not frames:
        return frames
    times = [f.time for f in frames]
    by_frame: dict[int, list[Event]] = {}
    for tick, e in events:
        i = min(bisect.bisect_left(times, tick - 1e-6), len(frames) - 1)
        by_frame.setdefault(i, []).append(e)
    out = list(frames)
    for i, evs in by_frame.items():
        f = out[i]
        out[i] = Frame(f.host, f.time, f.seq, f.interval, f.collectors, tuple(evs), f.role)
    return out


def replaying(sources: Iterable[object]) -> bool:
    """Whether every source plays a recording back: a recording is judged without clock skew
    (its frames did not arrive now), and the header says REPLAY, not LIVE."""
    sources = list(sources)
    return bool(sources) and all(isinstance(s, ReplaySource) for s in sources)
