"""The one time axis of the dashboard, and the views of one instant built from the history.

Kept apart from the Textual app: given the Monitor's history, the Feed's analysis states and the
config, it answers "what does each pane and the header show at instant t" as plain data.
"""

from __future__ import annotations

import bisect
import math
import time
from typing import Any

from sgmon.config import Config
from sgmon.fields import ORACLE_DG
from sgmon.hosts import HostInfo
from sgmon.model import SILENT_INTERVALS, Frame, data_guard_role, unheard
from sgmon.monitor import Monitor, frame_at
from sgmon.tui.feed import Feed
from sgmon.tui.palette import Palette
from sgmon.tui.panels.dataguard import DB
from sgmon.tui.panels.header import HostState
from sgmon.tui.roles import FORMER_PRIMARY, standing
from sgmon.tui.view import PaneView, SeriesMemo

WINDOW = 160
"""Instants in a pane's window: the widest sparkline or heatmap a zoomed panel draws."""


SAME_TICK = 0.25
"""Frames stamped within this share of the interval of each other are of one tick."""


def instants(times: list[float], within: float) -> list[float]:
    """Sorted ``times``, each run of them that ends less than ``within`` after it begins
    merged into its newest: the instant at which every frame of the run is the newest of its
    host (``frame_at``)."""
    out: list[float] = []
    begun = -math.inf
    for t in times:
        if out and t - begun < within:
            out[-1] = t
        else:
            out.append(t)
            begun = t
    return out


def on_axis(axis: list[float], time: float, within: float) -> float | None:
    """The instant of ``axis`` (made by ``instants``) that holds a frame stamped ``time``."""
    i = bisect.bisect_left(axis, time - 1e-9)
    return axis[i] if i < len(axis) and axis[i] - time < within else None


