"""One compared item of ``sgmon check --symmetry``: both sides' values, the verdict, the seed and
the rule applied; and the words every item's verdict and sizes share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Line:
    """One compared item: both sides' values, the verdict, the seed and the rule applied."""

    item: str
    primary: str
    standby: str
    verdict: str  # ok | differs | missing | unknown
    seed: str
    rule: str = ""


def missing_or(p: Sequence[object], s: Sequence[object], good: bool) -> str:
    """``missing`` when a side has none of it, else ok / differs."""
    return "missing" if not p or not s else ok(good)


def ok(good: bool) -> str:
    """The verdict of a rule kept or broken."""
    return "ok" if good else "differs"


def size_text(n: float | None) -> str:
    """A size in bytes as the items show it (``4 GiB``, ``512 B``; ``-`` when unknown)."""
    if n is None:
        return "-"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} B"
