"""The ``w`` key: under the primary's commit budget, what a change would buy, worked out from
the frames so far off the drawing thread; ``w`` again hides it."""

from __future__ import annotations

import pytest
from tuikit import drawn, feed, make_app, until

from sgmon.tui.panels.budget import BudgetPanel


def _budget_text(app) -> str:
    return " ".join(str(line) for p in app.query(BudgetPanel) if p.display for line in p.lines)


async def test_w_shows_what_a_change_would_buy_and_w_hides_it() -> None:
    app, pair = make_app("rto-stall")
    async with app.run_test(size=(160, 60)) as pilot:
        feed(app, pair, 90)  # the onset and a minute of 200 ms stalls
        await until(pilot, lambda: drawn(app))
        assert "what a change would buy" not in _budget_text(app)
        await pilot.press("w")
        await until(pilot, lambda: "rto_min 10 ms: avg" in _budget_text(app), timeout=60)
        text = _budget_text(app)
        assert "what a change would buy on primary" in text and "ASYNC: avg" in text, text
        await pilot.press("w")
        await until(pilot, lambda: "what a change would buy" not in _budget_text(app))
    pair.close()


@pytest.mark.parametrize(
    "size", [(80, 24), (100, 30), (120, 40)], ids=lambda s: "x".join(map(str, s))
)
async def test_at_small_sizes_w_gives_the_budget_the_room_to_show_it(size: tuple[int, int]) -> None:
    """At 80x24 to 120x40 the budget gets a few lines, if any, after the panels a finding
    cites: ``w`` gives it its lines first, and the answer comes before the bar with the change
    the finding advises (``rto_min``) first, so it is in sight, not folded away (the panel
    draws only the lines it is given, the rest a ``z`` away: at 100x30 the bar alone took the
    four it was given)."""
    app, pair = make_app("rto-stall")
    async with app.run_test(size=size) as pilot:
        feed(app, pair, 90)
        await until(pilot, lambda: drawn(app))
        await pilot.press("w")
        await until(pilot, lambda: "Fast Sync (SYNC NOAFFIRM): avg" in _budget_text(app), 60)
        assert "rto_min 10 ms: avg" in _budget_text(app), _budget_text(app)  # the one advised
        await pilot.press("w")
        await until(pilot, lambda: "what a change would buy" not in _budget_text(app))
    pair.close()