class Timeline:
    """History, analysis and config -> views of one instant."""

    def __init__(self, monitor: Monitor, feed: Feed, config: Config) -> None:
        self.monitor = monitor
        self.history = monitor.history
        self.feed = feed
        self.config = config
        self._memos: dict[str, SeriesMemo] = {}
        self._before: list[tuple[float, float]] = []
        """(monotonic time, interval) of each interval left by +/- : a frame due under the old
        interval may still be on its way, and is late only by that interval's measure."""

    def hosts(self) -> list[HostInfo]:
        """Hosts of the sources, then any others that sent frames (tests, replays)."""
        configured = list(self.monitor.hosts)
        names = {h.name for h in configured}
        for name in self.history.hosts():
            if name not in names:
                latest = self.history.latest(name)
                configured.append(HostInfo(name, latest.role if latest else ""))
        # the database's own role wins: after a switchover the panes swap without a restart
        return [
            HostInfo(h.name, data_guard_role(self.history.latest(h.name), h.role))
            for h in configured
        ]

    def role_note(self, host: HostInfo) -> str:
        """Said on the pane when the database's role is not the one the config gives."""
        latest = self.history.latest(host.name)
        configured = next(
            (h.role for h in self.monitor.hosts if h.name == host.name),
            latest.role if latest is not None else "",
        )
        if configured and host.role and configured != host.role:
            return f"(database says {host.role}, config {configured})"
        return ""

    def axis(self) -> list[float]:
        """Every instant any host has a frame for, oldest first: the one shared time axis.  The
        hosts' frames of one tick are one instant (``instants``): a far side's tick is placed
        on this machine's clock by a measured offset, so two hosts stamp the same second a
        fraction of a millisecond apart, and on an axis of every stamp each pane had a frame
        at every other instant (its sparklines blank in every other column)."""
        times = sorted({f.time for h in self.history.hosts() for f in self.history.frames(h)})
        return instants(times, self.interval() * SAME_TICK)

    def window(self, axis: list[float], at: float | None) -> list[float]:
        """The instants up to and including ``at`` that the sparklines and heatmaps show."""
        end = bisect.bisect_right(axis, (at or 0) + 1e-6)
        return axis[max(0, end - WINDOW) : end]

    def interval(self) -> float:
        """Seconds between frames of the first source."""
        sources = self.monitor.sources
        return sources[0].interval if sources else self.config.interval

    def stale_after(self) -> float:
        """Seconds without a frame after which a host counts as stale: two intervals, as the
        analysis' silent host, of the longest in effect since then (``+`` then ``-`` pressed
        quickly do not flash STALE), but not under 3 s of the wall clock, where arrival jitter
        on a busy machine would flicker the dot (a remote source's stand-in frames come at two
        intervals, and those make it stale at once)."""
        now = time.monotonic()
        self._before = [(t, old) for t, old in self._before if now - t < SILENT_INTERVALS * old]
        return max(
            SILENT_INTERVALS * self.interval(),
            3.0,
            *(SILENT_INTERVALS * old for _, old in self._before),
        )

    def interval_changed(self, old: float) -> None:
        """The sources were told a new interval; ``old`` is the one they sampled at."""
        self._before.append((time.monotonic(), old))

    @property
    def replay(self) -> bool:
        """Whether every source plays a recording back (the header says REPLAY, not LIVE)."""
        from sgmon.hosts.replay import replaying

        return replaying(self.monitor.sources)

    def is_stale(self, host: str) -> bool:
        """Whether the host's frames stopped arriving, or arrive with nothing heard from it
        (not once every source has ended)."""
        if self.monitor.sources and self.monitor.finished.is_set():
            return False
        latest = self.history.latest(host)
        if latest is not None and unheard(latest):
            return True
        quiet = self.feed.quiet_for(host)
        return quiet is not None and quiet > self.stale_after()

    def stale_since(self, host: str, frame: Frame | None, live: bool) -> float | None:
        """Time of the host's last frame with numbers when ``frame`` (the cursor's) stands in
        for nothing heard or the host is stale now (live), else None."""
        if frame is None:
            return None
        if unheard(frame):
            frames = self.history.frames(host)
            i = bisect.bisect_right(frames, frame.time, key=lambda f: f.time)
            # back from the cursor over the silent run only, without copying the history again
            heard = next(
                (frames[j].time for j in range(i - 1, -1, -1) if not unheard(frames[j])), None
            )
            return heard if heard is not None else frame.time
        return frame.time if live and self.is_stale(host) else None

    def pane_view(
        self,
        host: HostInfo,
        at: float | None,
        times: list[float],
        state: Any,
        palette: Palette,
        filter: str = "",
        finding: str | None = None,
        live: bool = True,
    ) -> PaneView:
        """Everything one pane shows at instant ``at``."""
        frames = self.history.frames(host.name)  # one copy serves the window and the cursor
        within = self.interval() * SAME_TICK
        by_time = {t: f for f in frames if (t := on_axis(times, f.time, within)) is not None}
        frame = frame_at(frames, at) if at is not None else None
        stale = self.stale_since(host.name, frame, live)
        # a silent host's last budget is not now's
        budget, highlight = self._analysis(host.name, state if stale is None else None, finding)
        pinned = next((h.devices for h in self.config.hosts if h.name == host.name), ())
        return PaneView(
            host=host.name,
            role=_role(host, frame),
            kind=self.kind(host.name, _role(host, frame)),
            cap=self.cap(host.name),
            role_note=self.role_note(host),
            palette=palette,
            frame=frame,
            window=tuple(by_time.get(t) for t in times),
            judgement=self.feed.verdict(frame),
            grader=self.feed.judge.grader,
            highlight=highlight,
            budget=budget,
            what_if=self.feed.what_if or () if _role(host, frame) == "primary" else (),
            pinned=tuple(pinned),
            filter=filter,
            stale_since=stale,
            memo=self._memos.setdefault(host.name, SeriesMemo()),
        )

    @staticmethod
    def _analysis(
        host: str, state: Any, finding: str | None
    ) -> tuple[Any, frozenset[tuple[str, str, str]]]:
        """The host's commit-time budget in the analysis' ``state``, and the series of it that
        the ``finding`` picked names (nothing without a state)."""
        if state is None:
            return None, frozenset()
        chosen = next((f for f in state.findings if f.key == finding), None)
        named = chosen.series if chosen is not None else ()
        return state.budget.get(host), frozenset(tuple(s[1:]) for s in named if s[0] == host)

    def glance(self, host: HostInfo, at: float | None, palette: Palette) -> PaneView:
        """One host at instant ``at`` without its window or the analysis' budget: what the strip
        of the hosts without a pane reads (a pane's view also maps its whole window)."""
        frame = self.history.at(host.name, at) if at is not None else None
        return PaneView(
            host=host.name,
            role=_role(host, frame),
            palette=palette,
            frame=frame,
            judgement=self.feed.verdict(frame),
            grader=self.feed.judge.grader,
            cap=self.cap(host.name),
        )

    def kind(self, host: str, role: str) -> str:
        """The word the title and the header give the host when its role says too little or
        too much: ``far sync``, ``former primary`` (``sgmon.tui.roles``), else nothing."""
        if self.far_sync(host):
            return "far sync"
        return FORMER_PRIMARY if standing(host, role, self.feed.topology) == FORMER_PRIMARY else ""

    def far_sync(self, host: str) -> bool:
        """Whether the topology has the host as a far sync instance."""
        topo = self.feed.topology
        return topo is not None and host in topo.far_sync

    def cap(self, host: str) -> str:
        """``warn`` for a standby the topology puts off the commit path (the analysis' lag
        risks are at most warnings), else no cap."""
        topo = self.feed.topology
        off = topo is not None and host in topo.standbys and not topo.on_commit_path(host)
        return "warn" if off else ""

    def host_states(self, hosts: list[HostInfo]) -> tuple[HostState, ...]:
        """Each host's role, last frame time, liveness and clock skew for the header."""
        ref = hosts[0].name if hosts else ""
        states = []
        for h in hosts:
            latest = self.history.latest(h.name)
            states.append(
                HostState(
                    name=h.name,
                    role=self.kind(h.name, _role(h, latest)) or _role(h, latest),
                    last=self.feed.heard(h.name) if latest else None,
                    stale=self.is_stale(h.name),
                    skew_ms=self.feed.skew_ms(h.name, ref) if h.name != ref else None,
                )
            )
        return tuple(states)

    def protection(self, hosts: list[HostInfo]) -> str:
        """The protection mode the primary reports (or the first host), if any."""
        name = next((h.name for h in hosts if h.role == "primary"), hosts[0].name if hosts else "")
        latest = self.history.latest(name) if name else None
        mode = ORACLE_DG.protection_mode.raw_at(latest, DB)
        return str(mode or "")


def _role(host: HostInfo, frame: Frame | None) -> str:
    """The host's role, else the one its frame says."""
    return host.role or (frame.role if frame else "")
