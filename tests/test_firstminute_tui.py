"""The dashboard's first minute: without a config it says where it looked and how to add the
primary and the standby, instead of showing this host as if that were the whole picture."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

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
    async def run() -> list[str]:
        app = SgmonApp([], measure_self=False, notice=missing_config_notice())
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause(0.2)
            return [n.message for n in app._notifications]

    shown = asyncio.run(run())
    assert any(m.startswith("No sgmon.toml") for m in shown), shown


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
    docs = (Path(__file__).resolve().parent.parent / "docs" / "dashboard.md").read_text()
    for name in themes.ORDER:
        assert name in help_line and f"`{name}`" in docs
