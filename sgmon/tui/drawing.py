"""What the dashboard draws: the header, the host panes, the strip of the hosts without one and
the findings, all at the one time cursor, redrawn as frames arrive.

Collection never runs on the UI thread: the Monitor runs each source on its own thread and calls
the app's sink from its dispatcher thread; the sink records the frame and posts a ``FramesArrived``
message that replaces any still-pending one, so a slow terminal skips intermediate redraws instead
of queueing them.  Every redraw reads the instant under the cursor from the history.
"""

from __future__ import annotations

import asyncio
import bisect
import time
from collections import deque
from dataclasses import dataclass
from functools import partial
from typing import Any

from textual.app import App
from textual.containers import Container
from textual.message import Message
from textual.reactive import var
from textual.screen import Screen
from textual.theme import Theme

import themes
from sgmon.config import Config
from sgmon.hosts import HostInfo
from sgmon.model import Frame, Schema
from sgmon.tui.layout import pane_hosts
from sgmon.tui.live import Live
from sgmon.tui.palette import Palette
from sgmon.tui.pane import HostPane, PaneUpdate
from sgmon.tui.panels.findings import FindingsPanel
from sgmon.tui.panels.header import Header, HeaderView, clock
from sgmon.tui.strip import HostStrip, host_entries, order, render_strip
from sgmon.tui.timeline import Timeline

REDRAW_DELAY = 0.05
"""Seconds a redraw waits after a frame for the other host's frame of the same tick."""


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


class Dashboard(App[int]):
    """The dashboard's drawing at the cursor, over any sources (local, remote, simulated,
    replayed); ``Keys`` gives it its keys, ``SgmonApp`` lays it out on the terminal."""

    paused: var[bool] = var(False)
    """Whether the view is held at the cursor (collection goes on)."""
    cursor: var[float | None] = var(None)
    """The instant shown in every pane; None follows the newest frame."""
    filter: var[str] = var("")
    """Devices, interfaces and sockets shown must contain this."""
    finding: var[str | None] = var(None)
    """Key of the highlighted finding; its series are marked in every pane."""

    def __init__(self, live: Live, config: Config, *, measure_self: bool = True) -> None:
        self.theme_specs = themes.load_themes()
        self._defaults = dict(self.theme_specs["sgmon-dark"]["variables"])
        super().__init__()
        self.config = config
        self.live = live
        self.monitor = self.live.monitor
        self.feed = self.live.feed
        self.timeline = Timeline(self.monitor, self.feed, self.config)
        for name in list(self.available_themes):  # ctrl+p offers sgmon's themes only, as t does
            self.unregister_theme(name)
        for spec in self.theme_specs.values():
            self.register_theme(Theme(**spec))
        self.measure_self = measure_self
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

    # ---- colours -------------------------------------------------------------------------

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """sgmon's own colour variables, so a user theme may leave any of them out."""
        return dict(self._defaults)

    @property
    def palette(self) -> Palette:
        """The active theme's colours for the render functions."""
        if self.theme not in self._palettes:
            merged = {**self._defaults, **self.current_theme.variables}
            self._palettes[self.theme] = Palette.from_variables(self.theme, merged)
        return self._palettes[self.theme]

    def watch_theme(self, _: str) -> None:
        """Colours live in the render functions too: draw again in the new ones."""
        self.redraw()

    # ---- the instant shown ---------------------------------------------------------------

    @property
    def main(self) -> Screen:
        """The dashboard's screen, also while the help screen is on top of it."""
        return self.screen_stack[0]

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
    def _live(self) -> bool:
        """Mounted and not shutting down: Textual stops running before it takes the widgets
        down, and the 1 s timer or a due redraw can still fire in between."""
        return self._drawing and self.is_running

    def watch_filter(self, _: str) -> None:
        """Redraw with the new filter."""
        self.redraw()

    def watch_finding(self, _: str | None) -> None:
        """Mark the chosen finding's series."""
        self.redraw()

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
        room for (``pane_hosts``); add a pane when there is room and a host for it."""
        self._order = order(hosts, self.feed.topology)
        if not self._order:
            return
        shown = pane_hosts(self._order, self._panes, self._first, top)
        n = len(shown)
        body = self._body
        have = len(body.children)
        if n > have:  # drawn once they are mounted: a redraw before that skips them
            mounting = body.mount(*(HostPane(id=f"pane-{i}") for i in range(have, n)))

            async def draw_when_mounted() -> None:
                await mounting
                self.redraw()

            self.run_worker(draw_when_mounted(), exclusive=False)
        self._slots = [*shown, *[None] * (max(have, n) - n)]

    def _show_strip(self, instant: _Instant) -> None:
        """The hosts without a pane, one entry each, at the instant the panes show."""
        rest = [n for n in self._order if n not in self._slots and n in instant.hosts]
        lines = []
        if rest:
            palette = self.palette
            glance = partial(self.timeline.glance, at=instant.at, palette=palette)
            topo = self.feed.topology
            found = instant.findings
            entries = host_entries(rest, instant.hosts, topo, found, self.finding, glance)
            width = self._strip.content_region.width or self.size.width
            lines = render_strip(palette, entries, width)
        self._strip.show(lines)

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
