"""A /proc file kept open and re-read from offset 0 each tick, and the search of its keyed lines.

Opening a /proc file costs a path walk and a file object per tick; keeping the descriptor and
reading it again from offset 0 is the cheapest way (what sadc does).  One ``pread`` into a
buffer larger than the file returns the kernel's whole text in one system call, where a seek
and a read to EOF took three.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping


class ProcFile:
    """One kernel text file, opened once; ``read()`` returns its current content."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd: int | None = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        self._size = 4096
        """Bytes asked for: grown (and kept) when a read fills it, so the next takes one call."""

    def read(self) -> str:
        """The whole file as it is now (raises ValueError once closed)."""
        return self.raw().decode("ascii", "replace")

    def raw(self) -> bytes:
        """The whole file as bytes, for numbers that need no decoding (``int(b"42")``)."""
        if self._fd is None:
            raise ValueError(f"{self.path} is closed")
        data = os.pread(self._fd, self._size, 0)
        while len(data) >= self._size:  # larger than the buffer: a bigger one, from the start
            self._size *= 4
            data = os.pread(self._fd, self._size, 0)
        return data

    def close(self) -> None:
        """Release the descriptor; idempotent."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def stat_fields(text: str) -> list[str]:
    """A /proc/PID/stat line's fields after ``(comm)``, which may hold spaces and parentheses:
    field 3 (state) first, so field N of proc(5) is at index N - 3."""
    return text[text.rfind(")") + 2 :].split()


def keyed_pattern(keys: Iterable[str], sep: str) -> str:
    """The ``lines`` pattern of the ``KEY<sep>value`` lines that KeyedLines(keys, sep) finds."""
    return "\n(?:" + "|".join(map(re.escape, keys)) + ")" + re.escape(sep) + "[^\n]*"


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


def counter_table(text: str, wanted: Mapping[str, tuple[tuple[str, str], ...]]) -> dict[str, int]:
    """Counters of a file of "Prefix: names" / "Prefix: values" line pairs (/proc/net/snmp,
    /proc/net/netstat): ``wanted`` maps a line prefix (``Tcp:``) to (key, counter name) pairs,
    and the result each key found to its counter's value."""
    lines = text.split("\n")
    out = {}
    for names, values in zip(lines[::2], lines[1::2], strict=False):
        fields = wanted.get(names[: names.find(" ")])
        if fields:
            table = dict(zip(names.split(), values.split(), strict=False))
            for key, name in fields:
                if name in table:
                    out[key] = int(table[name])
    return out


def start_time(pid: int) -> str | None:
    """A process's start time (clock ticks after boot, /proc/PID/stat field 22), or None when
    no such process exists: with the pid, it names one process for the life of the machine."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = stat_fields(fh.read())
    except OSError:
        return None
    return fields[19] if len(fields) > 19 else None
