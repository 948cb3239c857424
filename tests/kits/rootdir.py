"""What the unit and the system tests of rootdir share."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from sgmon.collector import Collector
from sgmon.model import Rows


def _replace_with(root: Path, other: Path) -> None:
    """Rewrite every file of ``root`` in place with ``other``'s content (same inode, so a
    descriptor the collector keeps open reads the new content, as with /proc)."""
    for f in other.rglob("*"):
        if f.is_file() and f.name != "README.txt":
            (root / f.relative_to(other)).write_text(f.read_text())


def _interval(
    cls: type[Collector],
    options: Mapping[str, Any],
    root: Path,
    then: Callable[[Path], None],
    dt: float,
) -> Rows:
    """Open a collector under ``root``, sample, apply ``then`` to the tree, sample again, and
    derive the interval of ``dt`` seconds."""
    c = cls({**options, "root": str(root)})
    c.open()
    try:
        first = c.sample()
        then(root)
        second = c.sample()
    finally:
        c.close()
    return c.derive(first, second, dt)
