"""Themes are data: built-ins load without Textual, user themes add or override, bad ones skip."""

from __future__ import annotations

import themes


def test_builtin_themes_in_key_order_with_every_sgmon_variable() -> None:
    found = themes.load_themes()
    assert list(found)[:3] == ["sgmon-dark", "sgmon-light", "sgmon-contrast"]
    wanted = set(found["sgmon-dark"]["variables"])
    assert all(k.startswith("sgmon-") for k in wanted)
    for spec in found.values():
        assert set(spec["variables"]) == wanted  # a built-in never falls back silently


def test_user_themes_add_override_and_broken_ones_are_skipped(tmp_path, capsys) -> None:
    (tmp_path / "mine.toml").write_text(
        'name = "ops-green"\nprimary = "#00ff00"\n[variables]\nsgmon-crit = "#ff00ff"\n'
    )
    (tmp_path / "light.toml").write_text('name = "sgmon-light"\nprimary = "#123456"\n')
    (tmp_path / "broken.toml").write_text("name = [unclosed\n")
    found = themes.load_themes(tmp_path)
    assert found["ops-green"]["variables"] == {"sgmon-crit": "#ff00ff"}
    assert found["sgmon-light"]["primary"] == "#123456"
    assert list(found)[-1] == "ops-green"
    assert "broken.toml skipped" in capsys.readouterr().err


async def test_a_partial_user_theme_runs_with_the_dark_defaults(tmp_path, monkeypatch) -> None:
    from sgmon.tui.app import SgmonApp

    folder = tmp_path / "config" / "sgmon" / "themes"
    folder.mkdir(parents=True)
    (folder / "mine.toml").write_text(
        'name = "ops-green"\nprimary = "#00ff00"\n[variables]\nsgmon-crit = "#ff00ff"\n'
    )
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    app = SgmonApp([], measure_self=False)
    async with app.run_test(size=(100, 30)) as pilot:
        for _ in range(3):  # dark -> light -> contrast -> the user's
            await pilot.press("t")
        assert app.theme == "ops-green"
        dark = themes.load_themes()["sgmon-dark"]["variables"]
        assert app.palette.var("crit") == "#ff00ff"
        assert app.palette.var("warn") == dark["sgmon-warn"]


async def test_panels_skip_the_truecolor_filter_only_where_it_changes_nothing(
    tmp_path, monkeypatch
) -> None:
    """Panels leave out Textual's ANSI-to-truecolor line filter for a palette of RGB colours
    only: every line drawn in each built-in theme is as the filter would leave it, and a user
    theme with ANSI colour names and a dim crit style still gets it."""
    from rich.color import ColorType
    from textual.filter import ANSIToTruecolor
    from textual.geometry import Region
    from tuikit import drawn, feed, make_app, until

    from sgmon.tui.panels.base import Panel

    folder = tmp_path / "config" / "sgmon" / "themes"
    folder.mkdir(parents=True)
    (folder / "ansi.toml").write_text(
        'name = "ansi"\nprimary = "#00ff00"\n[variables]\n'
        'sgmon-crit = "red"\nsgmon-warn = "yellow"\nsgmon-muted = "bright_black"\n'
        'sgmon-crit-style = "dim"\n'
    )
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    app, pair = make_app("rto-stall")
    async with app.run_test(size=(160, 48)) as pilot:
        seen = {}
        for _ in range(4):  # dark, light, contrast, then the user's
            feed(app, pair, 40)
            await until(pilot, lambda: drawn(app))
            truecolor = ANSIToTruecolor(app.ansi_theme)
            panels = [p for p in app.query(Panel) if p.display and p.view is not None]
            styles, raw = set(), set()
            for panel in panels:
                raw.update(s.style for line in panel._strips for s in line if s.style)
                width = panel.size.width
                out = panel.render_lines(Region(0, 0, width, panel.size.height))
                for strip in out:
                    segments = list(strip)
                    again = truecolor.apply(segments, panel.background_colors[1])
                    assert again == segments, (app.theme, panel, strip.text)
                    styles.update(s.style for s in segments if s.style is not None)
            seen[app.theme] = (app.palette.truecolor, styles, raw)
            await pilot.press("t")
    rgb = [t for t, (truecolor, _, _) in seen.items() if truecolor]
    assert rgb == ["sgmon-dark", "sgmon-light", "sgmon-contrast"]
    truecolor, styles, raw = seen["ansi"]
    assert not truecolor
    assert ColorType.STANDARD in {s.color.type for s in raw if s.color is not None}
    colours = {s.color.type for s in styles if s.color is not None}
    assert colours and ColorType.STANDARD not in colours and not any(s.dim for s in styles)
