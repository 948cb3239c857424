"""The dashboard's keys: the time cursor, the findings, the filter and go-to line, zoom,
theme, interval and host switching, export and help."""

from __future__ import annotations

import bisect
import time
from collections.abc import Iterable
from typing import ClassVar

from textual.app import SystemCommand
from textual.binding import Binding, BindingType
from textual.command import CommandPalette
from textual.screen import Screen
from textual.theme import ThemeProvider
from textual.widgets import Input

from sgmon.config import Config
from sgmon.tui.command_palette import SafeCommandPalette, SgmonCommands
from sgmon.tui.drawing import Dashboard
from sgmon.tui.help import HelpScreen
from sgmon.tui.live import Live
from sgmon.tui.pane import HostPane
from sgmon.tui.panels.base import Panel
from sgmon.tui.panels.findings import FindingsPanel
from sgmon.tui.panels.header import clock
from sgmon.units import parse_instant

INTERVALS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0)
"""The steps of the +/- keys, seconds."""
FILTER_HINT = "filter devices, interfaces, sockets (Enter, Esc clears)"
GOTO_HINT = "go to 10:31:02 (local, as shown), 2026-11-24T10:31:02, or -5m / +30s (Enter, Esc)"


NOTHING_TO_BUY = (
    "what a change would buy: nothing to predict from yet (no commits with their waits, or no "
    "incident and too few intervals)"
)


