"""The sgmon dashboard: primary and standby side by side, one time cursor, findings ranked.

Collection never runs on the UI thread: the Monitor runs each source on its own thread and calls
the app's sink from its dispatcher thread; the sink records the frame and posts a ``FramesArrived``
message that replaces any still-pending one, so a slow terminal skips intermediate redraws instead
of queueing them.  Every redraw reads the instant under the cursor from the history.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import gc
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

from textual.app import App, ComposeResult
from textual.await_complete import AwaitComplete
from textual.binding import Binding, BindingType
from textual.command import CommandPalette
from textual.containers import Container
from textual.css.query import NoMatches
from textual.driver import Driver
from textual.events import Print, Resize
from textual.message import Message
from textual.reactive import var
from textual.screen import Screen
from textual.theme import Theme
from textual.widgets import Footer, Input, Static

import themes
from sgmon.config import Config
from sgmon.hosts import HostInfo, Source
from sgmon.model import Frame, Schema
from sgmon.tui.help import HelpScreen
from sgmon.tui.live import Live
from sgmon.tui.palette import Palette
from sgmon.tui.pane import HostPane, PaneUpdate
from sgmon.tui.panels.base import Panel
from sgmon.tui.panels.findings import FindingsPanel
from sgmon.tui.panels.header import Header, HeaderView, clock
from sgmon.tui.strip import HostStrip, entry, order, place, render_strip
from sgmon.tui.timeline import Timeline
from sgmon.units import parse_instant

INTERVALS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0)
"""The steps of the +/- keys, seconds."""
MIN_SIZE = (60, 20)
"""Below this the dashboard shows one line saying so instead of a crushed layout: the compact
form needs a title line per panel of the one pane, the findings and the key line."""
REDRAW_DELAY = 0.05
"""Seconds a redraw waits after a frame for the other host's frame of the same tick."""
STACK_BELOW = 140
"""Narrower than this, the panes are stacked (side by side their tables would be cut)."""
COMPACT_BELOW = (100, 30)
"""Narrower or shorter than this, one pane: the host of the top finding, or the one `s` chose."""
SIDE_FINDINGS_FROM = 210
"""From this width the findings are a column right of the panes, which get the full height (the
panes keep the 70 columns their widest table needs)."""
FINDINGS_COLUMN = 64
"""Columns of that findings column (``grid-columns`` of ``Screen.-wide`` in sgmon.tcss)."""
PANE_WIDTH = STACK_BELOW // 2
"""Columns a pane needs side by side: its widest table, its border and padding."""
SETTLE_AFTER = 2.0
"""Seconds after start of ``_settle``: after the first frame, before anyone presses a key."""


