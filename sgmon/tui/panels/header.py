"""The header: configuration, protection mode, each host's role and liveness, the clock."""

from __future__ import annotations

import time
from dataclasses import dataclass

from rich.text import Text
from textual.events import Resize

from sgmon.tui.palette import Palette
from sgmon.tui.panels.lines import Lines, to_strips
from sgmon.units import fmt_num

SKEW_SHOWN_MS = 20.0
"""Smaller estimates are within the noise of frame arrival times and are not shown."""


@dataclass(frozen=True)
class HostState:
    """One host as the header shows it."""

    name: str
    role: str
    last: float | None
    """Time of the host's last frame (None: none yet)."""
    stale: bool
    skew_ms: float | None = None
    """This host's clock minus the first host's, estimated from arrival times."""


@dataclass(frozen=True)
class HeaderView:
    """Everything the header line shows."""

    palette: Palette
    name: str
    hosts: tuple[HostState, ...]
    interval: float
    mode: str
    """"live", "replay" (a recording plays back) or "paused"."""
    cursor: float | None
    behind: float | None = None
    """Seconds the cursor is behind the newest frame, while paused."""
    protection: str = ""
    self_cpu: float | None = None
    """sgmon's own CPU, % of one core."""
    skipped: int = 0
    """Instants that arrived in the last minute but were never drawn: the terminal or the
    machine is slower than ``--interval``, so redraws are merged, never queued."""


def clock(t: float | None) -> str:
    """Local HH:MM:SS, or a dash."""
    return time.strftime("%H:%M:%S", time.localtime(t)) if t else "--:--:--"


def render_header(v: HeaderView, width: int = 160) -> Text:
    """One line: mode and time, name, protection, hosts, interval, own CPU.

    What does not fit is left out whole, never cut mid-word: the mode, the time and the name
    always, and the interval; then the hosts in order (the ones left out counted as ``+N
    hosts``), a warning that drawing is skipped, the protection mode and sgmon's own CPU."""
    p = v.palette
    head = _mode(v)
    hosts = [_host(h, p) for h in v.hosts]
    protection = Text(v.protection.lower(), style=p.muted) if v.protection else None
    every = Text(f"every {fmt_num(v.interval)}s", style=p.muted)
    skipped = Text(f"drawing skipped {v.skipped}/min", style=p.sev("warn")) if v.skipped else None
    cpu = Text(f"sgmon cpu {v.self_cpu:.1f}%", style=p.muted) if v.self_cpu is not None else None
    room = width - head.cell_len - every.cell_len - 2
    kept, more, room = _hosts_that_fit(hosts, room, p)
    kept.add(id(every))
    for extra in (skipped, protection, cpu):
        if extra is not None and extra.cell_len + 2 <= room:
            kept.add(id(extra))
            room -= extra.cell_len + 2
    order = [protection, *hosts, more, every, skipped, cpu]
    shown = [part for part in order if part is not None and (id(part) in kept or part is more)]
    return Text("  ").join([head, *(part for part in shown if part)])


def _mode(v: HeaderView) -> Text:
    """`` LIVE 10:31:02  name``: the mode, the cursor's time (how far behind the newest frame,
    while paused) and the configuration's name."""
    p = v.palette
    head = Text(f" {v.mode.upper()} ", style=p.sev("ok" if v.mode == "live" else "warn") + p.title)
    head.append(clock(v.cursor))
    if v.behind:
        head.append(f" -{fmt_num(v.behind)}s", style=p.sev("warn"))
    head.append("  ")
    head.append(v.name, style=p.title)
    return head


def _hosts_that_fit(hosts: list[Text], room: int, p: Palette) -> tuple[set[int], Text, int]:
    """The hosts (by ``id``) that fit in ``room`` cells in order, leaving room for a ``+N
    hosts`` after them when some do not; that note (empty when all fit), and the room left."""
    kept: set[int] = set()
    more = Text()
    for i, part in enumerate(hosts):
        rest = len(hosts) - i - 1
        need = part.cell_len + 2 + (len(f"  +{rest} hosts") if rest else 0)
        if need > room:
            more = Text(f"+{len(hosts) - i} hosts", style=p.sev("warn"))
            room -= more.cell_len + 2
            break
        kept.add(id(part))
        room -= part.cell_len + 2
    return kept, more, room


def _host(h: HostState, p: Palette) -> Text:
    """``● standby stby1``, with what is wrong with it."""
    mark, sev = ("●", "ok") if not h.stale and h.last else ("○", "crit" if h.last else "warn")
    out = Text(f"{mark} ", style=p.sev(sev))
    out.append(h.name if h.role in (h.name, "") else f"{h.role} {h.name}")
    if not h.last:
        out.append(" waiting", style=p.sev("warn"))
    elif h.stale:
        out.append(f" STALE since {clock(h.last)}", style=p.sev("crit"))
    if h.skew_ms is not None and abs(h.skew_ms) >= SKEW_SHOWN_MS:
        out.append(f" skew {h.skew_ms:+.0f}ms", style=p.muted)
    return out


class Header(Lines):
    """The dashboard's top line, drawn through the line API as the panels are: a ``Static``
    laid its text out again through Textual's content pipeline on every tick (the clock)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._view: HeaderView | None = None
        self._shown: tuple[HeaderView | None, int] = (None, 0)

    @property
    def palette(self) -> Palette | None:
        """The palette of the last view shown."""
        return self._view.palette if self._view is not None else None

    @property
    def text(self) -> str:
        """The line as shown."""
        return self._strips[0].text if self._strips else ""

    def show(self, view: HeaderView) -> None:
        """Draw the header, unless it reads as it does already (a repaint of the line is a
        compositor pass over the whole screen's width)."""
        self._view = view
        width = self.size.width
        if not width or self._shown == (view, width):
            return  # not laid out yet: on_resize draws it
        self._shown = (view, width)
        text = render_header(view, width)
        strips = to_strips(self.app.console, text, width, base=self._base_style)
        if strips != self._strips:
            self._strips = strips
            self.refresh()

    def restyle(self) -> None:
        """Draw the last view again on the new background."""
        self._shown = (None, 0)
        if self._view is not None:
            self.show(self._view)

    def on_resize(self, _: Resize) -> None:
        """A new width: draw the last view at it."""
        self.restyle()
