"""The paths a DBA walks in the first minute at 80x24: the help read to its end, the command
palette by name, Ctrl+C, the no-config notice beside the findings, one primary after a failover."""

from __future__ import annotations

from textual.containers import VerticalScroll
from tuikit import drawn, feed, make_app, until

from sgmon.tui.help import HelpScreen


async def test_help_scrolls_at_80x24_and_only_its_own_keys_close_it() -> None:
    app, pair = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        feed(app, pair, 5)
        await until(pilot, lambda: drawn(app))
        cursor = app.cursor
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        box = app.screen.query_one("#help", VerticalScroll)
        await pilot.pause(0.1)
        assert box.max_scroll_y > 0  # taller than the terminal: it must scroll
        for key in ("down", "pagedown", "end"):
            before = box.scroll_y
            await pilot.press(key)
            await pilot.pause(0.05)
            assert box.scroll_y > before, key
            assert isinstance(app.screen, HelpScreen), key
        assert box.scroll_y == box.max_scroll_y  # the last lines are reachable
        for key in ("up", "pageup", "home"):
            before = box.scroll_y
            await pilot.press(key)
            await pilot.pause(0.05)
            assert box.scroll_y < before, key
        assert box.scroll_y == 0
        await pilot.press("x", "space", "left", "enter")
        assert isinstance(app.screen, HelpScreen)
        assert app.cursor == cursor and not app.paused  # the dashboard's keys did not act
        for key in ("question_mark", "escape", "q"):
            await pilot.press(key)
            await pilot.pause(0.05)
            assert not isinstance(app.screen, HelpScreen), key
            await pilot.press("question_mark")
            assert isinstance(app.screen, HelpScreen)


async def test_ctrl_c_quits_the_dashboard() -> None:
    app, pair = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        feed(app, pair, 3)
        await until(pilot, lambda: drawn(app))
        await pilot.press("slash")  # also from the filter line
        await pilot.press("ctrl+c")
        await pilot.pause(0.1)
        assert not app.is_running
