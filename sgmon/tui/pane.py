"""One host's pane: its panels, top to bottom in the order of the commit path's story."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll

from sgmon.tui.panels.base import Panel
from sgmon.tui.panels.budget import BudgetPanel
from sgmon.tui.panels.cpu import CpuPanel
from sgmon.tui.panels.dataguard import DataGuardPanel
from sgmon.tui.panels.disks import DisksPanel
from sgmon.tui.panels.heatmap import HeatmapPanel
from sgmon.tui.panels.histogram import HistogramPanel
from sgmon.tui.panels.interfaces import InterfacesPanel
from sgmon.tui.panels.paging import PagingPanel
from sgmon.tui.panels.sockets import SocketsPanel
from sgmon.tui.panels.waits import WaitsPanel
from sgmon.tui.view import PaneView

PANELS: tuple[type[Panel], ...] = (
    BudgetPanel,
    WaitsPanel,
    HistogramPanel,
    HeatmapPanel,
    SocketsPanel,
    DataGuardPanel,
    DisksPanel,
    CpuPanel,
    PagingPanel,
    InterfacesPanel,
)
"""The answer first (where commit time goes), then the evidence, then the host's resources."""


class HostPane(VerticalScroll, can_focus=False):
    """A scrolling column of panels for one host; its border names the host and its liveness."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)

    def compose(self) -> ComposeResult:
        """One widget per panel."""
        for cls in PANELS:
            yield cls(classes="panel")

    def watch_scroll_y(self, old: float, new: float) -> None:
        """Scrolled: draw the panels that came into sight with their newest view."""
        super().watch_scroll_y(old, new)
        self.call_after_refresh(self.catch_up)

    def catch_up(self) -> None:
        """Draw every panel in sight that has a newer view than the one on screen."""
        for panel in self.query(Panel):
            if panel.in_sight():
                panel.draw()

    def show(self, view: PaneView, subtitle: str = "") -> None:
        """Show one instant in every panel."""
        self.border_title = f"{(view.role or 'host').upper()}  {view.host}"
        self.border_subtitle = subtitle
        present = view.frame.collectors if view.frame is not None else None
        for panel in self.query(Panel):
            shown = present is None or not panel.needs or panel.needs in present
            if panel.display != shown:
                panel.display = shown
            panel.show(view)
