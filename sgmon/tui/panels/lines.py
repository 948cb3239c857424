"""The widgets drawn from pre-rendered lines (every host panel, the header), and the turning of
a render's Rich lines into Textual strips.

Panels use Textual's line API rather than ``Static``: the pure render function's output is turned
into strips once per change, and the layout is only redone when the number of lines changes.  At
one redraw per second for two panes this keeps the dashboard's own CPU small (see bench/).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from rich.console import Console, Group, RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.text import Span, Text
from textual.color import Color
from textual.filter import ANSIToTruecolor, LineFilter
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from sgmon.tui.draw import cell_count
from sgmon.tui.palette import Palette

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
