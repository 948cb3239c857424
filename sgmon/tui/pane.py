"""One host's pane: its panels, top to bottom in the order of the commit path's story.

The pane fits its panels to its height rather than scrolling the evidence away: the panels that
the findings cite get their lines first (in the order of the findings' rank), then the others in
the order of ``FIRST``; a panel given fewer lines than it has keeps its first ones (titles and
worst rows come first) and says how many it hides, and the panels left without room are named
on one line at the bottom, so the reader knows what a taller terminal or `z` would show.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.events import Resize
from textual.geometry import Region
from textual.widgets import Static

from sgmon.fields import ORACLE_WAITS
from sgmon.tui.fit import fit
from sgmon.tui.panels.base import Panel, sight
from sgmon.tui.panels.budget import BudgetPanel
from sgmon.tui.panels.cpu import CpuPanel
from sgmon.tui.panels.dataguard import DataGuardPanel
from sgmon.tui.panels.disks import DisksPanel
from sgmon.tui.panels.heatmap import HeatmapPanel
from sgmon.tui.panels.histogram import HistogramPanel
from sgmon.tui.panels.interfaces import InterfacesPanel
from sgmon.tui.panels.paging import PagingPanel
from sgmon.tui.panels.processes import ProcessesPanel
from sgmon.tui.panels.sockets import SocketsPanel
from sgmon.tui.panels.waits import WaitsPanel
from sgmon.tui.view import PaneView, SeriesKey

PANELS: tuple[type[Panel], ...] = (
    BudgetPanel,
    WaitsPanel,
    HistogramPanel,
    HeatmapPanel,
    SocketsPanel,
    DataGuardPanel,
    DisksPanel,
    CpuPanel,
    ProcessesPanel,
    PagingPanel,
    InterfacesPanel,
)
"""The answer first (where commit time goes), then the evidence, then the host's resources."""
FIRST: tuple[type[Panel], ...] = (*(c for c in PANELS if c is not HeatmapPanel), HeatmapPanel)
"""Who gets lines first when no finding says otherwise: the heatmap repeats the histogram over
time in thirteen lines, so it gives way first."""


def citing_panel(collector: str, field: str) -> type[Panel] | None:
    """The panel that shows a series a finding cites (the histogram shows the buckets)."""
    if collector == ORACLE_WAITS.name:  # the events' table, not the budget drawn from them
        return HistogramPanel if field == ORACLE_WAITS.hist.name else WaitsPanel
    return next((c for c in PANELS if c.needs == collector and c is not HeatmapPanel), None)


def allot(sizes: Sequence[int], order: Iterable[int], height: int, cited: int = 0) -> list[int]:
    """Lines per panel (0: folded into the pane's last line), in ``order`` each up to its size.

    A panel gets at least three lines (its title, a table's header and its first row) or none;
    when anything is folded, one line is kept for naming what was.  The first ``cited`` of
    ``order`` (the panels the findings cite) each get their first three lines before any gets
    more, so one long cited table does not fold the others.  No line is left blank while a
    panel is folded: the first folded one takes the lines left and what it lacks of its three
    from the lowest-ranked panels that have more than three.
    """
    if sum(sizes) <= height:
        return list(sizes)
    order = list(order)
    given = [0] * len(sizes)
    least = [min(3, n) for n in sizes]
    left = height - 1
    for i in order[:cited]:
        if least[i] <= left:
            given[i] = least[i]
            left -= least[i]
    for i in order:
        take = min(sizes[i] - given[i], left)
        if given[i] + take >= least[i]:
            given[i] += take
            left -= take
    _unfold_first(given, least, order, left)
    return given


def _unfold_first(given: list[int], least: list[int], order: list[int], left: int) -> None:
    """Give the first folded panel (in ``order``) the ``left`` lines and what it lacks of its
    ``least`` from the lowest-ranked panels that have more than theirs, when they have enough
    to spare: no line stays blank while a panel is folded."""
    folded = [i for i in order if not given[i]]
    if left <= 0 or not folded:
        return
    i = folded[0]
    need = least[i] - left
    donors = [j for j in reversed(order) if given[j] > least[j]]
    if need > sum(given[j] - least[j] for j in donors):
        return
    for j in donors:
        d = min(need, given[j] - least[j])
        given[j] -= d
        need -= d
    given[i] = least[i]


@dataclass(frozen=True)
class PaneUpdate:
    """One pane's share of a redraw: rendered ahead panel by panel, then committed."""

    pane: HostPane
    view: PaneView
    ahead: list[Panel]
    """The panels in sight, to render before the commit."""
    title: str
    subtitle: str
    cited: tuple[SeriesKey, ...]
    shown: dict[Panel, bool]
    """Every panel, and whether its host has its collector."""


