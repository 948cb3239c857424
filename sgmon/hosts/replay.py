"""A recording as a source: the archive read back into the frames the live engine produced.

Every host of the archive becomes a host of this source.  A frame is rebuilt for each tick time
found in any of the host's tables; a collector without rows at that tick gets the status that
``events.csv`` last recorded for it (``collector_error`` ...) or ``ok`` with no rows.  Frame
events come back from ``events.csv`` and go to the first frame at or after their time.  Torn
(no newline) and malformed rows, and rows naming another host, are skipped and counted in
``skipped``, never fatal.
"""

from __future__ import annotations

import bisect
import csv
import gzip
import threading
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path

from sgmon.archive import STATUS_KIND, data_files, decode_row, parse_time, read_meta
from sgmon.errors import ArchiveError
from sgmon.hosts import HostInfo
from sgmon.model import CollectorResult, Event, Field, Frame, Rows, Schema, Status
from sgmon.regrid import common_step, needs_regrid, regrid


def _read_lines(path: Path) -> tuple[list[str], int]:
    """Complete lines of a plain or gzipped file, and 1 if the last one was torn."""
    chunks: list[bytes] = []
    try:
        with gzip.open(path) if path.suffix == ".gz" else open(path, "rb") as fh:
            while block := fh.read(1 << 20):
                chunks.append(block)
    except (EOFError, OSError, zlib.error):
        pass  # a truncated .gz: keep what decompressed; the cut line is dropped below
    lines = b"".join(chunks).decode("utf-8", errors="replace").split("\n")
    last = lines.pop()
    return lines, 1 if last else 0


class ReplaySource:
    """Plays an archive back; ``speed`` 1 is real time, 0 as fast as the sinks take it."""

    def __init__(
        self, directory: str | Path, speed: float = 1.0, start: float | None = None
    ) -> None:
        self.root = Path(directory)
        self.start = start
        """Ticks before this instant are played at once (history and analysis need them), so
        paced playback begins there (``replay --from``)."""
        if not self.root.is_dir():
            raise ArchiveError(f"{self.root} is not a directory; name an sgmon record --dir")
        meta = read_meta(self.root)
        if meta is None:
            raise ArchiveError(f"{self.root} has no meta.json; is it an sgmon record --dir?")
        self.meta = meta
        self.speed = speed
        self.interval = float(meta.get("interval", 1.0))
        self.skipped = 0
        self.regridded: float | None = None
        """The common step, when the hosts' steps differed and their frames were regridded."""
        self._schemas: dict[str, Schema] = {}
        self._steps: dict[str, float] = {}
        self.hosts: list[HostInfo] = []
        for name, h in meta.get("hosts", {}).items():
            self.hosts.append(HostInfo(name, h.get("role", "")))
            steps = h.get("steps") or {"": h.get("interval", self.interval)}
            self._steps[name] = float(max(steps.values()))
            self._schemas[name] = {
                c: tuple(Field.from_dict(f) for f in spec["fields"])
                for c, spec in h.get("collectors", {}).items()
            }
        self._frames: dict[str, list[Frame]] | None = None

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
        hdir = self.root / self.meta["hosts"][host.name].get("dir", host.name)
        schema = self.schema(host.name)
        ticks: dict[float, dict[str, Rows]] = {}
        if hdir.is_dir():
            for collector, files in data_files(hdir).items():
                fields = schema.get(collector)
                if fields is None:
                    continue
                for path in files:
                    self._read_table(path, host.name, collector, fields, ticks)
        statuses, events = self._read_events(hdir / "events.csv", host.name)
        frames = []
        for seq, t in enumerate(sorted(ticks), 1):
            got = ticks[t]
            results = {}
            for c in schema:
                if got.get(c):
                    results[c] = CollectorResult(Status.OK, rows=got[c])
                else:
                    results[c] = _status_at(statuses.get(c, []), t)
            step = self._steps[host.name]
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
        lines, torn = _read_lines(path)
        self.skipped += torn
        reader = csv.reader(lines)
        cols = next(reader, None)
        if not cols or cols[:3] != ["time", "host", "instance"]:
            self.skipped += max(0, len(lines) - 1)
            return
        for cells in reader:
            try:
                t, h, inst, row = decode_row(cols, cells, fields)
            except (ValueError, KeyError):
                self.skipped += 1
                continue
            if h != host:
                self.skipped += 1  # never attribute a row to the wrong host
                continue
            ticks.setdefault(t, {}).setdefault(collector, {})[inst] = row

    def _read_events(
        self, path: Path, host: str
    ) -> tuple[dict[str, list[tuple[float, str, str]]], list[tuple[float, Event]]]:
        statuses: dict[str, list[tuple[float, str, str]]] = {}
        events: list[tuple[float, Event]] = []
        if not path.exists():
            return statuses, events
        lines, torn = _read_lines(path)
        self.skipped += torn
        reader = csv.reader(lines)
        cols = next(reader, None)
        for cells in reader:
            try:
                d = dict(zip(cols or (), cells, strict=True))
                t = parse_time(d["time"])
                if d["host"] != host:
                    raise ValueError("other host")
                if d["kind"].startswith(STATUS_KIND):
                    status = d["kind"].removeprefix(STATUS_KIND)
                    Status(status)
                    statuses.setdefault(d["collector"], []).append((t, status, d["text"]))
                elif d["kind"] != "gap":
                    value = float(d["value"]) if d["value"] else None
                    tick = parse_time(d["tick"]) if d.get("tick") else t
                    ev = Event(t, d["collector"], d["kind"], d["instance"], d["text"], value)
                    events.append((tick, ev))
            except (ValueError, KeyError):
                self.skipped += 1
        for v in statuses.values():
            v.sort()
        return statuses, events

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
