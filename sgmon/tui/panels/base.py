"""A host panel: a pure render function of a pane's view, drawn through the line API
(``sgmon.tui.panels.lines``) and redrawn only when its view changes; and what the listing panels
share (the filter's note, a table with a sparkline under it).
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Group, RenderableType
from rich.text import Text
from textual.events import Resize
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from sgmon.contract import Num, Ref
from sgmon.fields import DISK, ORACLE_WAITS, TCP
from sgmon.tui.draw import graph_width, grid, spark_row
from sgmon.tui.palette import Palette
from sgmon.tui.panels.lines import LineKey, Lines, to_strips
from sgmon.tui.view import PaneView

Render = Callable[[PaneView, int], RenderableType]


class Panel(Lines, can_focus=True):
    """Shows ``render_view(view, width)``; an equal view at the same width costs no redraw.

    Its pane may give it fewer lines than it has (``limit``): the first lines stay, as every
    panel puts its title and its worst rows first, and the title says how many are hidden.
    """

    DEFAULT_CSS = """
    Panel {
        height: 1;
    }
    """
    render_view: Render
    """The panel's pure render function (set by each subclass)."""
    needs: str = ""
    """The collector the panel is about: hidden for a host that has no such collector at all
    (a host without a database shows its OS panels only)."""
    filters: str = ""
    """The collector whose instances the filter (/) selects, when the panel lists them."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.view: PaneView | None = None
        """The newest view given by the pane (drawn when in sight)."""
        self.limit: int | None = None
        """Lines the pane gives this panel (None: all it has)."""
        self.zoomed = False
        """Shown alone over its pane's whole area (z)."""
        self.present = True
        """Whether its host has its collector (a zoom hides the others: ``HostPane._shows``)."""
        self._drawn: tuple[PaneView | None, int, int | None] = (None, 0, None)
        self._full: tuple[PaneView | None, int, list[Strip]] = (None, 0, [])
        self._known: dict[LineKey, Strip] = {}

    @property
    def _laid_out_width(self) -> int:
        """Its own width, or its pane's while it is folded away (to count its lines); 0 before
        the layout has given either.

        Its own is the size the layout gave it (a panel has no border or padding), not its
        ``content_region``: that looks the panel up in the screen's map, 4 % of the dashboard's
        time when asked a few times per panel and tick.
        """
        if self.display and self._size.width:
            return self._size.width
        pane = self.parent
        return pane.scrollable_content_region.width if isinstance(pane, Widget) else 0

    @property
    def _width(self) -> int:
        """The laid-out width, else a guess that only counts lines (never drawn at)."""
        return self._laid_out_width or 60

    def full(self) -> list[Strip]:
        """Every line of the newest view at the current width (rendered once per view)."""
        return self._rendered(self.view) if self.view is not None else []

    def prepare(self, view: PaneView) -> None:
        """Render ``view`` at the laid-out width before the pane gives it (``full`` then finds
        it rendered)."""
        if self._laid_out_width:
            self._rendered(view)

    def _rendered(self, view: PaneView) -> list[Strip]:
        width = self._width
        if self._full[:2] != (view, width):
            lines = filtered(view, self.filters, type(self).render_view(view, width))
            if width != self._full[1]:
                self._known.clear()
            strips = to_strips(self.app.console, lines, width, self._known, self._base_style)
            self._full = (view, width, strips)
        return self._full[2]

    def lines_needed(self, width: int) -> int:
        """Lines the newest view has; while folded away, those of its last render at its pane's
        content ``width``, so that a panel nobody sees costs nothing per tick (a row count
        rarely changes)."""
        if not self.display and self._full[1] == width and self._full[2]:
            return len(self._full[2])
        return len(self.full())

    @property
    def heading(self) -> str:
        """The panel's name, as its last render begins (the pane names folded panels so)."""
        strips = self._full[2] or self.full()
        return strips[0].text.split("  ")[0].strip() if strips else ""

    def draw(self) -> None:
        """Show the newest view at the current width within the limit, unless already shown.

        An equal view at the same width costs a comparison, not a redraw: views compare field
        by field and frames by identity first (a paused pane, a host that sent nothing new).
        """
        width = self._laid_out_width
        limit = None if self.zoomed else self.limit
        if not width or self.view is None or self._drawn == (self.view, width, limit):
            return  # not laid out yet: on_resize draws it at its real width
        self._drawn = (self.view, width, limit)
        strips = self.full()
        if limit is not None and len(strips) > max(1, limit):
            kept = max(1, limit)
            note = Text(f"  +{len(strips) - kept} lines (z)", style=self.view.palette.muted)
            head = strips[0].crop(0, max(0, width - note.cell_len))
            base = self._base_style
            tail = to_strips(self.app.console, note, note.cell_len, base=base)[0]
            strips = [Strip.join([head, tail]).adjust_cell_length(width, base), *strips[1:kept]]
        old, self._strips = self._strips, strips
        if len(old) != len(strips):
            if self.styles.height is None or self.styles.height.value != len(strips):
                self.styles.height = max(1, len(strips))
            self.refresh()
            return
        # the same number of lines: repaint only those that changed (a panel's title, its
        # headings and its steady rows stay as Textual last composited them)
        changed = [
            y for y, (a, b) in enumerate(zip(old, strips, strict=True)) if a is not b and a != b
        ]
        if changed:
            self.refresh(*(Region(0, y, width, 1) for y in changed))

    def in_sight(self, rows: tuple[int, int] | None = None) -> bool:
        """Whether any line of the panel is inside its pane's scroll window (or it is zoomed);
        ``rows``: that window's first and end row, when the pane has worked them out for all
        its panels at once.

        Panels scrolled out of sight are not drawn, nor those folded away (``display`` off: they
        have no region, which looked like "not laid out yet", so each was rendered every tick).
        """
        pane = self.parent
        if not isinstance(pane, Widget) or self.zoomed:
            return True
        if not (pane.display and self.display):
            return False
        r = self.virtual_region
        if not r.height:
            return True  # not laid out yet
        if rows is None:
            rows = sight(pane)
        return r.y < rows[1] and r.bottom > rows[0]

    @property
    def lines(self) -> list[str]:
        """The panel as plain text, one string per line (what a person reads); before its
        layout, its lines at the guessed width."""
        self.draw()
        return [s.text for s in (self._strips if self._laid_out_width else self.full())]

    @property
    def palette(self) -> Palette | None:
        """The palette of its newest view."""
        return self.view.palette if self.view is not None else None

    def restyle(self) -> None:
        """Draw the newest view again (``notify_style_update`` forgot the last render)."""
        if self.view is not None:
            self.draw()

    def notify_style_update(self) -> None:
        """The background changed: forget the lines rendered on the old one."""
        super().notify_style_update()
        self._known.clear()
        self._full = (None, 0, [])
        self._drawn = (None, 0, None)

    def on_resize(self, event: Resize) -> None:
        """Wider or narrower (zoom, terminal resize): draw again at the new width."""
        if event.size.width != self._drawn[1] and self.in_sight():
            self.draw()


