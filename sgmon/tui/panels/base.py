"""The widgets drawn from pre-rendered lines (every host panel, the header), redrawn only when
their view changes.

Panels use Textual's line API rather than ``Static``: the pure render function's output is turned
into strips once per change, and the layout is only redone when the number of lines changes.  At
one redraw per second for two panes this keeps the dashboard's own CPU small (see bench/).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

from rich.console import Console, Group, RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.text import Span, Text
from textual.color import Color
from textual.events import Resize
from textual.filter import ANSIToTruecolor, LineFilter
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from sgmon.tui.draw import cell_count, graph_width, grid, spark_row
from sgmon.tui.palette import Palette
from sgmon.tui.view import PaneView

Render = Callable[[PaneView, int], RenderableType]


NULL = Style.null()

LineKey = tuple[str, tuple[Span, ...], str | Style]
"""A Text's content: equal keys give equal strips."""


def line_key(text: Text) -> LineKey:
    """What a Text renders from (its plain text, spans and own style)."""
    return (text.plain, tuple(text.spans), text.style)


def to_strips(
    console: Console,
    renderable: RenderableType,
    width: int,
    known: dict[LineKey, Strip] | None = None,
    base: Style = NULL,
) -> list[Strip]:
    """Lines of a renderable as strips of exactly ``width`` cells, on ``base`` (the widget's
    own background and colour, applied in the same pass as each line's style).

    Panels render a Group of one-line Texts; those skip Rich's wrapping machinery (a third of a
    redraw's cost otherwise).  Anything else goes through ``render_lines``.  ``known`` holds the
    strips of the panel's last render at this width: a line that did not change (titles,
    headings, steady rows: half of them each tick) is that same strip again, not built anew, and
    is then found unchanged by identity.  It is replaced by this render's lines.
    """
    parts = renderable.renderables if isinstance(renderable, Group) else [renderable]
    texts = [p for p in parts if isinstance(p, Text) and "\n" not in p.plain]
    if len(texts) == len(parts):
        if known is None:
            return [_strip(console, t, width, base) for t in texts]
        keys = [line_key(t) for t in texts]
        pairs = zip(keys, texts, strict=True)
        strips = [known.get(k) or _strip(console, t, width, base) for k, t in pairs]
        known.clear()
        known.update(zip(keys, strips, strict=True))
        return strips
    options = console.options.update(width=width, no_wrap=True, overflow="crop")
    lines = console.render_lines(renderable, options, pad=False)
    return [
        Strip(
            Segment.adjust_line_length(list(Segment.apply_style(line, base)), width, base or None),
            width,
        )
        for line in lines
    ]


def _strip(console: Console, text: Text, width: int, base: Style) -> Strip:
    # Text.render leaves the Text's own style to its caller.
    segments = _segments(console, text, base + console.get_style(text.style))
    used = cell_count(text.plain)
    if used > width:
        return Strip(Segment.adjust_line_length(segments, width), width)
    if used < width:
        segments.append(Segment(" " * (width - used), base or None))
    return Strip(segments, width)


def _segments(console: Console, text: Text, own: Style) -> list[Segment]:
    """``Segment.apply_style(text.render(console), own)`` (``own``: the widget's base and the
    Text's own style) for a line whose spans follow one another without overlapping and carry
    Style objects (the panels' lines: a cell is one Text with one style, ``PaneView.cell``):
    the same segments, cut at the same offsets, in one pass without Rich's sort and style
    stack (about half of converting a line).  Any other Text goes through Rich."""
    plain, spans = text.plain, text.spans
    if not _abutting(spans, len(plain)):
        return list(Segment.apply_style(text.render(console), own))
    if not spans:
        return [Segment(plain, own or None)]  # as Rich leaves a line without spans
    out: list[Segment] = []
    at = 0
    for start, end, style in spans:
        if start > at:
            out.append(Segment(plain[at:start], own))
        if end > start:
            out.append(Segment(plain[start:end], own + cast(Style, style)))  # _abutting saw
        at = end
    if at < len(plain):
        out.append(Segment(plain[at:], own))
    return out


def _abutting(spans: list[Span], length: int) -> bool:
    """Whether spans follow one another without overlapping, end within ``length`` and carry
    Style objects (not style names)."""
    at = 0
    for start, end, style in spans:
        if start < at or end < start or not isinstance(style, Style):
            return False
        at = end
    return at <= length


