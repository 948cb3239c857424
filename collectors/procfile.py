"""A /proc file kept open and re-read from offset 0 each tick, and the search of its keyed lines.

Opening a /proc file costs a path walk and a file object per tick; keeping the descriptor and
seeking back is the cheapest way to read it again (what sadc does).  Unbuffered binary I/O so
one ``read()`` returns the file's current content whole.
"""

from __future__ import annotations

import io
from collections.abc import Iterable


class ProcFile:
    """One kernel text file, opened once; ``read()`` returns its current content."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._f: io.FileIO | None = io.FileIO(path, "r")

    def read(self) -> str:
        """Seek to the start and read to EOF (raises ValueError once closed)."""
        if self._f is None:
            raise ValueError(f"{self.path} is closed")
        self._f.seek(0)
        return self._f.readall().decode("ascii", "replace")

    def close(self) -> None:
        """Release the descriptor; idempotent."""
        if self._f is not None:
            self._f.close()
            self._f = None


def stat_fields(text: str) -> list[str]:
    """A /proc/PID/stat line's fields after ``(comm)``, which may hold spaces and parentheses:
    field 3 (state) first, so field N of proc(5) is at index N - 3."""
    return text[text.rfind(")") + 2 :].split()


class KeyedLines:
    """Finds the ``KEY<sep>value`` lines wanted out of a /proc file like /proc/vmstat.

    One search per wanted key, in C, instead of a Python loop over every line (sar -B wants a
    dozen of /proc/vmstat's ~180 lines); each search starts a little before where the key was
    the last time, as the lines stay in order and values grow by a few digits at most.  A key
    not found from there is searched from the start, so the hint never changes the answer."""

    def __init__(self, keys: Iterable[str], sep: str) -> None:
        self._wanted = [(key, f"\n{key}{sep}") for key in keys]
        self._hints = [0] * len(self._wanted)

    def values(self, text: str) -> dict[str, str]:
        """key -> the rest of its line, for each wanted key that starts a line of ``text``."""
        text = "\n" + text  # so the first line starts after a newline too
        out = {}
        hints = self._hints
        for i, (key, needle) in enumerate(self._wanted):
            start = max(0, hints[i] - 256)
            at = text.find(needle, start)
            if at < 0 and start:  # moved back further: once more from the top
                at = text.find(needle)
            if at < 0:
                continue  # not in this kernel's file (pgsteal_anon before 5.x): one scan
            hints[i] = at
            begin = at + len(needle)
            end = text.find("\n", begin)
            out[key] = text[begin:] if end < 0 else text[begin:end]
        return out
