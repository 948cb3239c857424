"""The recorder's retention: a host's closed table files compressed (``--compress``) and whole
files older than ``--keep`` deleted, at each rotation and when the recorder starts.

Only the tables the archive's meta.json says a host's directory holds are touched, never an
open file, another file, or a symlink to something elsewhere.  A full disk while compressing is
said once (the files are tried again at the next rotation); any other failure leaves that one
file as it is.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

from sgmon.archive import FILE_RE, period_stamp
from sgmon.sinks.csvfile import ROOM_ERRNOS, gzip_file


def _plain_file(p: Path) -> bool:
    """A regular file, not a symlink to something elsewhere: retention never follows one."""
    return p.is_file() and not p.is_symlink()


@dataclass(frozen=True, slots=True)
class Retention:
    """What becomes of a host's table files once written: ``keep`` seconds (None: for ever),
    compressed or not, with the rotation period naming the current files."""

    rotate: float
    keep: float | None
    compress: bool
    warn: Callable[[str], None]

    def tidy(
        self,
        hdir: Path,
        tables: Collection[str],
        open_paths: Collection[Path],
        rotated: bool,
        failing: bool,
    ) -> None:
        """Compress and delete ``hdir``'s files of ``tables`` (never one of ``open_paths``).
        ``rotated``: a file was just closed, so the current period's closed files are done
        too; ``failing``: the archive already reported its trouble (a full disk is said once)."""
        now = time.time()
        current = period_stamp(now, self.rotate)
        try:
            entries = sorted(hdir.iterdir())
        except OSError as e:
            self.warn(f"{hdir}: {e.strerror}; not tidied")
            return
        for p in entries:
            m = FILE_RE.match(p.name)
            if not m or m["collector"] not in tables or p in open_paths or not _plain_file(p):
                continue
            try:
                self._file(p, m, now, rotated or m["stamp"] != current)
            except OSError as e:
                if e.errno in ROOM_ERRNOS:  # tried at the next rotation; a full disk is said once
                    if not failing:
                        self.warn(f"{hdir}: {e.strerror}; files left uncompressed for now")
                    return
                self.warn(f"{p}: {e.strerror}; left as it is")

    def _file(self, p: Path, m: re.Match[str], now: float, closed: bool) -> None:
        """Delete one table file when older than ``keep``, else compress it once closed."""
        if self.keep is not None and p.stat().st_mtime < now - self.keep:
            p.unlink()
        elif self.compress and not m["gz"] and closed:
            gzip_file(p)