class Keys(Dashboard):
    """The dashboard with its keys (``BINDINGS``, each an ``action_*``)."""

    COMMANDS = Dashboard.COMMANDS | {SgmonCommands}

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Textual's own palette commands but Quit: q and Ctrl+C quit, and a palette entry an
        Enter away would end the dashboard on keys typed ahead faster than they are read."""
        return (c for c in super().get_system_commands(screen) if c.title != "Quit")

    AUTO_FOCUS = None  # nothing focused until tab or f: every key stays a dashboard key
    BINDINGS: ClassVar[list[BindingType]] = [
        # the footer shows these in order and cuts the rest at 80 columns: help first
        Binding("question_mark", "help", "help", key_display="?"),
        Binding("q", "quit", "quit"),
        Binding("space,p", "pause", "pause", priority=True),
        Binding("left,left_square_bracket", "step(-1)", "back", key_display="←/[", priority=True),
        Binding("right,right_square_bracket", "step(1)", "fwd", key_display="→/]", priority=True),
        Binding("home", "jump(0)", "oldest", show=False, priority=True),
        Binding("end", "jump(-1)", "live", priority=True),
        # the keys that move the focus act as they arrive (priority), not after the keys
        # already queued behind them: typed ahead (a burst over ssh), `/sdb` must type into the
        # filter line and `f z` zoom the findings (``check_action`` lets a focused line have
        # them as text)
        Binding("f", "findings", "findings", priority=True),
        Binding("slash", "filter", "filter", key_display="/", priority=True),
        Binding("g", "goto", "go to", show=False, priority=True),
        Binding("z", "zoom", "zoom"),
        Binding("w", "what_if", "what if", show=False),
        Binding("t", "next_theme", "theme"),
        Binding("plus,equals_sign", "interval(1)", "slower", key_display="+", show=False),
        Binding("minus", "interval(-1)", "faster", key_display="-", show=False),
        Binding("s", "switch_host(1)", "host", show=False),
        Binding("S", "switch_host(-1)", "host back", show=False),
        Binding("e", "export", "svg"),
        Binding("escape", "escape", show=False),
        # Ctrl+C quits from anywhere, as in top and less (Textual only says how to quit)
        Binding("ctrl+c", "interrupt", "quit", show=False, priority=True),
    ]

    def __init__(self, live: Live, config: Config, *, measure_self: bool = True) -> None:
        super().__init__(live, config, measure_self=measure_self)
        self._prompt = "filter"
        """What the line under the panes asks for: a filter, or a time to go to (g)."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While typing a filter, keys are text, not commands (except Esc); while the help is
        up, its keys are its own (Home and End scroll it, not the time cursor).  Ctrl+C always
        quits."""
        if action in ("interrupt", "command_palette"):
            return True
        if isinstance(self.screen, HelpScreen):
            return False
        return not (isinstance(self.focused, Input) and action != "escape")

    def on_findings_panel_finding_chosen(self, event: FindingsPanel.FindingChosen) -> None:
        """A finding was highlighted."""
        self.finding = event.key

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Apply the filter, or go to the time typed, and go back to the panes."""
        if self._prompt == "goto":
            self._close_filter()
            self.go_to(event.value)
            return
        self.filter = event.value.strip()
        self._close_filter()

    def go_to(self, text: str) -> None:
        """Put the cursor on the instant typed (local clock as shown, ISO, or -5m / +30s from
        the cursor), or the nearest kept instant before it; paused, as a step is."""
        axis = self.axis()
        if not axis or not text.strip():
            return
        try:
            t = parse_instant(text, self._at(axis) or axis[-1], utc=False)
        except ValueError as e:
            self.notify(f"go to {e}", severity="error")
            return
        i = max(0, bisect.bisect_right(axis, t + 1e-6) - 1)
        self.paused, self.cursor = True, axis[i]
        self.redraw()

    def _close_filter(self) -> None:
        self.main.remove_class("-filtering")
        self.set_focus(None)

    def action_pause(self) -> None:
        """Hold the view at the current instant, or go back to live."""
        if self.paused:
            self.paused, self.cursor = False, None
        else:
            self.paused, self.cursor = True, self.cursor_time
        self.redraw()

    def action_step(self, delta: int) -> None:
        """Move the one cursor by ``delta`` instants; every pane and the strip follow."""
        axis = self.axis()
        if not axis:
            return
        at = self._at(axis)
        assert at is not None  # the axis has an instant
        i = bisect.bisect_left(axis, at - 1e-6) + delta
        i = max(0, min(len(axis) - 1, i))
        self.paused = True
        self.cursor = axis[i]
        self.redraw()

    def action_jump(self, where: int) -> None:
        """``home``: the oldest instant kept; ``end``: back to live."""
        axis = self.axis()
        if where == 0 and axis:
            self.paused, self.cursor = True, axis[0]
        else:
            self.paused, self.cursor = False, None
        self.redraw()

    def action_findings(self) -> None:
        """Focus the findings list (again: back to the panes)."""
        panel = self.main.query_one(FindingsPanel)
        if self.focused is panel:
            self.set_focus(None)
        else:
            self.set_focus(panel)  # at once: Widget.focus() waits behind the queued keys
            if panel.highlighted is None and panel.count:
                panel.highlighted = 0

    def action_filter(self) -> None:
        """Show the filter line."""
        self._open_prompt("filter", self.filter, FILTER_HINT)

    def action_goto(self) -> None:
        """Ask for a time to put the cursor on (the line the filter uses)."""
        self._open_prompt("goto", "", GOTO_HINT)

    def _open_prompt(self, mode: str, value: str, hint: str) -> None:
        self._prompt = mode
        self.main.add_class("-filtering")
        box = self.main.query_one("#filter", Input)
        box.placeholder, box.value = hint, value
        self.set_focus(box)  # at once: the keys typed next are the line's

    def action_escape(self) -> None:
        """Close the filter line (clearing it), un-zoom, clear an applied filter, or leave the
        findings: the nearest thing first, as Esc does in top, htop and k9s."""
        if isinstance(self.focused, Input):
            if self._prompt == "filter":
                self.filter = ""
            self._close_filter()
        elif self.zoomed is not None:
            self.action_zoom()
        elif self.filter:
            self.filter = ""
        else:
            self.set_focus(None)

    @property
    def zoomed(self) -> Panel | FindingsPanel | None:
        """The panel shown alone under the header (z), if any."""
        if self.main.has_class("-zoom-findings"):
            return self.main.query_one(FindingsPanel)
        return next((p.zoomed for p in self.main.query(HostPane) if p.zoomed), None)

    def action_zoom(self) -> None:
        """Show the focused panel alone under the header (host and time stay), or go back."""
        screen = self.main
        if self.zoomed is not None:
            if screen.has_class("-zoom-findings"):
                findings = screen.query_one(FindingsPanel)
                findings.call_after_refresh(findings.to_highlighted)
            screen.remove_class("-zoom", "-zoom-findings")
            for pane in screen.query(HostPane):
                pane.remove_class("-zoomed")
                if pane.zoomed is not None:
                    pane.zoomed.zoomed = False
                pane.zoomed = None
                pane.catch_up()
            self.redraw()
            return
        target = self.focused
        if isinstance(target, FindingsPanel):
            screen.add_class("-zoom-findings")
            return
        if not isinstance(target, Panel):
            target = next(p for p in screen.query(Panel) if p.display)
            self.set_focus(target)
        parent = target.parent
        assert isinstance(parent, HostPane)
        pane = parent
        pane.zoomed, target.zoomed = target, True
        pane.add_class("-zoomed")
        screen.add_class("-zoom")
        pane.catch_up()  # the other panels go now, not when the redraw's views are shown
        self.redraw()

    def action_what_if(self) -> None:
        """Show under each primary's budget what a change would buy, worked out from the
        frames so far (off the drawing thread: it replays the commit path); again: hide it."""
        feed = self.timeline.feed
        if feed.what_if is not None:
            feed.what_if = None
            self.redraw()
            return
        feed.what_if = ("working out what a change would buy…",)
        self.redraw()

        def work() -> None:
            lines = tuple(feed.work_out_what_if(clock)) or (NOTHING_TO_BUY,)
            if feed.what_if is not None:  # not hidden meanwhile
                feed.what_if = lines
                self.call_from_thread(self.redraw)

        self.run_worker(work, thread=True, exclusive=True, group="what-if")

    def action_next_theme(self) -> None:
        """Cycle through the themes."""
        names = list(self.theme_specs)
        i = names.index(self.theme) if self.theme in names else -1
        self.theme = names[(i + 1) % len(names)]
        self.notify(f"theme {self.theme}", timeout=1.5)

    def action_interval(self, step: int) -> None:
        """Sample less (+) or more (-) often, where the source lets the interval change."""
        now = self.timeline.interval()
        i = min(range(len(INTERVALS)), key=lambda k: abs(INTERVALS[k] - now)) + step
        new = INTERVALS[max(0, min(len(INTERVALS) - 1, i))]
        changed = False
        for src in self.monitor.sources:
            setter = getattr(src, "set_interval", None)  # a source whose interval can change
            if setter is not None:
                setter(new)
                changed = True
        if changed:
            self.timeline.interval_changed(now)
            self.notify(f"interval {new:g}s", timeout=1.5)
        else:
            self.notify("a recording or a remote agent keeps its own interval", timeout=2)
        self.redraw()

    def action_switch_host(self, step: int) -> None:
        """Bring the next host along the commit path into the panes (`S`: the previous one):
        the panes shift by one, so with two hosts and two panes `s` swaps them, and in the
        one-pane view it switches host."""
        if not self._order:
            return
        left = self._slots[0] if self._slots[0] in self._order else self._order[0]
        self._first = self._order[(self._order.index(left) + step) % len(self._order)]
        self.redraw()

    def action_export(self) -> None:
        """Save the screen as SVG in the current directory."""
        name = f"sgmon-{time.strftime('%Y%m%d-%H%M%S')}.svg"
        path = self.save_screenshot(name)
        self.notify(f"saved {path}", timeout=3)

    async def action_interrupt(self) -> None:
        """Ctrl+C: quit, as ``q`` does, also from the filter line, the help or the palette."""
        await self.action_quit()

    def action_help(self) -> None:
        """Keys and colours (once: a second ``?`` typed ahead does not stack a second help)."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.palette))

    def action_command_palette(self) -> None:
        """Textual's command palette, hardened against keys typed ahead (SafeCommandPalette)."""
        if self.use_command_palette and not isinstance(self.screen, CommandPalette):
            self.push_screen(SafeCommandPalette(id="--command-palette"))

    def search_themes(self) -> None:
        """The palette's own "Theme" entry opens a second palette: hardened the same way (as
        Textual opens it, PageDown typed ahead into it ended the dashboard, ``KeyError: 1``)."""
        self.push_screen(
            SafeCommandPalette(providers=[ThemeProvider], placeholder="Search for themes…")
        )
