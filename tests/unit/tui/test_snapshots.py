"""SVG snapshots of the dashboard on deterministic frames (pytest-textual-snapshot).

Update after looking at the report: ``pytest tests/unit/tui/test_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

import time

from textual.pilot import Pilot
from tuikit import TICKS, feed, make_app


async def settled(pilot: Pilot, limit: float = 5.0) -> None:
    """Pause until two screens 0.2 s apart are the same, at most ``limit`` seconds: on a loaded
    machine the panes were still being laid out after a fixed 0.3 s (CI saw the budget bar one
    cell longer and a panel folded differently than in the snapshot)."""
    last = None
    end = time.monotonic() + limit
    while time.monotonic() < end:
        await pilot.pause(0.2)
        screen = pilot.app.export_screenshot()
        if screen == last:
            return
        last = screen


def fed(ticks: int = TICKS, keys: tuple[str, ...] = (), theme: str = "sgmon-dark"):
    """A run_before that feeds the frames, then presses keys."""
    app, pair = make_app()

    async def run_before(pilot: Pilot) -> None:
        app.theme = theme  # set, not pressed: the key's toast would be in the picture
        feed(app, pair, ticks)
        await settled(pilot)
        app.redraw()  # as the next live tick would: a panel drawn before its final layout
        await settled(pilot)  # (one column wider, in CI) is drawn again at its width now
        if keys:
            await pilot.press(*keys)
            await settled(pilot)

    return app, run_before


def test_side_by_side_during_rto_stall(snap_compare) -> None:
    app, run_before = fed()
    assert snap_compare(app, terminal_size=(160, 48), run_before=run_before)


def test_finding_selected_and_cursor_back(snap_compare) -> None:
    app, run_before = fed(keys=("left", "left", "f", "down"))
    assert snap_compare(app, terminal_size=(160, 48), run_before=run_before)


def test_compact_80x24_high_contrast(snap_compare) -> None:
    app, run_before = fed(theme="sgmon-contrast")
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_help_screen(snap_compare) -> None:
    app, run_before = fed(ticks=5, keys=("question_mark",))
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def test_wide_220x60_findings_in_a_column(snap_compare) -> None:
    app, run_before = fed()
    assert snap_compare(app, terminal_size=(220, 60), run_before=run_before)


def test_zoom_keeps_the_header(snap_compare) -> None:
    app, run_before = fed(keys=("tab", "tab", "z"))
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)
