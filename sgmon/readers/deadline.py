"""One reading's total time bound, shared by every importer and the archive's replay reader.

A reader bounds its lines and its decompression; a huge or damaged input may still hold work
for hours (an archive of thousands of damaged tables, a repository that answers each statement
just inside its call timeout).  A reading checks its ``Deadline`` between units of work (a
file, a table, a statement, a frame), keeps what it read, and ends with one line that says
what was read and what was not (``said``): nothing already written is lost.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

READ_SECONDS = 600.0
"""The default bound of one reading: an import, or a replay's reading of an archive (ten
minutes; a day of OSWatcher or a week of a recording is read in well under one)."""


class Deadline:
    """The time one reading may take from its start; ``passed`` once it is over."""

    def __init__(self, seconds: float = READ_SECONDS) -> None:
        self.seconds = seconds
        self._at = time.monotonic() + seconds
        self.told = False
        """Whether the reading's stop was said: a reading says it once, wherever it stopped."""

    def passed(self) -> bool:
        """Whether the reading's time is over."""
        return time.monotonic() >= self._at

    def said(self, read: str, unread: str) -> str:
        """The one line a reading stopped by the deadline ends with (now ``told``)."""
        self.told = True
        return (
            f"stopped after {self.seconds:g} s, the time bound of one reading: {read} read; "
            f"not read: {unread}"
        )


def files_within(deadline: Deadline | None, paths: list[Path], notes: list[str]) -> Iterator[Path]:
    """``paths`` one at a time until ``deadline``; past it, one note (in ``notes``) naming the
    first file not read."""
    for i, path in enumerate(paths):
        if deadline is not None and deadline.passed():
            if not deadline.told:
                notes.append(deadline.said(f"{i} of {len(paths)} file(s)", f"{path} and after"))
            return
        yield path
