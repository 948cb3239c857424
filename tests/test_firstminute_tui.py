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
