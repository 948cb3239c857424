"""The dashboard driven by keys through Textual's Pilot: pause, cursor, theme, filter, layouts."""

from __future__ import annotations

from textual import events
from textual.widgets import Input, Static
from tuikit import TICKS, drawn, feed, make_app, until

from sgmon.tui.app import SgmonApp
from sgmon.tui.pane import HostPane
from sgmon.tui.panels.base import Panel
from sgmon.tui.panels.disks import DisksPanel
from sgmon.tui.panels.findings import FindingsPanel
from sgmon.tui.panels.header import Header, clock
from sgmon.tui.strip import HostStrip
from sgmon.units import fmt_num


def pane_times(app: SgmonApp) -> list[set[float]]:
    """The frame time every panel of each pane shows."""
    return [
        {p.view.frame.time for p in pane.query(Panel) if p.view and p.view.frame}
        for pane in app.query(HostPane)
    ]


def header(app: SgmonApp) -> str:
    return app.query_one(Header).text


async def test_pause_holds_the_view_while_frames_keep_coming() -> None:
    app, pair = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        feed(app, pair, 30)
        await until(pilot, lambda: drawn(app))
        newest = app.cursor_time
        await pilot.press("p")
        assert app.paused and "PAUSED" in header(app)
        feed(app, pair, 5)
        await pilot.pause(0.3)  # time enough for a wrong redraw to happen
        assert app.cursor_time == newest
        assert pane_times(app) == [{newest}, {newest}]
        await pilot.press("space")
        await pilot.pause(0.2)
        assert not app.paused and app.cursor is None
        assert app.cursor_time == newest + 5 and "LIVE" in header(app)


async def test_cursor_moves_both_panes_through_history() -> None:
    app, pair = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        feed(app, pair, 50)
        await until(pilot, lambda: drawn(app))
        axis = app.axis()
        await pilot.press("left", "left", "left_square_bracket")
        assert app.cursor == axis[-4]
        assert pane_times(app) == [{axis[-4]}, {axis[-4]}]
        assert "PAUSED" in header(app) and "-3s" in header(app)
        await pilot.press("right_square_bracket")
        assert pane_times(app) == [{axis[-3]}, {axis[-3]}]
        await pilot.press("home")
        assert pane_times(app) == [{axis[0]}, {axis[0]}]
        subtitles = {pane.border_subtitle for pane in app.query(HostPane)}
        assert subtitles == {f"at {clock(axis[0])}"}
        await pilot.press("end")
        assert app.cursor is None and pane_times(app) == [{axis[-1]}, {axis[-1]}]


async def test_findings_at_the_cursor_and_their_series_marked_in_the_panes() -> None:
    app, pair = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        feed(app, pair, TICKS)
        await until(pilot, lambda: drawn(app))
        panel = app.query_one(FindingsPanel)
        await pilot.press("f")
        assert app.focused is panel and app.finding is not None
        titles = panel.texts
        assert any("rto_min" in t for t in titles)  # the rto-stall finding names the fix
        state = app.feed.state_at(app.cursor_time)
        chosen = next(f for f in state.findings if f.key == app.finding)
        marked = {p.view.highlight for p in app.query(Panel) if p.view and p.view.host == "primary"}
        wanted = {s[1:] for s in chosen.series if s[0] == "primary"}
        assert marked == {frozenset(wanted)}
        await pilot.press("home")  # long before the onset: nothing to find
        assert not any(f.end is None for f in app.feed.state_at(app.cursor_time).findings)


async def test_keys_queued_together_go_where_the_first_one_sent_the_focus() -> None:
    """A user types ahead of the screen (a slow link, a busy host): `f` then `z` must zoom the
    findings, and `/` then letters must type into the filter, not run as commands (those that
    open the filter or the findings included)."""
    app, pair = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        feed(app, pair, TICKS)
        await until(pilot, lambda: drawn(app))
        for key in ("f", "z"):
            app.post_message(events.Key(key, key))
        await pilot.pause(0.2)
        assert isinstance(app.zoomed, FindingsPanel)
        await pilot.press("escape", "escape")
        hosts = [str(pane.border_title) for pane in app.query(HostPane)]
        typed = [("slash", "/"), ("s", "s"), ("f", "f"), ("g", "g"), ("slash", "/"), ("b", "b")]
        for key, char in typed:
            app.post_message(events.Key(key, char))
        await pilot.pause(0.2)
        assert app.query_one("#filter", Input).value == "sfg/b"  # the line's keys are text
        assert [str(pane.border_title) for pane in app.query(HostPane)] == hosts  # no `s` swap


