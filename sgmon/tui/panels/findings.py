"""The findings: the analysis' ranked cross-host conclusions, with their evidence.

Moving the highlight to a finding posts ``FindingChosen``; the app then marks the series it
names in both host panes.

A line-API list rather than Textual's ``OptionList``: the findings are redrawn every tick (their
evidence carries numbers that move), and an OptionList lays each option out anew through its
own content pipeline, a fifth of the compositor's time per frame.  Here a finding's lines are
rendered once per change of its text and width, and only the lines that changed are repainted.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, ClassVar

from rich.console import Group
from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.events import Click
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from sgmon.tui.fit import fit_words
from sgmon.tui.palette import Palette
from sgmon.tui.panels.lines import LineKey, line_key, to_strips


def _local(t: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(t))


def render_finding(f: Any, palette: Palette, width: int = 160, full: bool = False) -> Text:
    """Severity, host and the episode's title, its worst moment's (wrapped whole) with when
    that was and how long the episode is, as ``check`` and the report title it, then the
    evidence, which is now's: its first line cut after a whole word, or every item on its own
    wrapped line when ``full`` (Enter on the finding)."""
    sev = str(getattr(f, "severity", "info"))
    out = Text(f"{sev.upper():<4} ", style=palette.sev(sev))
    out.append(f"{getattr(f, 'host', '') or 'both'}: ", style=palette.muted)
    out.append(str(getattr(f, "episode", None) or getattr(f, "title", "")))
    if getattr(f, "peak_at", None) is not None:
        out.append(f"  ({f.peaked(_local)})", style=palette.muted)
    if getattr(f, "end", None) is not None:
        out.append(f"  (ended {_local(f.end)})", style=palette.muted)
    evidence = [str(e) for e in getattr(f, "evidence", []) or []]
    if not evidence:
        return out
    if full:
        for item in evidence:
            out.append("\n     " + item, style=palette.muted)
        if rule := getattr(f, "rule", ""):  # what the rule means and what to do
            out.append(f"\n     runbook: docs/findings.md#{rule}", style=palette.muted)
        return out
    more = "  (Enter: all)" if len(" · ".join(evidence)) > width - 6 else ""
    line = fit_words(" · ".join(evidence), max(20, width - 6 - len(more)))
    out.append("\n     " + line + more, style=palette.muted)
    return out


class FindingsPanel(ScrollView, can_focus=True):
    """The ranked findings at the cursor; highlight one to mark its series in every pane."""

    DEFAULT_CSS = """
    FindingsPanel {
        overflow-x: hidden;
    }
    FindingsPanel > .findings--highlighted {
        background: $block-cursor-blurred-background;
    }
    FindingsPanel:focus {
        background-tint: $foreground 5%;
    }
    FindingsPanel:focus > .findings--highlighted {
        color: $block-cursor-foreground;
        text-style: bold;
    }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {"findings--highlighted"}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "move(-1)", show=False),
        Binding("down", "move(1)", show=False),
        Binding("pageup", "page(-1)", show=False),
        Binding("pagedown", "page(1)", show=False),
        Binding("enter", "expand", show=False),
    ]

    class FindingChosen(Message):
        """The highlighted finding changed (``key`` None: none)."""

        def __init__(self, key: str | None) -> None:
            super().__init__()
            self.key = key

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.expanded: set[str] = set()
        """Keys of the findings shown with all their evidence (Enter toggles)."""
        self._keys: list[str] = []
        self._highlighted: int | None = None
        self._last: tuple[Sequence[Any], Palette | None, str] = ((), None, "")
        self._texts: list[LineKey] = []
        """Each finding's (or the note's) text as last rendered."""
        self._items: list[list[Strip]] = []
        """Each finding's lines at the laid-out width, unstyled."""
        self._lines: list[tuple[int, int]] = []
        """(finding, line within it) of every line of the list."""
        self._first: list[int] = []
        """The first line of each finding."""
        self._styles: tuple[Style, Style] | None = None
        self._width = 0
        """The width the lines were wrapped at."""

    @property
    def count(self) -> int:
        """Findings listed (0 while only the note shows)."""
        return len(self._keys)

    @property
    def texts(self) -> list[str]:
        """Each finding's text as shown (its lines joined), in rank order."""
        return [text for text, _, _ in self._texts[: self.count]]

    @property
    def highlighted(self) -> int | None:
        """Index of the highlighted finding, if any."""
        return self._highlighted

    @highlighted.setter
    def highlighted(self, index: int | None) -> None:
        if index is not None:
            index = min(max(index, 0), self.count - 1) if self.count else None
        if index == self._highlighted:
            return
        old, self._highlighted = self._highlighted, index
        for i in (old, index):
            self._repaint(i)
        if index is not None:
            lines = Region(0, self._first[index], 1, len(self._items[index]))
            self.scroll_to_region(lines, animate=False, immediate=True)
        self.post_message(self.FindingChosen(self.highlighted_key()))

    def highlighted_key(self) -> str | None:
        """Key of the highlighted finding, if any."""
        i = self._highlighted
        return self._keys[i] if i is not None and i < len(self._keys) else None

    def show(self, findings: Sequence[Any], palette: Palette, note: str = "") -> None:
        """Show the findings, keeping the highlighted one highlighted while it is listed.

        Findings whose text did not change keep their rendered lines; when every finding keeps
        its number of lines, only the lines that changed are repainted (the evidence's numbers
        move every tick; relaying out the list would repaint the whole screen).
        """
        self._last = (findings, palette, note)
        width = self.scrollable_content_region.width or 120
        if width != self._width:
            self._texts, self._items, self._width = [], [], width
        keep = self.highlighted_key()
        self._keys = [f.key for f in findings]
        texts = self._texts_of(findings, palette, note, width)
        keys = [line_key(t) for t in texts]
        known = dict(zip(self._texts, self._items, strict=True))
        items = [known.get(k) or self._strips(t, width) for k, t in zip(keys, texts, strict=True)]
        old = self._items
        self._texts, self._items = keys, items
        # a finding gone from the list leaves none highlighted (the app keeps marking its key
        # until another is picked, so it is marked again if it comes back)
        was = self._highlighted
        self._highlighted = self._keys.index(keep) if keep in self._keys else None
        if [len(s) for s in items] == [len(s) for s in old]:
            changed = [i for i, s in enumerate(items) if i >= len(old) or s is not old[i]]
            for i in {*changed, was, self._highlighted}:
                self._repaint(i)
        else:
            self._lay_out(width)

    def _texts_of(
        self, findings: Sequence[Any], palette: Palette, note: str, width: int
    ) -> list[Text]:
        """Each finding's text (all its evidence when expanded), or the note when none."""
        if not findings:
            return [Text(note or "no findings", style=palette.muted)]
        return [render_finding(f, palette, width, f.key in self.expanded) for f in findings]

    def _lay_out(self, width: int) -> None:
        """Lay the list out again: a finding's number of lines changed, or the findings did."""
        self._lines = [(i, n) for i, s in enumerate(self._items) for n in range(len(s))]
        self._first = [y for y, (_, n) in enumerate(self._lines) if n == 0]
        self.virtual_size = Size(width, len(self._lines))
        self.refresh()

    def _strips(self, text: Text, width: int) -> list[Strip]:
        """The text's lines, long ones wrapped at words, as strips of ``width`` cells (the
        panels' fast path: Rich's whole render of a multi-line Text cost twice this)."""
        console = self.app.console
        lines = [
            part
            for line in text.split("\n")
            for part in (line.wrap(console, width) if line.cell_len > width else (line,))
        ]
        return to_strips(console, Group(*lines), width)

    def _repaint(self, index: int | None) -> None:
        if index is not None and index < len(self._first):
            self.refresh_lines(self._first[index], len(self._items[index]))

    def render_line(self, y: int) -> Strip:
        """A line of the list on the widget's background, the highlighted finding marked."""
        if self._styles is None:
            base = self.rich_style
            self._styles = (base, base + self.get_component_rich_style("findings--highlighted"))
        at = self.scroll_offset.y + y
        if at >= len(self._lines):
            return Strip.blank(self._width, self._styles[0])
        index, n = self._lines[at]
        style = self._styles[index == self._highlighted]
        return self._items[index][n].apply_style(style)

    def notify_style_update(self) -> None:
        """Focus or theme changed the colours: restyle the lines."""
        super().notify_style_update()
        self._styles = None

    def render_lines(self, crop: Region) -> list[Strip]:
        """Wrap again first when the width for text changed: a resize, or the scrollbar that a
        longer list brings (it narrows the content without a resize event)."""
        if self.scrollable_content_region.width != self._width:
            self._show_again()
        return super().render_lines(crop)

    def action_move(self, step: int) -> None:
        """Up/down: the previous or next finding; within a finding taller than the panel (its
        whole evidence at 80x24), a line at a time until its end or its start shows."""
        if not self.count:
            return
        here = self._highlighted
        if here is not None and self._scrolls_within(here, step):
            self.scroll_relative(y=step, animate=False, immediate=True)
            return
        self.highlighted = 0 if here is None else here + step

    def to_highlighted(self) -> None:
        """Scroll to the highlighted finding's first line (back from the zoom, where Down may
        have scrolled into its evidence)."""
        if self._highlighted is not None:
            self.scroll_to(y=self._first[self._highlighted], animate=False, immediate=True)

    def _scrolls_within(self, index: int, step: int) -> bool:
        """Whether finding ``index`` has lines past the panel's edge in the direction of
        ``step``."""
        top, n = self._first[index], len(self._items[index])
        height, y = self.scrollable_content_region.height, self.scroll_offset.y
        return y + height < top + n if step > 0 else y > top

    def action_page(self, step: int) -> None:
        """Page up/down: the finding a screen away."""
        if not self.count:
            return
        page = step * self.scrollable_content_region.height
        line = self._first[self._highlighted or 0] + page
        line = min(max(line, 0), len(self._lines) - 1)
        self.highlighted = self._lines[line][0]

    def action_expand(self) -> None:
        """Enter: show the finding's whole evidence, or fold it back to one line."""
        key = self.highlighted_key()
        if key is None:
            return
        self.expanded ^= {key}
        self._show_again()
        i = self._highlighted
        if (  # the whole evidence does not fit (80x24 leaves 3 rows): give it the screen (z)
            key in self.expanded
            and i is not None
            and len(self._items[i]) > self.scrollable_content_region.height
            and not self.screen.has_class("-zoom-findings")
        ):
            self.call_later(self.run_action, "app.zoom")
        elif i is not None:
            lines = Region(0, self._first[i], 1, len(self._items[i]))
            self.scroll_to_region(lines, animate=False, immediate=True)

    def _show_again(self) -> None:
        """The last findings shown, laid out again (another width, a finding expanded)."""
        findings, palette, note = self._last
        if palette is not None:
            self.show(findings, palette, note)

    def on_click(self, event: Click) -> None:
        """A click picks the finding under it; a click on the picked one expands it."""
        offset = event.get_content_offset(self)
        if offset is None:
            return
        at = self.scroll_offset.y + offset.y
        if not (0 <= at < len(self._lines)) or self._lines[at][0] >= self.count:
            return
        index = self._lines[at][0]
        if index == self._highlighted:
            self.action_expand()
        else:
            self.highlighted = index
