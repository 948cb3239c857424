"""The dashboard's first minute: without a config it says where it looked and how to add the
primary and the standby, instead of showing this host as if that were the whole picture."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from paths import REPO
from textual.widgets import Static

from sgmon.commands.dashboard import missing_config_notice
from sgmon.tui.app import SgmonApp


def test_the_notice_names_where_sgmon_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    text = missing_config_notice()
    assert "sgmon.toml" in text and str(tmp_path / "xdg" / "sgmon" / "sgmon.toml") in text
    assert "[[host]]" in text and "primary" in text and "standby" in text
    assert "sgmon config --check" in text


def test_the_dashboard_shows_the_notice() -> None:
    async def run() -> str:
        app = SgmonApp([], measure_self=False, notice=missing_config_notice())
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause(0.2)
            notice = app.query_one("#notice", Static)
            assert notice.display and notice.region.height
            return str(notice.render())

    shown = asyncio.run(run())
    assert "No sgmon.toml" in shown, shown


def _luminance(hex_colour: str) -> float:
    def channel(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def test_high_contrast_borders_are_visible() -> None:
    """The panes' borders against the background: at least WCAG's 3:1 for graphics (they were
    #202020 on black, 1.3:1)."""
    import themes

    spec = themes.load_themes()["sgmon-contrast"]
    lo, hi = sorted((_luminance(spec["variables"]["sgmon-border"]), _luminance(spec["background"])))
    assert (hi + 0.05) / (lo + 0.05) >= 3.0


def test_one_set_of_theme_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`t`, `?`, the command palette and the docs name the same themes."""
    import themes

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))  # no user themes
    from sgmon.tui.help import KEYS

    async def run() -> tuple[list[str], list[str]]:
        app = SgmonApp([], measure_self=False)
        async with app.run_test(size=(120, 40)) as pilot:
            seen = []
            for _ in themes.ORDER:
                seen.append(app.theme)
                await pilot.press("t")
            return seen, sorted(app.available_themes)

    cycled, offered = asyncio.run(run())
    assert cycled == list(themes.ORDER)
    assert offered == sorted(themes.ORDER)  # no textual-dark, nord ... in ctrl+p
    help_line = next(text for key, text in KEYS if key == "t")
    docs = (REPO / "docs" / "dashboard.md").read_text()
    for name in themes.ORDER:
        assert name in help_line and f"`{name}`" in docs


def test_plus_then_minus_quickly_does_not_flash_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    """After `+` to 30 s and `-` straight back to 1 s, a source still sleeps out the frame it
    scheduled at 30 s: until that is overdue by the old measure, the host is not stale."""
    from types import SimpleNamespace

    from sgmon.config import Config
    from sgmon.tui import timeline as tl

    clock = [1000.0]
    monkeypatch.setattr(tl.time, "monotonic", lambda: clock[0])
    line = tl.Timeline(SimpleNamespace(sources=[], history=None), None, Config())  # type: ignore[arg-type]
    assert line.stale_after() == 3.0
    line.interval_changed(30.0)  # now back at the config's 1 s
    clock[0] += 20.0
    assert line.stale_after() == tl.SILENT_INTERVALS * 30.0  # the old interval's measure
    clock[0] += 75.0
    assert line.stale_after() == 3.0


def test_the_header_drops_whole_parts_and_counts_the_hosts_left_out() -> None:
    """At 80 columns four hosts do not fit: whole names, then `+N hosts`, never a cut word; the
    interval stays."""
    import themes
    from sgmon.tui.palette import Palette
    from sgmon.tui.panels.header import HeaderView, HostState, render_header

    palette = Palette.from_variables("sgmon-dark", themes.load_themes()["sgmon-dark"]["variables"])
    hosts = tuple(
        HostState(name, role, 1.0, False)
        for name, role in (("primary", "primary"), ("standby_b", "standby"),
                           ("standby_a", "standby"), ("standby_c", "standby"))
    )  # fmt: skip
    view = HeaderView(palette, "PROD", hosts, 1.0, "live", 1.0, protection="MAXIMUM AVAILABILITY",
                      self_cpu=1.5, skipped=3)  # fmt: skip
    for width in (60, 80, 100, 120, 160):
        text = render_header(view, width).plain
        assert len(text) <= width, (width, text)
        words = set(text.split())
        whole = set(render_header(view, 400).plain.split())
        assert words <= whole | {"+1", "+2", "+3", "+4", "hosts"}
        assert "every 1s" in text and "PROD" in text
    assert "+2 hosts" in render_header(view, 80).plain


def test_the_footer_shows_help_first_at_80x24() -> None:
    """At 80 columns the footer is cut at its end: `? help` comes first so it always shows."""
    import html
    import re

    async def run() -> str:
        app = SgmonApp([], measure_self=False)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause(0.2)
            return app.export_screenshot()

    rows = html.unescape("".join(re.findall(r">([^<]*)</text>", asyncio.run(run()))))
    footer = rows.replace("\xa0", " ").rstrip("\n").split("\n")[-1]
    assert footer.split()[:2] == ["?", "help"], footer


def test_enter_shows_the_whole_evidence_at_80x24() -> None:
    """The findings panel has 3 rows at 80x24, which the title fills: Enter gives the finding
    the screen (as `z` does), so its evidence is read there, and Down scrolls it to its end
    (the runbook) when even the screen is too short; Esc goes back."""
    import html
    import re

    from sgmon.sim import SimPair

    def screen(app: SgmonApp) -> str:
        text = "".join(re.findall(r">([^<]*)</text>", app.export_screenshot()))
        return html.unescape(text).replace("\xa0", " ")

    async def run() -> tuple[str, str, bool]:
        app = SgmonApp([], measure_self=False)
        pair = SimPair("rto-stall", seed=1, start=1763712000.0, onset=40.0)
        async with app.run_test(size=(80, 24)) as pilot:
            for _ in range(100):
                for frame in pair.step():
                    app.ingest(frame, pair.schema(frame.host))
            await pilot.pause(0.5)
            await pilot.press("f", "enter")
            await pilot.pause(0.3)
            shown = screen(app)
            for _ in range(4):  # to its end, as a reader does on a short screen
                await pilot.press("down")
            await pilot.pause(0.3)
            shown += screen(app)
            await pilot.press("escape")
            await pilot.pause(0.3)
            return shown, screen(app), app.zoomed is None

    expanded, back, unzoomed = asyncio.run(run())
    assert "segments retransmitted" in " ".join(expanded.split())
    assert "lines up with" in " ".join(expanded.split())
    assert "runbook: docs/findings.md#rto_stall" in expanded
    assert "segments retransmitted" not in " ".join(back.split()) and unzoomed