async def test_theme_key_cycles_and_recolours_the_panels() -> None:
    app, pair = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        feed(app, pair, 10)
        await until(pilot, lambda: drawn(app))
        seen = [app.theme]
        for _ in range(3):
            await pilot.press("t")
            seen.append(app.theme)
        assert seen == ["sgmon-dark", "sgmon-light", "sgmon-contrast", "sgmon-dark"]
        await pilot.press("t")
        await pilot.pause(0.1)
        assert {p.view.palette.name for p in app.query(Panel)} == {"sgmon-light"}


async def test_filter_limits_devices_and_escape_clears_it() -> None:
    app, pair = make_app()
    async with app.run_test(size=(160, 60)) as pilot:  # room for every device's row
        feed(app, pair, 10)
        await until(pilot, lambda: drawn(app))
        disks = app.query(DisksPanel).first()

        def listed() -> list[str]:
            return [ln.split()[0].strip("*") for ln in disks.lines[2:-1]]

        assert sorted(listed()) == ["sda", "sdb", "sdc"]
        await pilot.press("slash", "s", "d", "b", "enter")
        await pilot.pause(0.1)
        assert listed() == ["sdb"] and "(filtered 'sdb')" in disks.lines[0]
        await pilot.press("escape")  # the filter line is gone: Esc clears the applied filter
        await pilot.pause(0.1)
        assert len(listed()) == 3 and "filtered" not in disks.lines[0]
        await pilot.press("slash", "x", "enter")
        await pilot.pause(0.1)
        assert "nothing matches 'x'" in disks.lines[1]


async def test_layouts_by_terminal_size() -> None:
    app, pair = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        feed(app, pair, 10)
        await until(pilot, lambda: drawn(app))
        panes = list(app.query(HostPane))
        assert panes[0].region.y == panes[1].region.y  # side by side
        assert strip(app) == []  # every host has a pane
        await pilot.resize_terminal(120, 40)
        await pilot.pause(0.1)
        assert app.screen.has_class("-stacked") and panes[1].region.y > panes[0].region.y
        await pilot.resize_terminal(80, 24)
        await pilot.pause(0.1)
        assert app.screen.has_class("-compact") and not panes[1].display
        assert [t.split()[:2] for t in strip(app)] == [["standby", "SYNC"]]
        before = panes[0].border_title
        await pilot.press("s")  # the host switch of the one-pane view
        assert panes[0].border_title != before and "STANDBY" in panes[0].border_title
        await pilot.resize_terminal(50, 12)
        await pilot.pause(0.1)
        message = str(app.query_one("#toosmall", Static).render())
        assert message == "sgmon needs 60x20, this terminal is 50x12"


async def test_nothing_is_drawn_once_textual_shuts_down(monkeypatch) -> None:
    """Textual stops running before it takes the widgets down, and the 1 s timer can fire in
    between (a CI run failed so: "No nodes match 'FindingsPanel'" at exit): once the app is no
    longer running, a redraw that falls due leaves the screen as it was."""
    app, pair = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        feed(app, pair, 3)
        await until(pilot, lambda: drawn(app))
        await app.main.query_one(FindingsPanel).remove()
        await pilot.pause(0.1)
        before = app.export_screenshot()
        with monkeypatch.context() as m:
            m.setattr(type(app), "is_running", property(lambda self: False))
            feed(app, pair, 2)  # frames still arrive while Textual takes the screen down
            app.redraw()
            after = app.export_screenshot()
        assert after == before