def pane_count(width: int, height: int) -> int:
    """Panes the terminal has room for: one in the compact form, two stacked, else as many
    side by side as keep ``PANE_WIDTH`` each (two at 160 or 220 columns, three from 274)."""
    if width < COMPACT_BELOW[0] or height < COMPACT_BELOW[1]:
        return 1
    if width < STACK_BELOW:
        return 2
    room = width - (FINDINGS_COLUMN if width >= SIDE_FINDINGS_FROM else 0)
    return max(2, room // PANE_WIDTH)


FILTER_HINT = "filter devices, interfaces, sockets (Enter, Esc clears)"
GOTO_HINT = "go to 10:31:02 (local, as shown), 2026-11-24T10:31:02, or -5m / +30s (Enter, Esc)"


class FramesArrived(Message):
    """New frames are in the history; one pending message stands for any number of frames."""

    def can_replace(self, message: Message) -> bool:
        """A newer arrival makes an unhandled older one redundant."""
        return isinstance(message, FramesArrived)


@dataclass(frozen=True)
class _Instant:
    """What one redraw shows, shared by its panes."""

    at: float | None
    times: list[float]
    state: Any
    hosts: dict[str, HostInfo]
    findings: list[Any]


class SafeCommandPalette(CommandPalette):
    """Textual's command palette, hardened against keys typed ahead (Textual 8.2's races, each of
    which ended the dashboard with a traceback; docs/upstream/ reproduces the first):

    - PageUp/PageDown before its list is laid out read an empty line map (``KeyError: 0``): such
      a key is dropped, one a moment later pages as usual;
    - a key queued behind the one that closed it closed it again, popping the screen below
      (``ScreenStackError``): it closes once, and only while it is on top;
    - its search ran on after it closed and looked for its own removed list (``NoMatches``): the
      search stops when it closes, and a late watcher finds nothing to update.
    """

    def _action_command_list(self, action: str) -> None:
        try:
            super()._action_command_list(action)
        except KeyError:
            if action not in ("page_up", "page_down"):
                raise

    def dismiss(self, result: Any = None) -> AwaitComplete:
        """Close once, stopping the search first."""
        self._cancel_gather_commands()
        if self.app.screen is not self:
            return AwaitComplete.nothing()
        return super().dismiss(result)

    def _watch__list_visible(self) -> None:
        with contextlib.suppress(NoMatches):
            super()._watch__list_visible()

    async def _watch__show_busy(self) -> None:
        with contextlib.suppress(NoMatches):
            await super()._watch__show_busy()


class SgmonApp(App[int]):
    """The dashboard over any sources (local, remote, simulated, replayed)."""

    CSS_PATH = "sgmon.tcss"
    TITLE = "sgmon"
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
        Binding("t", "next_theme", "theme"),
        Binding("plus,equals_sign", "interval(1)", "slower", key_display="+", show=False),
        Binding("minus", "interval(-1)", "faster", key_display="-", show=False),
        Binding("s", "switch_host(1)", "host", show=False),
        Binding("S", "switch_host(-1)", "host back", show=False),
        Binding("e", "export", "svg"),
        Binding("escape", "escape", show=False),
    ]

    paused: var[bool] = var(False)
    """Whether the view is held at the cursor (collection goes on)."""
    cursor: var[float | None] = var(None)
    """The instant shown in every pane; None follows the newest frame."""
    filter: var[str] = var("")
    """Devices, interfaces and sockets shown must contain this."""
    finding: var[str | None] = var(None)
    """Key of the highlighted finding; its series are marked in every pane."""

    def __init__(
        self,
        sources: Sequence[Source] = (),
        config: Config | None = None,
        title: str = "sgmon",
        *,
        history: int = 900,
        measure_self: bool = True,
        live: Live | None = None,
        notice: str = "",
    ) -> None:
        self.theme_specs = themes.load_themes()
        self._defaults = dict(self.theme_specs["sgmon-dark"]["variables"])
        super().__init__()
        self.config = config or Config()
        self.title = title
        self.live = live or Live(sources, self.config, history)
        self.monitor = self.live.monitor
        self.feed = self.live.feed
        self.timeline = Timeline(self.monitor, self.feed, self.config)
        for name in list(self.available_themes):  # ctrl+p offers sgmon's themes only, as t does
            self.unregister_theme(name)
        for spec in self.theme_specs.values():
            self.register_theme(Theme(**spec))
        self.measure_self = measure_self
        self._notice = notice
        """Said once the screen is up, long enough to read (``run_dashboard``)."""
        self._cpu_mark = (time.monotonic(), time.process_time())
        self._self_cpu: float | None = None
        self._slots: list[str | None] = [None, None]
        """The host each pane shows (None: the pane is hidden), left to right."""
        self._order: list[str] = []
        """The hosts along the commit path (``strip.order``), as the panes take them."""
        self._first: str | None = None
        """The host `s` put in the left pane (None: the order's first, or the top finding's)."""
        self._panes = 2
        """Panes the terminal has room for (``pane_count``)."""
        self._drawing = False
        self._prompt = "filter"
        """What the line under the panes asks for: a filter, or a time to go to (g)."""
        self._redraw_due = False
        self._rendering = 0
        """Counts redraws: the rendering of an older one stops."""
        self._shown_at = 0.0
        """Monotonic time a redraw last showed its instant."""
        self._drawn_newest: float | None = None
        self._skips: deque[tuple[float, int]] = deque()
        """(monotonic time, instants not drawn) of live redraws in the last minute."""
        self._quiet: tuple[bool, ...] = ()
        self._palettes: dict[str, Palette] = {}
        # the widgets every redraw updates, kept rather than queried (a query walks the DOM)
        self._header = Header(id="header")
        self._body = Container(id="body")
        self._strip = HostStrip(id="strip")
        self._findings = FindingsPanel(id="findings")
        self.theme = "sgmon-dark"

    # ---- data in -------------------------------------------------------------------------

    def _arrived(self) -> None:
        """A frame was kept (on the Monitor's dispatcher thread): ask the UI to redraw."""
        if self._drawing:
            self.post_message(FramesArrived())

    def ingest(self, frame: Frame, schema: Schema | None = None) -> None:
        """Add a frame directly (tests, snapshots): same path as a collected one, no thread."""
        if schema is not None:
            self.feed.schemas[frame.host] = schema
        self.feed.add(frame, self.monitor.judge(frame), in_history=False)
        if self._drawing:
            self.post_message(FramesArrived())

    def on_frames_arrived(self, _: FramesArrived) -> None:
        """Redraw shortly, so the frames of both hosts of one tick make one redraw."""
        if not self._redraw_due:
            self._redraw_due = True
            self.set_timer(REDRAW_DELAY, partial(self.redraw, at_once=False))

    # ---- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        """Header, the host panes (more are added when there is room and hosts for them) and the
        strip of the hosts without one, the findings, the filter line and the footer."""
        yield self._header
        with Container(id="hosts"):
            with self._body:
                yield HostPane(id="pane-0")
                yield HostPane(id="pane-1")
            yield self._strip
        self._findings.border_title = "FINDINGS  (f)"
        yield self._findings
        yield Static(id="toosmall")
        yield Input(placeholder=FILTER_HINT, id="filter")
        yield Footer()

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver for this terminal; on Linux, one whose input thread sleeps while no
        key comes (``sgmon.tui.driver``)."""
        driver = super().get_driver_class()
        from textual.drivers.linux_driver import LinuxDriver

        if driver is LinuxDriver:
            from sgmon.tui.driver import QuietLinuxDriver

            return QuietLinuxDriver
        return driver

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """sgmon's own colour variables, so a user theme may leave any of them out."""
        return dict(self._defaults)

    @property
    def main(self) -> Screen:
        """The dashboard's screen, also while the help screen is on top of it."""
        return self.screen_stack[0]

    def on_mount(self) -> None:
        """Start collecting; redraw once a second for liveness and the clock."""
        self._drawing = True
        self.begin_capture_print(self, stdout=False, stderr=True)
        self._layout(self.size.width, self.size.height)
        self.live.listener = self._arrived
        self.live.start()
        self.set_interval(1.0, self._tick)
        self.set_timer(SETTLE_AFTER, self._settle)
        self.redraw()
        if self._notice:
            self.notify(self._notice, title="sgmon.toml", severity="warning", timeout=30)

    def on_print(self, event: Print) -> None:
        """A source or sink reported a problem on stderr (`sgmon: ...`): show it, don't lose it."""
        text = event.text.strip()
        if text:
            self.notify(text, severity="error", timeout=10)

    def on_unmount(self) -> None:
        """Stop the sources (their threads end at their next wait)."""
        self._drawing = False
        self.live.stop()

    def on_resize(self, event: Resize) -> None:
        """Side by side, stacked, one pane, or a message, by terminal size."""
        self._layout(event.size.width, event.size.height)

    def _layout(self, width: int, height: int) -> None:
        small = width < MIN_SIZE[0] or height < MIN_SIZE[1]
        panes, self._panes = self._panes, pane_count(width, height)
        screen = self.main
        screen.set_class(small, "-toosmall")
        screen.set_class(width < STACK_BELOW, "-stacked")
        screen.set_class(width < COMPACT_BELOW[0] or height < COMPACT_BELOW[1], "-compact")
        screen.set_class(width >= SIDE_FINDINGS_FROM, "-wide")
        for pane in self.main.query(HostPane):
            self.call_after_refresh(pane.catch_up)
        if small:
            self.main.query_one("#toosmall", Static).update(
                f"sgmon needs {MIN_SIZE[0]}x{MIN_SIZE[1]}, this terminal is {width}x{height}"
            )
        if panes != self._panes:  # hosts go into panes or the strip
            self.redraw()

    # ---- view ----------------------------------------------------------------------------

    def axis(self) -> list[float]:
        """The shared time axis (every instant any host has a frame for)."""
        return self.timeline.axis()

    @property
    def cursor_time(self) -> float | None:
        """The instant shown: the cursor, or the newest frame time when following live."""
        return self._at(self.axis())

    def _at(self, axis: list[float]) -> float | None:
        """The instant shown on ``axis``: the cursor, or its newest instant when following live
        (callers that have the axis already pass it, rather than building it again)."""
        return self.cursor if self.cursor is not None else (axis[-1] if axis else None)

    @property
    def palette(self) -> Palette:
        """The active theme's colours for the render functions."""
        if self.theme not in self._palettes:
            merged = {**self._defaults, **self.current_theme.variables}
            self._palettes[self.theme] = Palette.from_variables(self.theme, merged)
        return self._palettes[self.theme]

    @property
    def _live(self) -> bool:
        """Mounted and not shutting down: Textual stops running before it takes the widgets
        down, and the 1 s timer or a due redraw can still fire in between."""
        return self._drawing and self.is_running

    def redraw(self, at_once: bool = True) -> None:
        """Draw the header, the findings, every pane and the strip at the cursor.

        The panes' panels are rendered one at a time, the event loop getting a turn between two
        (a key pressed meanwhile is answered in between), then everything is shown in one turn
        (``_render``): one compositor pass per tick, not one per pane, header and strip.  A key's
        redraw (``at_once``) shows the header and the findings first, so the answer is seen
        before the panes are rendered.
        """
        self._redraw_due = False
        if not self._live:
            return
        axis = self.axis()
        at = self._at(axis)
        state = self.feed.state_at(at) if at is not None else None
        hosts = self.timeline.hosts()
        findings = list(getattr(state, "findings", None) or [])
        self._assign(hosts, findings[0].host if findings else None)
        panes = [c for c in self._body.children if isinstance(c, HostPane)]
        self._count_skipped(axis)
        header = self._header_view(hosts, at, axis[-1] if axis else None)
        if at_once:
            self._header.show(header)
            self._show_findings(state)
        instant = _Instant(
            at,
            self.timeline.window(axis, at),
            state,
            {h.name: h for h in hosts},
            findings,
        )
        updates = [u for i, pane in enumerate(panes) if (u := self._pane_update(i, pane, instant))]
        self._rendering += 1
        self._body.call_later(self._render, self._rendering, updates, header, instant)

    async def _render(
        self, rendering: int, updates: list[PaneUpdate], header: HeaderView, instant: _Instant
    ) -> None:
        """Render the panes' panels in sight, giving the event loop a turn after each, then show
        the header, the findings, the panes and the strip together.  It runs on the panes'
        container, not the app: a callback holds its widget's queue until it returns, and the
        app's queue must stay free for keys.  A newer redraw drops what is left of this one."""
        for update in updates:
            for panel in update.ahead:
                if rendering != self._rendering or not self._live:
                    return
                panel.prepare(update.view)
                await asyncio.sleep(0)
        if rendering != self._rendering or not self._live:
            return
        self._shown_at = time.monotonic()
        self._header.show(header)
        self._show_findings(instant.state)
        for update in updates:
            update.pane.commit(update)
        self._show_strip(instant)

    def _count_skipped(self, axis: list[float]) -> None:
        """Note the live instants that arrived since the last live redraw and were never drawn."""
        if self.cursor is not None or not axis:
            return
        last, self._drawn_newest = self._drawn_newest, axis[-1]
        now = time.monotonic()
        if last is not None and axis[-1] > last:
            missed = len(axis) - 1 - bisect.bisect_right(axis, last)
            if missed > 0:
                self._skips.append((now, missed))
        while self._skips and now - self._skips[0][0] > 60.0:
            self._skips.popleft()

    def _pane_update(self, i: int, pane: HostPane, instant: _Instant) -> PaneUpdate | None:
        """One pane's share of a redraw (None: the pane shows no host)."""
        name = self._slots[i] if i < len(self._slots) else None
        pane.set_class(name is None, "-empty")
        if name is None or name not in instant.hosts or not pane.is_mounted:
            return None
        view = self.timeline.pane_view(
            instant.hosts[name],
            instant.at,
            instant.times,
            instant.state,
            self.palette,
            self.filter,
            self.finding,
            live=self.cursor is None,
        )
        if view.stale_since is not None:
            note = f"STALE since {clock(view.stale_since)}"
        elif view.frame is None:
            note = "waiting for the first frame"
        else:
            note = f"at {clock(view.frame.time)}"
        pane.set_class(view.stale_since is not None, "-stale")
        cited = tuple(s[1:] for f in instant.findings for s in f.series if s[0] == name)
        return pane.update(view, note, cited)

    def _assign(self, hosts: list[HostInfo], top: str | None) -> None:
        """Fill the panes along the commit path from the left, as many hosts as there are panes
        room for; add a pane when there is room and a host for it.

        The left pane shows the host `s` picked, else the first of the order (the primary: after
        a switchover it is left again), or in the one-pane view the host of the top finding.
        """
        self._order = order(hosts, self.feed.topology)
        if not self._order:
            return
        n = min(self._panes, len(self._order))
        one_pane = n == 1 and top in self._order
        first = self._first if self._first in self._order else top if one_pane else None
        k = self._order.index(first) if first is not None else 0
        shown = [self._order[(k + i) % len(self._order)] for i in range(n)]
        body = self._body
        have = len(body.children)
        if n > have:  # drawn at the next redraw, once they are composed
            body.mount(*(HostPane(id=f"pane-{i}") for i in range(have, n)))
            self.call_after_refresh(self.redraw)
        self._slots = [*shown, *[None] * (max(have, n) - n)]

    def _show_strip(self, instant: _Instant) -> None:
        """The hosts without a pane, one entry each, at the instant the panes show."""
        strip = self._strip
        rest = [n for n in self._order if n not in self._slots and n in instant.hosts]
        if not rest:
            strip.show([])
            return
        topo = self.feed.topology
        palette = self.palette
        primary = instant.hosts.get(topo.primary or "") if topo is not None else None
        seen = self.timeline.glance(primary, instant.at, palette) if primary else None
        chosen = next((f.host for f in instant.findings if f.key == self.finding), None)
        entries = []
        for name in rest:
            host = instant.hosts[name]
            worst = next((f for f in instant.findings if f.host == name and f.active), None)
            dests = [d.inst for d in topo.dests if name in d.hosts] if topo is not None else []
            feed = topo.feeder(name) if topo is not None and not dests else None
            sender = instant.hosts.get(feed.source) if feed is not None else None
            src = self.timeline.glance(sender, instant.at, palette) if sender else seen
            dests = [feed.inst] if feed is not None and sender is not None else dests
            view = self.timeline.glance(host, instant.at, palette)
            entries.append(entry(view, place(host, topo), src, dests, worst, name == chosen))
        width = strip.content_region.width or self.size.width
        strip.show(render_strip(palette, entries, width))

    def _show_findings(self, state: Any) -> None:
        findings = list(getattr(state, "findings", []) or []) if state is not None else []
        note = self.feed.analysis_note or "no findings at this instant"
        self._findings.show(findings, self.palette, note)

    def _header_view(
        self, hosts: list[HostInfo], at: float | None, newest: float | None
    ) -> HeaderView:
        behind = newest - at if self.paused and at is not None and newest is not None else None
        return HeaderView(
            palette=self.palette,
            name=self.title,
            hosts=self.timeline.host_states(hosts),
            interval=self.timeline.interval(),
            mode="paused" if self.paused else "replay" if self.timeline.replay else "live",
            cursor=at,
            behind=behind,
            protection=self.timeline.protection(hosts),
            self_cpu=self._self_cpu,
            skipped=sum(n for _, n in self._skips),
        )

    def _tick(self) -> None:
        """Once a second: own CPU and liveness; the panes only when a host went quiet or came back.

        Frames trigger their own redraws, so a live screen is not drawn twice a second.
        """
        if not self._live:
            return
        if self.measure_self:
            mono, cpu = time.monotonic(), time.process_time()
            m0, c0 = self._cpu_mark
            if mono > m0:
                self._self_cpu = (cpu - c0) / (mono - m0) * 100.0
            self._cpu_mark = (mono, cpu)
        hosts = self.timeline.hosts()
        quiet = tuple(self.timeline.is_stale(h.name) for h in hosts)
        if quiet != self._quiet:
            self._quiet = quiet
            self.redraw()
        elif time.monotonic() - self._shown_at > 1.5:  # no frame drew it since the last tick
            axis = self.axis()
            self._header.show(self._header_view(hosts, self._at(axis), axis[-1] if axis else None))

    def _settle(self) -> None:
        """Collect the start's garbage, then freeze what is left out of later collections.

        Python's full collection walks every tracked object; 85,000 of them are the imports'
        and Textual's, alive as long as the app.  Walking them made each full collection stop
        the UI for 35-100 ms (a key pressed then waited as long).  Frozen once, after the first
        frame, they are not walked again.  Not repeated: a freeze also keeps whatever cyclic
        garbage later comes of the objects it froze (Textual's strips hold themselves in their
        caches), about 1,000 objects each time.
        """
        gc.collect()
        gc.freeze()

    # ---- reactions -----------------------------------------------------------------------

    def watch_theme(self, _: str) -> None:
        """Colours live in the render functions too: draw again in the new ones."""
        self.redraw()

    def watch_filter(self, _: str) -> None:
        """Redraw with the new filter."""
        self.redraw()

    def watch_finding(self, _: str | None) -> None:
        """Mark the chosen finding's series."""
        self.redraw()

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

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While typing a filter, keys are text, not commands (except Esc)."""
        return not (isinstance(self.focused, Input) and action != "escape")

    # ---- actions -------------------------------------------------------------------------

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

    def action_help(self) -> None:
        """Keys and colours (once: a second ``?`` typed ahead does not stack a second help)."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.palette))

    def action_command_palette(self) -> None:
        """Textual's command palette, hardened against keys typed ahead (SafeCommandPalette)."""
        if self.use_command_palette and not isinstance(self.screen, CommandPalette):
            self.push_screen(SafeCommandPalette(id="--command-palette"))
