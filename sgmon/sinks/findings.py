"""The findings log: ``DIR/<host>/findings.csv``, a row when a finding opens, when its severity
changes (``raise``, ``lower``: the row's time is the change's, its ``start`` the first form's),
and when it closes.

A sink that writes the findings the Monitor's Judge opened and closed with each frame, so the
recorder keeps the analysis' conclusions next to the numbers they came from, the same ones the
dashboard shows.  Rows go through the
archive's ``AppendFile``: one ``write()`` per tick on an ``O_APPEND`` descriptor, a torn last row
cut off on reopening, a failed write undone, flushed to disk within 5 s.  A full disk is reported
once on stderr; the rows that could not be written are retried with the next frame (the latest
1,000 are kept).  Given the recorder's ``ArchiveDir``, it writes in the same host directories by
descriptor (a refused one is said once, by whichever sink meets it first) and shares its flusher;
given a path, it holds that directory the same way.
"""

from __future__ import annotations

import sys
from collections import deque
from pathlib import Path

from sgmon.archive import fmt_time
from sgmon.grading import RANK
from sgmon.model import Frame
from sgmon.sinks.archivedir import ArchiveDir, say
from sgmon.sinks.csvfile import ROOM_ERRNOS, AppendFile
from sgmon.verdicts import Finding, Judgement

COLUMNS = ("time", "host", "event", "severity", "rule", "title", "evidence", "start", "end")


def finding_row(time: float, event: str, f: Finding) -> list[str]:
    """One CSV row; evidence lines are joined with `` | ``."""
    return [
        fmt_time(time),
        f.host,
        event,
        f.severity,
        f.rule,
        f.title,
        " | ".join(f.evidence),
        fmt_time(f.start),
        "" if f.end is None else fmt_time(f.end),
    ]


class FindingsLog:
    """Appends each finding's open and close, as judged, to its host's findings.csv."""

    def __init__(self, directory: str | Path | ArchiveDir) -> None:
        if isinstance(directory, ArchiveDir):
            self.dirs = directory.share()
        else:
            self.dirs = ArchiveDir.at(Path(directory), say)
        self.root = self.dirs.path
        self._files: dict[str, AppendFile] = {}
        self._pending: deque[tuple[str, list[str]]] = deque(maxlen=1000)
        self._untimed: set[str] = set()  # hosts with a finding whose time is no date (said once)
        self._failing = False
        self._closed = False

    def __call__(self, frame: Frame, judgement: Judgement) -> None:
        """Log what opened, changed severity or closed with this frame."""
        for f in judgement.opened:
            self._row(f.start, "open", f)
        for f in judgement.changed:
            (_, before), (t, after) = f.steps[-2:]
            self._row(t, "raise" if RANK[after] > RANK[before] else "lower", f)
        for f in judgement.closed:
            self._row(f.end or f.start, "close", f)
        if self._pending:
            self._flush()
        self.dirs.flusher.tick()

    def _row(self, time: float, event: str, f: Finding) -> None:
        """Queue a finding's row; one whose times are no date (a far clock gone wrong) is
        dropped with one note per host, and the log goes on."""
        try:
            self._pending.append((f.host, finding_row(time, event, f)))
        except (ValueError, OverflowError, OSError) as e:
            if f.host not in self._untimed:
                self._untimed.add(f.host)
                self.dirs.warn(
                    f"{self.root}: {f.host}: a finding stamped with no date ({e}) not logged"
                )

    def _flush(self) -> None:
        by_host: dict[str, list[list[str]]] = {}
        for host, row in self._pending:
            by_host.setdefault(host, []).append(row)
        try:
            for host, rows in by_host.items():
                f = self._file(host)
                if f is not None:
                    f.write(rows)
                self._pending = deque(((h, r) for h, r in self._pending if h != host), maxlen=1000)
        except OSError as e:
            if not self._failing and e.errno not in ROOM_ERRNOS:  # the archive says that one
                print(
                    f"sgmon: cannot write findings under {self.root}: {e.strerror}; "
                    "free space there, findings are retried",
                    file=sys.stderr,
                )
            self._failing = True
            return
        self._failing = False

    def _file(self, host: str) -> AppendFile | None:
        """The host's findings.csv; None when its directory is refused (said once)."""
        f = self._files.get(host)
        if f is None:
            hdir = self.dirs.host(host, create=True)
            if hdir is None:
                return None
            f = self._files[host] = AppendFile(hdir, "findings", list(COLUMNS), self.dirs.warn)
            self.dirs.flusher.add(f)
        return f

    def close(self) -> None:
        """Close the files, flushed to disk (idempotent)."""
        if self._closed:
            return
        self._closed = True
        for f in self._files.values():
            self.dirs.flusher.retire(f)
        self._files.clear()
        self.dirs.close()
