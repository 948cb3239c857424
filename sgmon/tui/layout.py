"""How the dashboard fits its terminal: how many host panes, side by side or stacked, where
the findings go, and which hosts the panes show along the commit path."""

from __future__ import annotations

MIN_SIZE = (60, 20)
"""Below this the dashboard shows one line saying so instead of a crushed layout: the compact
form needs a title line per panel of the one pane, the findings and the key line."""
STACK_BELOW = 140
"""Narrower than this, the panes are stacked (side by side their tables would be cut)."""
COMPACT_BELOW = (100, 30)
"""Narrower or shorter than this, one pane: the host of the top finding, or the one `s` chose."""
SIDE_FINDINGS_FROM = 210
"""From this width the findings are a column right of the panes, which get the full height (the
panes keep the 70 columns their widest table needs)."""
FINDINGS_COLUMN = 64
"""Columns of that findings column (``grid-columns`` of ``Screen.-wide`` in sgmon.tcss)."""
PANE_WIDTH = STACK_BELOW // 2
"""Columns a pane needs side by side: its widest table, its border and padding."""


def pane_count(width: int, height: int) -> int:
    """Panes the terminal has room for: one in the compact form, two stacked, else as many
    side by side as keep ``PANE_WIDTH`` each (two at 160 or 220 columns, three from 274)."""
    if width < COMPACT_BELOW[0] or height < COMPACT_BELOW[1]:
        return 1
    if width < STACK_BELOW:
        return 2
    room = width - (FINDINGS_COLUMN if width >= SIDE_FINDINGS_FROM else 0)
    return max(2, room // PANE_WIDTH)


def pane_hosts(order: list[str], panes: int, first: str | None, top: str | None) -> list[str]:
    """The hosts of ``order`` (along the commit path) that ``panes`` panes show, left to right:
    from ``first`` (the host `s` put left) while it is in the order, else in the one-pane view
    from ``top`` (the top finding's host), else from the order's first (the primary: after a
    switchover it is left again); past the order's end they wrap around."""
    n = min(panes, len(order))
    one_pane = n == 1 and top in order
    start = first if first in order else top if one_pane else None
    k = order.index(start) if start is not None else 0
    return [order[(k + i) % len(order)] for i in range(n)]