class Lines(Widget):
    """A widget drawn from strips rendered ahead on its own background (the panels, the
    header): they go to the compositor as they are.

    Textual's generic path (its styles cache) pads, backgrounds and post-processes every
    repainted line for borders, padding, tint and opacity, which these widgets have none of: a
    third of the compositor's time per frame, and for a ``Static`` its content pipeline besides.
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._strips: list[Strip] = []
        self._filters: tuple[Palette | None, Sequence[LineFilter], Color] | None = None
        self._base: Style | None = None

    @property
    def palette(self) -> Palette | None:
        """The palette its lines are drawn in (None before it has any)."""
        return None

    def restyle(self) -> None:
        """Render the lines again on a new background (after a focus or theme change)."""

    @property
    def _base_style(self) -> Style:
        """The widget's own style under its lines (background, focus), kept until a style
        update: working it out walks the widget's ancestors.  Lines are rendered on it."""
        if self._base is None:
            self._base = self.rich_style
        return self._base

    def render_line(self, y: int) -> Strip:
        """One pre-rendered line (on the widget's own background)."""
        if self._base is None:
            self.restyle()  # the background changed (focus, theme): render on the new one
        if y < len(self._strips):
            return self._strips[y]
        return Strip.blank(self.size.width, self._base_style)

    def render_lines(self, crop: Region) -> list[Strip]:
        """The lines in ``crop`` for the compositor, straight from the pre-rendered ones.

        What Textual's path does that still applies is done here: the app's line filters (true
        colour for ANSI colours: left out for a palette of RGB colours, where it changes
        nothing), cached per strip, the crop, and lines drawn at another width (until the
        resize draws them again) fitted to this one.
        """
        palette = self.palette
        if self._filters is None or self._filters[0] is not palette:
            rgb = palette is not None and palette.truecolor
            kept = [
                f
                for f in self.app.get_line_filters()
                if not (rgb and isinstance(f, ANSIToTruecolor))  # it would change nothing
            ]
            self._filters = (palette, kept, self.background_colors[1])
        _, filters, background = self._filters
        width = self._size.width  # no border or padding: its size, without a map lookup
        out = []
        for y in crop.line_range:
            strip = self.render_line(y)
            if strip.cell_length != width:  # drawn at the width it had (a zoom, a resize)
                strip = strip.adjust_cell_length(width, self._base_style)
            for line_filter in filters:
                strip = strip.apply_filter(line_filter, background)
            out.append(strip)
        if crop.column_span != (0, width):
            x1, x2 = crop.column_span
            out = [strip.crop(x1, x2) for strip in out]
        return out

    def notify_style_update(self) -> None:
        """Focus, theme or class changed the background: the lines are rendered again on the
        new one when next drawn (a style update happens on focus and theme changes only)."""
        super().notify_style_update()
        self._filters = None
        self._base = None


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
    names = [n for n in view.rows(collector) if n != "host"]
    if names and not any(view.matches(n) for n in names):
        note = f"  nothing matches '{view.filter}' ({len(names)} hidden; Esc clears the filter)"
        return Group(head, Text(note, style=p.sev("warn")), *parts[1:])
    return Group(head, *parts[1:])


def table_with_spark(
    view: PaneView,
    head: Text,
    collector: str,
    names: list[str],
    leads: list[Text],
    columns: tuple[tuple[str, str], ...],
    spark: tuple[str, str],
    width: int,
) -> RenderableType:
    """A panel's table (one row per instance, ``leads`` in the first column) and, under it, the
    first instance's ``spark`` field (name, label) on the shared time axis."""
    p = view.palette
    rows = [
        [lead, *(view.cell(collector, n, f) for f, _ in columns)]
        for lead, n in zip(leads, names, strict=True)
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
                view.series(collector, names[0], field, graph_width(width)),
                width,
                view.judge(collector, field),
                highlighted=(collector, names[0], field) in view.highlight,
                log=True,
            )
        )
    return Group(*parts)


def columns_head(collector: str) -> str:
    """The first column's heading."""
    return {"disk": "device", "oracle_waits": "event"}.get(collector, "instance")
