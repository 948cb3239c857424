"""The archive directory as the recorder holds it: by descriptor, a trust boundary.

``--dir`` is the user's path (symlinks on the way to it are theirs, and followed); everything
inside it is opened relative to its descriptor (``sgmon.safefs``): a host directory that is a
symlink, a file or a FIFO is refused with one note and nothing of that host is written, so no row
ever lands outside ``--dir``.  The directories' identities are kept, so one deleted or replaced
while recording ends the run (``replaced``).  The tables' sink and the findings log share one
``ArchiveDir`` (``share``), so a refused directory is said once, and one ``Flusher`` flushes all
their files.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from sgmon.archive import field_columns, header, hist_bounds, printable, read_meta, safe_name
from sgmon.errors import ArchiveError
from sgmon.model import Kind, Schema
from sgmon.safefs import Dir, Refused
from sgmon.sinks.flush import Flusher


def meta_tables(schema: Schema) -> dict[str, dict]:
    """What meta.json says of a host's tables: each one's columns and fields."""
    return {
        name: {
            "columns": header(fields),
            "fields": [
                {
                    **f.to_dict(),
                    "columns": field_columns(f),
                    **({"bounds": list(hist_bounds(f))} if f.kind is Kind.HISTOGRAM else {}),
                }
                for f in fields
            ],
        }
        for name, fields in schema.items()
    }


def say(message: str) -> None:
    """The sinks' notes when no one else takes them: one ``sgmon:`` line on stderr."""
    print(f"sgmon: {message}", file=sys.stderr, flush=True)


def _host_dir_name(name: str) -> bool:
    """Whether an entry of the archive root counts against its being empty: not hidden, and not
    the root-only ``lost+found`` of a filesystem mounted there (an archive on its own volume)."""
    return not name.startswith(".") and name != "lost+found"


def open_root(root: Path) -> Dir:
    """The archive's directory, made when missing; ArchiveError when it cannot be."""
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ArchiveError(f"cannot create {root}: {e.strerror}; choose another --dir") from None
    try:
        return Dir.at(str(root))
    except NotADirectoryError:
        raise ArchiveError(f"{root} is not a directory; choose another --dir") from None
    except OSError as e:
        raise ArchiveError(f"cannot open {root}: {e.strerror}; choose another --dir") from None


def prepare_dir(root: Path) -> tuple[Dir, dict | None]:
    """Create or check the archive directory; returns it and its existing metadata.

    Raises ArchiveError for a foreign or unwritable directory, or a corrupt meta.json.
    """
    d = open_root(root)
    try:
        meta = read_meta(root, d)
        if meta is None and any(_host_dir_name(n) for n in d.listdir()):
            raise ArchiveError(
                f"{root} is not empty and not an sgmon archive; choose another --dir"
            )
        try:  # under a name nobody could plant: never written through
            probe, fd = d.temp("sgmon-write-test")
            os.close(fd)
            d.unlink(probe)
        except OSError as e:
            raise ArchiveError(
                f"cannot write in {root}: {e.strerror}; choose another --dir"
            ) from None
    except BaseException:
        d.close()
        raise
    return d, meta


class ArchiveDir:
    """The archive's directory and its hosts' directories, by descriptor (module docstring)."""

    def __init__(
        self,
        path: Path,
        root: Dir,
        warn: Callable[[str], None],
        flusher: Flusher | None = None,
    ) -> None:
        self.path = path
        self.root = root
        self.warn = warn
        self.flusher = flusher or Flusher(warn=warn)
        self.flusher.watch(root)
        self.refused_hosts: set[str] = set()
        """The hosts of which nothing is written: their directory is not one sgmon made."""
        self._hosts: dict[str, Dir] = {}  # by directory name
        self._refused: set[str] = set()  # directory names said once
        self._ids: dict[str, tuple[int, int]] = {"": root.identity()}
        self._users = 1

    @classmethod
    def at(cls, path: Path, warn: Callable[[str], None]) -> ArchiveDir:
        """The archive directory ``path``, made when missing (ArchiveError when it cannot)."""
        return cls(path, open_root(path), warn)

    def share(self) -> ArchiveDir:
        """This directory for one more sink: it is closed when the last one closes it."""
        self._users += 1
        return self

    def host(self, host: str, create: bool = True) -> Dir | None:
        """The host's directory (made when ``create``); None when there is none, or when what
        is at its name is not a directory sgmon made (said once)."""
        return self.named(safe_name(host), host, create)

    def named(self, name: str, host: str, create: bool = False) -> Dir | None:
        """``host``'s directory of that name (the one meta.json gives it), as ``host``."""
        d = self._hosts.get(name)
        if d is not None:
            return d
        if name in self._refused:
            self.refused_hosts.add(host)
            return None
        try:
            d = self.root.sub(name, create)
        except Refused as e:
            self._refused.add(name)
            self.refused_hosts.add(host)
            self.warn(
                f"{e}, not a directory sgmon made; left alone, nothing of {printable(host)} "
                "is recorded"
            )
            return None
        if d is not None:
            self._hosts[name] = d
            self._ids[name] = d.identity()
            self.flusher.watch(d)
        return d

    def replaced(self, host: str) -> str | None:
        """The path of the archive's directory, or this host's, when it is no longer the one
        written into (deleted, or another in its place); None while both are."""
        try:
            st = os.stat(self.path)
            same = (st.st_dev, st.st_ino) == self._ids[""]
        except OSError:
            same = False
        if not same:
            return str(self.path)
        name = safe_name(host)
        ident = self._ids.get(name)
        if ident is None:
            return None  # the host's directory is made at its first row
        st2 = self.root.lstat(name)
        if st2 is None or (st2.st_dev, st2.st_ino) != ident:
            return self.root.join(name)
        return None

    def close(self) -> None:
        """Done for one sink; the last one flushes every file and releases the directories."""
        self._users -= 1
        if self._users > 0:
            return
        self.flusher.close()
        for d in self._hosts.values():
            d.close()
        self.root.close()