def sight(pane: Widget, region: Region | None = None) -> tuple[int, int]:
    """The first and end row of a scrolling pane's window (``region``: its content region, when
    the caller has worked it out already)."""
    top = pane.scroll_offset.y
    return top, top + (pane.scrollable_content_region if region is None else region).height


def filtered(view: PaneView, collector: str, renderable: RenderableType) -> RenderableType:
    """A listing panel under a filter says so in its title, and says when nothing matches."""
    if not (collector and view.filter and isinstance(renderable, Group)):
        return renderable
    parts = list(renderable.renderables)
    if not parts or not isinstance(parts[0], Text):
        return renderable
    p = view.palette
    head = parts[0].copy()
    head.append(f"  (filtered '{view.filter}')", style=p.sev("warn"))
    # the sockets' whole-host row (its counters) is listed by no name
    names = [n for n in view.rows(collector) if not TCP.Rows.host.matches(n)]
    if names and not any(view.matches(n) for n in names):
        note = f"  nothing matches '{view.filter}' ({len(names)} hidden; Esc clears the filter)"
        return Group(head, Text(note, style=p.sev("warn")), *parts[1:])
    return Group(head, *parts[1:])


Columns = tuple[tuple[Ref, str], ...]
"""A table's columns: each field and its heading."""


def labelled(*columns: Ref | tuple[Ref, str]) -> Columns:
    """A table's columns, each a field with its heading, or a field alone when the tool the
    panel mimics heads its column with the field's own name (iostat's ``r_await``)."""
    return tuple(c if isinstance(c, tuple) else (c, c.name) for c in columns)


def table_with_spark(
    view: PaneView,
    head: Text,
    collector: str,
    names: list[str],
    leads: list[Text],
    columns: Columns,
    spark: tuple[Num, str],
    width: int,
) -> RenderableType:
    """A panel's table (one row per instance, ``leads`` in the first column) and, under it, the
    first instance's ``spark`` field (with its label) on the shared time axis."""
    p = view.palette
    rows = [
        [lead, *(view.cell(f, n) for f, _ in columns)] for lead, n in zip(leads, names, strict=True)
    ]
    parts: list[RenderableType] = [
        head,
        *grid(p, [columns_head(collector), *(lab for _, lab in columns)], rows),
    ]
    if names:
        field, label = spark
        parts.append(
            spark_row(
                p,
                label,
                view.series(field, names[0], graph_width(width)),
                width,
                view.judge(field),
                highlighted=view.marked(field, names[0]),
                log=True,
            )
        )
    return Group(*parts)


def columns_head(collector: str) -> str:
    """The first column's heading."""
    return {DISK.name: "device", ORACLE_WAITS.name: "event"}.get(collector, "instance")
