"""One way to make a label fit its column: an ellipsis, never a silent cut.

Names that differ at their end (nvme0n1 and nvme1n1, dest_2 and dest_3) are cut in the middle,
so the part that tells them apart stays; names that differ at their start (wait events) are cut
at the end.
"""

from __future__ import annotations

from typing import Literal

ELLIPSIS = "…"


def fit(label: str, width: int, cut: Literal["end", "middle"] = "end") -> str:
    """``label`` in at most ``width`` cells, with an ellipsis where something was taken out."""
    if len(label) <= width:
        return label
    if width <= 1:
        return ELLIPSIS[:width]
    keep = width - 1
    if cut == "end":
        return label[:keep] + ELLIPSIS
    head = keep // 2
    return label[:head] + ELLIPSIS + label[len(label) - (keep - head) :]


def fit_words(text: str, width: int) -> str:
    """Prose in at most ``width`` cells, cut after a whole word with an ellipsis (findings'
    evidence: a reader must never see half a word and take it for the value)."""
    if len(text) <= width:
        return text
    cut = text[: max(0, width - 1)]
    space = cut.rfind(" ")
    return (cut[:space] if space > width // 2 else cut).rstrip(" ·,;") + ELLIPSIS