async def test_zoom_help_and_export(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    app, pair = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        feed(app, pair, 10)
        await until(pilot, lambda: drawn(app))
        await pilot.press("tab", "z")
        shown = [p for p in app.query(Panel) if p.display and p.region.height]
        assert shown == [app.focused] and app.query_one(Header).region.height == 1
        await pilot.press("z")
        assert len([p for p in app.query(Panel) if p.display and p.region.height]) > 2
        await pilot.press("question_mark")
        assert type(app.screen).__name__ == "HelpScreen"
        feed(app, pair, 3)  # frames keep arriving under the help screen
        await pilot.pause(0.2)
        await pilot.press("escape")
        assert pane_times(app) == [{app.axis()[-1]}, {app.axis()[-1]}]
        await pilot.press("e")
        assert len(list(tmp_path.glob("sgmon-*.svg"))) == 1


async def test_zoom_takes_the_pane_at_once_not_at_the_next_redraw() -> None:
    """A redraw renders the panels ahead and shows them tens of ms later; the zoom must not
    wait for that: the other panels go (and come back) in the key's own turn, or the screen
    shows them, or a blank pane, for a frame (CI caught the blank in tmux)."""
    app, pair = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        feed(app, pair, 10)
        await until(pilot, lambda: drawn(app))
        pane = app.query_one("#pane-0", HostPane)
        feed(app, pair, 1)  # a frame's redraw in flight
        app.action_zoom()  # nothing focused: the pane's first panel
        zoomed = app.zoomed
        assert isinstance(zoomed, Panel)
        assert [p for p in pane.query(Panel) if p.display] == [zoomed]
        await pilot.pause(0.3)
        assert [p for p in pane.query(Panel) if p.display] == [zoomed] and zoomed.lines[0]
        app.action_zoom()
        assert len([p for p in pane.query(Panel) if p.display]) > 2


async def test_a_quiet_host_shows_stale_with_its_last_frame_time() -> None:
    app, pair = make_app()
    app.timeline.stale_after = lambda: 0.3  # seconds without a frame before a host is stale
    async with app.run_test(size=(160, 48)) as pilot:
        feed(app, pair, 10)
        await until(pilot, lambda: drawn(app))
        last = app.monitor.history.latest("standby").time
        for _ in range(8):  # the primary goes on, the standby has gone quiet
            primary, _ = pair.step()
            app.ingest(primary)
            await pilot.pause(0.2)  # (the liveness check runs once a second)
        stale = [pane for pane in app.query(HostPane) if pane.has_class("-stale")]
        assert [pane.border_title.split()[0] for pane in stale] == ["STANDBY"]
        assert stale[0].border_subtitle == f"STALE since {clock(last)}"
        assert f"standby STALE since {clock(last)}" in header(app)


async def test_errors_printed_by_sources_become_notifications() -> None:
    import sys

    app, _ = make_app()
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        print("sgmon: source standby stopped: ssh: connection refused", file=sys.stderr)
        await pilot.pause(0.2)
        assert "connection\xa0refused" in app.export_screenshot().replace("&#160;", "\xa0")


async def test_g_goes_to_a_typed_time_in_both_panes() -> None:
    """``g`` then a clock time as the panes show it (or an offset) puts the one cursor there."""
    app, pair = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        feed(app, pair, 50)
        await until(pilot, lambda: drawn(app))
        axis = app.axis()
        await pilot.press("g", *clock(axis[10]), "enter")
        assert app.paused and app.cursor == axis[10]
        assert pane_times(app) == [{axis[10]}, {axis[10]}]
        assert "PAUSED" in header(app)
        await pilot.press("g", "minus", "5", "s", "enter")  # an offset from the cursor
        assert app.cursor == axis[5]
        await pilot.press("g", "x", "enter")  # nonsense: the cursor stays, the filter too
        assert app.cursor == axis[5] and app.filter == ""
        await pilot.press("g", "escape")  # Esc on the go-to line keeps an applied filter
        assert app.cursor == axis[5]


async def test_a_switchover_swaps_the_panes_and_says_the_config_disagrees() -> None:
    """The roles come from V$DATABASE: after a switchover the new primary moves left without a
    restart, and each pane says its database's role differs from its configured one."""
    app, pair = make_app("healthy")
    async with app.run_test(size=(160, 48)) as pilot:
        feed(app, pair, 5)
        await until(pilot, lambda: drawn(app))
        left, right = app.query(HostPane)
        assert left.border_title.startswith("PRIMARY  primary")
        pair.dbs["primary"].set_database(database_role="PHYSICAL STANDBY")
        pair.dbs["standby"].set_database(database_role="PRIMARY")
        feed(app, pair, 2)
        await until(
            pilot,
            lambda: str(app.query(HostPane).first().border_title).startswith("PRIMARY  standby"),
        )
        left, right = app.query(HostPane)
        assert "database says primary, config standby" in str(left.border_title)
        assert str(right.border_title).startswith("STANDBY  primary")
        assert "database says standby, config primary" in str(right.border_title)


async def test_a_live_dashboard_feeds_the_status_line(tmp_path, monkeypatch) -> None:
    """`sgmon status` reads a running dashboard (or demo) as it reads a recorder, and finds
    nothing once it has quit."""
    from sgmon.hosts.sim import SimSource
    from sgmon.status import read_states

    monkeypatch.setenv("SGMON_RUNTIME_DIR", str(tmp_path))
    app = SgmonApp([SimSource("healthy", speed=20.0)], measure_self=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: len(read_states(tmp_path)) == 2)
        assert read_states(tmp_path)["primary"]["items"][0][0] == "lfs"
    assert read_states(tmp_path) == {}


async def test_frames_faster_than_drawing_are_merged_and_said_in_the_header() -> None:
    """Frames that arrive while a redraw is due are drawn once, the newest; the header says how
    many instants went undrawn in the last minute, and nothing queues up."""
    app, pair = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        feed(app, pair, 10)
        await until(pilot, lambda: drawn(app))
        assert "skipped" not in header(app)
        feed(app, pair, 5)  # five instants before the app gets to draw any of them
        await until(pilot, lambda: drawn(app))
        assert "drawing skipped 4/min" in header(app)
        assert pane_times(app) == [{app.cursor_time}, {app.cursor_time}]


def panes(app: SgmonApp) -> list[str]:
    """The titles of the panes that show a host, left to right."""
    return [str(p.border_title) for p in app.query(HostPane) if not p.has_class("-empty")]


def strip(app: SgmonApp) -> list[str]:
    """The strip's lines (none while it is hidden)."""
    widget = app.query_one(HostStrip)
    return [t.plain for t in widget.lines] if widget.display else []


def lag(app: SgmonApp, host: str) -> str:
    """``lag T/A s`` as the host's frame at the cursor has them."""
    frame = app.monitor.history.at(host, app.cursor_time)
    t, a = (frame.value("oracle_dg", "db", f) for f in ("transport_lag", "apply_lag"))
    return f"lag {fmt_num(t)}/{fmt_num(a)} s"


async def test_panes_follow_the_commit_path_and_the_strip_lists_the_others() -> None:
    """Seed 003's four hosts, seen in the reverse order: the panes still show the primary, then
    its SYNC standby; the ASYNC standby and the cascaded one are in the strip with their place,
    lag and destination; `s` brings the next host into the panes and `S` goes back."""
    app, pair = make_app("cascade-iops-cap")
    async with app.run_test(size=(160, 48)) as pilot:
        for _ in range(TICKS):
            for frame in reversed(pair.step()):
                app.ingest(frame, pair.schema(frame.host))
        await until(pilot, lambda: drawn(app) and len(strip(app)) == 2)
        assert app.timeline.hosts()[0].name == "standby_c"  # not the order of the panes
        assert [t.split()[:2] for t in panes(app)] == [
            ["PRIMARY", "primary"],
            ["STANDBY", "standby_b"],
        ]
        behind = next(f for f in app.feed.state_at(app.cursor_time).findings
                      if f.host == "standby_c" and f.active)  # fmt: skip
        a, c = strip(app)
        assert a.startswith(f"standby_a  ASYNC lag risk · {lag(app, 'standby_a')} · dest_3 VALID")
        assert c.startswith(
            f"standby_c  cascaded from standby_b (dest_2 ASYNC) · {lag(app, 'standby_c')} · "
        )
        assert f" · {behind.severity.upper()} {behind.title[:20]}" in c
        app.finding = behind.key  # a finding picked about a host in the strip marks its entry
        marked = app.palette.highlight
        await until(
            pilot, lambda: marked in [s.style for s in app.query_one(HostStrip).lines[1].spans]
        )

        await pilot.press("s")
        await until(pilot, lambda: drawn(app) and "standby_a" in panes(app)[-1])
        assert [t.split()[1] for t in panes(app)] == ["standby_b", "standby_a"]
        assert [t.split()[0] for t in strip(app)] == ["primary", "standby_c"]
        await pilot.press("s")
        await until(pilot, lambda: drawn(app) and "standby_c" in panes(app)[-1])
        assert [t.split()[0] for t in strip(app)] == ["primary", "standby_b"]
        assert strip(app)[1].startswith(f"standby_b  SYNC · {lag(app, 'standby_b')} · dest_2 ")
        await pilot.press("S", "S")
        await until(pilot, lambda: drawn(app) and "standby_b" in panes(app)[-1])
        assert [t.split()[1] for t in panes(app)] == ["primary", "standby_b"]
        await pilot.resize_terminal(300, 60)  # room for a third pane: the next host takes it
        await until(pilot, lambda: drawn(app) and len(panes(app)) == 3)
        assert [t.split()[1] for t in panes(app)] == ["primary", "standby_b", "standby_a"]
        assert [t.split()[0] for t in strip(app)] == ["standby_c"]
        await pilot.resize_terminal(160, 48)
        await until(pilot, lambda: len(panes(app)) == 2 and len(strip(app)) == 2)


async def test_one_pane_and_the_strip_at_80x24() -> None:
    """The compact form shows the host of the top finding; every other host is one line of the
    strip, between the pane and the findings, none of it cut off."""
    app, pair = make_app("cascade-iops-cap")
    async with app.run_test(size=(80, 24)) as pilot:
        feed(app, pair, TICKS)
        path = ["primary", "standby_b", "standby_a", "standby_c"]

        def listed() -> list[str]:  # hosts in strip order: short entries share a line
            return [e.split()[0] for t in strip(app) for e in t.split(" │ ")]

        await until(pilot, lambda: drawn(app) and len(listed()) == 3)
        top = app.feed.state_at(app.cursor_time).findings[0].host
        (pane,) = panes(app)
        assert pane.split()[1] == top
        assert listed() == [n for n in path if n != top]
        widget = app.query_one(HostStrip)
        shown = app.query(HostPane).first()
        findings = app.query_one(FindingsPanel)
        assert shown.region.bottom == widget.region.y
        assert widget.region.height == len(strip(app)) <= 3
        assert widget.region.bottom == findings.region.y and findings.region.bottom < 24
        assert all(len(t) <= widget.content_region.width for t in strip(app))
        assert shown.region.height >= 10  # the pane keeps room for its evidence
        await pilot.press("s")
        await until(pilot, lambda: drawn(app) and top in " ".join(strip(app)))
        assert panes(app)[0].split()[1] == path[(path.index(top) + 1) % len(path)]


async def test_the_layout_containers_are_not_composited_but_what_they_hold_is() -> None:
    """#hosts and #body only lay out the panes and the strip: hidden, the compositor renders none
    of their lines on a frame (their background is the screen's), and the panes, their panels and
    the strip are composited still (seed 003 at 160x48: two panes and two hosts in the strip)."""
    app, pair = make_app("cascade-iops-cap")
    async with app.run_test(size=(160, 48)) as pilot:
        feed(app, pair, TICKS)
        await until(pilot, lambda: drawn(app) and len(strip(app)) == 2)
        shown = app.screen._compositor.visible_widgets
        names = {w.id for w in shown}
        assert not names & {"hosts", "body"}
        assert {"pane-0", "pane-1", "strip"} <= names
        assert sum(isinstance(w, Panel) for w in shown) >= 10
        text = app.export_screenshot()
        assert "PRIMARY" in text and "STANDBY" in text and "standby_a" in text
