"""The paths a DBA walks in the first minute at 80x24: the help read to its end, the command
palette by name, Ctrl+C, the no-config notice beside the findings, one primary after a failover."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.containers import VerticalScroll
from textual.pilot import Pilot
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


def test_every_palette_command_runs_an_action_a_key_is_bound_to() -> None:
    from sgmon.tui.app import SgmonApp
    from sgmon.tui.command_palette import COMMANDS

    bound = {b.action for b in SgmonApp.BINDINGS}  # type: ignore[union-attr]
    assert {action for *_, action in COMMANDS} <= bound
    names = " ".join(name for name, *_ in COMMANDS)
    for word in ("pause", "go to a time", "switch host", "filter", "theme", "SVG", "findings"):
        assert word in names


async def _palette(pilot: Pilot[int], text: str) -> None:
    from textual.command import CommandList, CommandPalette

    await pilot.press("ctrl+p")
    await until(pilot, lambda: isinstance(pilot.app.screen, CommandPalette))
    await pilot.press(*text)
    palette = pilot.app.screen
    await until(pilot, lambda: palette.query_one(CommandList).option_count > 0)
    await pilot.press("enter")
    await until(pilot, lambda: not isinstance(pilot.app.screen, CommandPalette))
    await pilot.pause(0.1)


async def test_the_palette_runs_sgmons_commands_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from textual.widgets import Input

    from sgmon.tui.panels.findings import FindingsPanel

    app, pair = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        feed(app, pair, 5)
        await until(pilot, lambda: drawn(app))
        await _palette(pilot, "pause")
        assert app.paused
        await _palette(pilot, "pause")
        assert not app.paused
        theme = app.theme
        await _palette(pilot, "next theme")
        assert app.theme != theme
        await _palette(pilot, "findings")
        assert isinstance(app.focused, FindingsPanel)
        await _palette(pilot, "findings")
        await _palette(pilot, "filter")
        assert isinstance(app.focused, Input) and app.main.has_class("-filtering")
        await pilot.press("escape")
        await _palette(pilot, "go to a time")
        assert isinstance(app.focused, Input) and app._prompt == "goto"
        await pilot.press(*"-2s", "enter")
        await pilot.pause(0.1)
        assert app.paused and app.cursor == app.axis()[-3]
        first = app._slots[0]
        await _palette(pilot, "switch host")
        await until(pilot, lambda: app._slots[0] != first)
        monkeypatch.chdir(tmp_path)
        await _palette(pilot, "export")
        assert len(list(tmp_path.glob("sgmon-*.svg"))) == 1


async def test_the_no_config_notice_leaves_the_findings_uncovered() -> None:
    """At 80x24 the notice (a toast 40 columns wide, 16 lines tall) covered the findings for its
    30 s; it goes under the panes now, and no toast lies over the findings."""
    from textual.widgets import Static
    from textual.widgets._toast import Toast

    from sgmon.commands.dashboard import missing_config_notice
    from sgmon.tui.app import SgmonApp
    from sgmon.tui.panels.findings import FindingsPanel

    _, pair = make_app()
    app = SgmonApp([], measure_self=False, notice=missing_config_notice())
    async with app.run_test(size=(80, 24)) as pilot:
        feed(app, pair, 60)
        await until(pilot, lambda: drawn(app) and app.query_one(FindingsPanel).count > 0)
        findings = app.query_one(FindingsPanel).region
        notice = app.query_one("#notice", Static)
        assert findings.height >= 5 and notice.display and notice.region.height
        assert "No sgmon.toml" in str(notice.render())
        covering = [w.region for w in app.screen.query(Toast) if w.region.overlaps(findings)]
        assert not notice.region.overlaps(findings) and not covering, covering


@pytest.mark.parametrize("scenario", ["failover", "switchover"])
async def test_one_primary_at_every_moment_of_a_failover_or_switchover(scenario: str) -> None:
    """The header and the pane titles name one primary at a time: after a failover the old
    primary is the former primary, as the analysis' finding calls it (it was `○ primary site_a
    STALE ... ● primary site_b`, both panes titled PRIMARY)."""
    import re

    from sgmon.tui.pane import HostPane
    from sgmon.tui.panels.header import Header

    app, pair = make_app(scenario)
    former_seen = False
    async with app.run_test(size=(200, 50)) as pilot:
        for ticks in (30, 15, 10, 10, 20, 30):
            feed(app, pair, ticks)
            await until(pilot, lambda: drawn(app))
            await pilot.pause(0.05)
            header = app.query_one(Header).text
            primaries = re.findall(r"(?<!former )primary (\w+)", header)
            titles = [p.border_title or "" for p in app.query(HostPane) if p.display]
            assert len(primaries) <= 1, header
            assert sum(str(t).startswith("PRIMARY") for t in titles) <= 1, titles
            state = app.feed.state_at(app.cursor_time or 0)
            said = (
                {f.host for f in state.findings if "(former primary)" in f.title} if state else ()
            )
            for host in said:
                former_seen = True
                assert f"former primary {host}" in header, header
                assert f"FORMER PRIMARY  {host}" in titles, titles
    assert former_seen == (scenario == "failover")


async def test_the_theme_picker_the_palette_opens_is_hardened_too() -> None:
    """The palette's "Theme" entry opens a second palette, the theme picker: PageDown typed ahead
    into it, before its list was laid out, ended the dashboard with ``KeyError: 1`` (500 random
    keys in tmux, once in CI)."""
    from textual.command import CommandList, CommandPalette

    from sgmon.tui.command_palette import SafeCommandPalette

    app, pair = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        feed(app, pair, 3)
        await until(pilot, lambda: drawn(app))
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(pilot.app.screen, CommandPalette))
        await pilot.press(*"Theme")
        first = app.screen
        await until(pilot, lambda: first.query_one(CommandList).option_count > 0)
        await pilot.press("enter", "pagedown", "pageup")
        await until(pilot, lambda: app.screen is not first)
        picker = app.screen
        assert isinstance(picker, SafeCommandPalette), type(picker)
        assert "themes" in picker.query_one("#--input Input").placeholder  # type: ignore[attr-defined]
        await pilot.press("pagedown", "escape")
        await until(pilot, lambda: not isinstance(app.screen, CommandPalette))
