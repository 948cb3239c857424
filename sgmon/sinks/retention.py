"""The recorder's retention: a host's closed table files compressed (``--compress``) and whole
files older than ``--keep`` deleted, at each rotation and when the recorder starts.

Only the tables the archive's meta.json says a host's directory holds are touched (a name of
the form sgmon gives them, of a collector recorded there), never an open file, another file, and
never anything but a regular file with one name: a symlink, a FIFO, a device, a directory or a
hard link at a table's name is left alone with one note (deleting a hard link's name, or
compressing through a symlink, would reach a file elsewhere).  Everything is done relative to the
host directory's descriptor (``sgmon.safefs``), never following a symlink.  A full disk while
compressing is said once (the files are tried again at the next rotation); any other failure
leaves that one file as it is.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from sgmon.archive import FILE_RE, period_stamp
from sgmon.safefs import Dir, Refused, unexpected
from sgmon.sinks.csvfile import ROOM_ERRNOS, gzip_file


@dataclass(frozen=True, slots=True)
class Retention:
    """What becomes of a host's table files once written: ``keep`` seconds (None: for ever),
    compressed or not, with the rotation period naming the current files."""

    rotate: float
    keep: float | None
    compress: bool
    warn: Callable[[str], None]
    _said: set[str] = field(default_factory=set)
    """The paths already said to be left alone: once a run, not at every rotation."""

    def tidy(
        self,
        hdir: Dir,
        tables: Collection[str],
        open_names: Collection[str],
        rotated: bool,
        failing: bool,
    ) -> None:
        """Compress and delete ``hdir``'s files of ``tables`` (never one of ``open_names``).
        ``rotated``: a file was just closed, so the current period's closed files are done
        too; ``failing``: the archive already reported its trouble (a full disk is said once)."""
        if not (self.compress or self.keep is not None):
            return
        now = time.time()
        current = period_stamp(now, self.rotate)
        try:
            names = sorted(hdir.listdir())
        except OSError as e:
            self.warn(f"{hdir.path}: {e.strerror}; not tidied")
            return
        for name in names:
            m = FILE_RE.match(name)
            if not m or m["collector"] not in tables or name in open_names:
                continue
            try:
                self._file(hdir, name, m, now, rotated or m["stamp"] != current)
            except Refused as e:
                if e.filename not in self._said:
                    self._said.add(e.filename)
                    self.warn(f"{e}, not a file sgmon wrote; left alone")
            except OSError as e:
                if e.errno in ROOM_ERRNOS:  # tried at the next rotation; a full disk is said once
                    if not failing:
                        self.warn(f"{hdir.path}: {e.strerror}; files left uncompressed for now")
                    return
                self.warn(f"{hdir.join(name)}: {e.strerror}; left as it is")

    def _file(self, hdir: Dir, name: str, m: re.Match[str], now: float, closed: bool) -> None:
        """Delete one table file when older than ``keep``, else compress it once closed;
        ``Refused`` when it is not a regular file with one name."""
        st = hdir.lstat(name)
        if st is None:
            return
        old = self.keep is not None and st.st_mtime < now - self.keep
        if not old and not (self.compress and not m["gz"] and closed):
            return  # nothing to do with it, whatever it is
        found = unexpected(st)
        if found is not None:
            raise Refused(found, hdir.join(name))
        if old:
            hdir.unlink(name)
        else:
            gzip_file(hdir, name)