class HostPane(VerticalScroll, can_focus=False):
    """A column of panels for one host; its border names the host and its liveness."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.cited: tuple[SeriesKey, ...] = ()
        """Series the findings cite on this host, the top finding's first."""
        self.zoomed: Panel | None = None
        """The panel shown alone (z), if any."""
        self._folded = Text()
        self._border: tuple[str, str] | None = None
        self._panels = [cls(classes="panel") for cls in PANELS]
        """Its panels in ``PANELS`` order (kept: a DOM query per redraw matched CSS selectors
        against every node)."""
        self._folded_line = Static(classes="folded")

    def compose(self) -> ComposeResult:
        """One widget per panel."""
        yield from self._panels
        yield self._folded_line

    def watch_scroll_y(self, old: float, new: float) -> None:
        """Scrolled: draw the panels that came into sight with their newest view."""
        super().watch_scroll_y(old, new)
        self.call_after_refresh(self.catch_up)

    def on_resize(self, _: Resize) -> None:
        """Taller or shorter: share the lines again."""
        self.call_after_refresh(self.catch_up)

    def catch_up(self) -> None:
        """Share the height out again and draw every panel in sight that has a newer view.

        The pane's content region is worked out once here for the fit and every panel: each
        ask walks the pane's styles and scrollbars (13 asks a pane and tick before)."""
        region = self.scrollable_content_region
        self.fit(region)
        rows = sight(self, region)
        for panel in self._panels:
            if panel.in_sight(rows):
                panel.draw()

    def update(
        self, view: PaneView, subtitle: str = "", cited: tuple[SeriesKey, ...] = ()
    ) -> PaneUpdate:
        """One instant for every panel: what to render ahead (the panels in sight), and the
        step that shows it (``commit``).  The app renders every pane's panels first,
        then commits them all in one turn of the event loop, so one compositor pass paints a
        tick: each pass walks every widget overlapping the lines it repaints, header to key line,
        whatever changed."""
        title = f"{(view.kind or view.role or 'host').upper()}  {view.host}" + (
            f"  {view.role_note}" if view.role_note else ""
        )
        present = view.frame.collectors if view.frame is not None else None
        shown = {  # the zoom is the fit's to apply (``_shows``), at once, not the view's
            panel: present is None or not panel.needs or panel.needs in present
            for panel in self._panels
        }
        ahead = [panel for panel, on in shown.items() if on and panel.display]
        return PaneUpdate(self, view, ahead, title, subtitle, cited, shown)

    def commit(self, update: PaneUpdate) -> None:
        """Give every panel the view, then fit and draw them with the border (the pane's title
        and panels change together)."""
        if not self.is_attached:
            return
        self._set_border(update.title, update.subtitle)
        self.cited = update.cited
        for panel, on in update.shown.items():
            panel.present, panel.view = on, update.view
        self.catch_up()

    def _set_border(self, title: str, subtitle: str) -> None:
        """Title and subtitle, repainting only the border row that changed.

        Textual's border title setters refresh the whole widget, and a container's full refresh
        composites every line of every panel in it again: 120 of the 130 lines a frame drew
        (the subtitle's time changes every tick).  So a new subtitle alone is stored as the
        setter stores it and only the bottom border row is repainted.
        """
        old, self._border = self._border, (title, subtitle)
        if old is None or old[0] != title or not self.size:
            self.border_title, self.border_subtitle = title, subtitle
        elif old[1] != subtitle:
            self._border_subtitle = self.render_str(subtitle).expand_tabs(4).split()[0]
            x, y = self.content_offset
            width, height = self.outer_size
            self.refresh(Region(-x, height - 1 - y, width, 1))

    def _shows(self, panel: Panel) -> bool:
        """Whether the panel is shown at all: its host has its collector, and no other panel is
        zoomed (known at once, not only from the next redraw's views)."""
        return panel.present and (self.zoomed is None or panel is self.zoomed)

    def fit(self, region: Region) -> None:
        """Give each panel its lines (all of them when zoomed or not laid out yet) within the
        pane's content ``region``."""
        panels = [p for p in self._panels if self._shows(p)]
        folded: list[str] = []
        for p, n in zip(panels, self._given(panels, region), strict=True):
            p.limit = n
            if n == 0:
                folded.append(p.heading)
        for p in self._panels:
            shown = self._shows(p) and p.limit != 0
            if p.display != shown:
                p.display = shown
        self._name_folded(folded, panels, region.width)

    def _given(self, panels: list[Panel], region: Region) -> list[int | None]:
        """Lines for each of ``panels`` (None: all it has, when zoomed or not laid out yet)."""
        if self.zoomed is not None or region.height <= 0:
            return [None] * len(panels)
        present = [type(p) for p in panels]
        ranked, cited = self._ranked(present)
        sizes = [p.lines_needed(region.width) for p in panels]
        order = (present.index(c) for c in ranked)
        return list(allot(sizes, order, region.height, cited))

    @property
    def buying(self) -> bool:
        """What a change would buy is shown (w) under this host's budget, which then gets its
        lines first: at 80x24 the key would otherwise change nothing in sight."""
        view = self._panels[0].view
        return view is not None and bool(view.what_if)

    def _ranked(self, present: list[type[Panel]]) -> tuple[list[type[Panel]], int]:
        """The ``present`` panels in the order they get lines, and how many of them come first
        as the findings cite them (in the findings' rank), after the budget while it shows what
        a change would buy; the others in ``FIRST``'s order."""
        ranked: list[type[Panel]] = [BudgetPanel] if self.buying and BudgetPanel in present else []
        for collector, _, field in self.cited:
            c = citing_panel(collector, field)
            if c is not None and c in present and c not in ranked:
                ranked.append(c)
        return ranked + [c for c in FIRST if c in present and c not in ranked], len(ranked)

    def _name_folded(self, folded: list[str], panels: list[Panel], width: int) -> None:
        """The line naming the ``folded`` panels (hidden when none is)."""
        line = self._folded_line
        if line.display != bool(folded):
            line.display = bool(folded)
        if folded and panels and panels[0].view is not None:
            muted = panels[0].view.palette.muted
            names = Text(fit("▸ " + " · ".join(folded), width), muted)
            if names != self._folded:
                self._folded = names
                line.update(names)
