"""A /proc file kept open and re-read from offset 0 each tick.

Opening a /proc file costs a path walk and a file object per tick; keeping the descriptor and
seeking back is the cheapest way to read it again (what sadc does).  Unbuffered binary I/O so
one ``read()`` returns the file's current content whole.
"""

from __future__ import annotations

import io


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
