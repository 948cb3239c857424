"""The `?` screen: every key, and what the colours mean."""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

import themes
from sgmon.tui.draw import grid
from sgmon.tui.palette import Palette

KEYS = (
    ("q", "quit"),
    ("space  p", "pause / resume live (collection goes on while paused)"),
    ("← →  [ ]", "move the time cursor one interval; every pane and the strip show that instant"),
    ("home  end", "oldest instant kept / back to live"),
    ("g", "go to a time: 10:31:02 (as shown), ISO, or -5m / +30s from the cursor"),
    ("tab  shift+tab", "move focus between panels and the findings"),
    ("f", "go to the findings (again: back to the panes)"),
    ("↑ ↓  pgup pgdn", "in the findings: pick one (a click too); its series are marked"),
    ("enter", "in the findings: all of the picked finding's evidence, or back to one line"),
    ("/", "filter devices, interfaces and sockets by name (Enter applies)"),
    ("esc", "close the filter line, leave zoom, clear the filter, leave the findings"),
    ("z", "zoom the focused panel under the header (all rows); z or esc goes back"),
    ("w", "what a change would buy (Fast Sync, ASYNC, rto_min, faster disks): under the budget"),
    ("s  S", "next / previous host along the commit path into the panes (two: swap them)"),
    ("+  -", "sample less / more often (1s, 2s, 5s ... / 500ms, 200ms, 100ms), demo too"),
    ("t", f"next theme: {', '.join(themes.ORDER)}; add yours in ~/.config/sgmon/themes/"),
    ("e", "save the screen as SVG in the current directory"),
    ("ctrl+p", "command palette: the commands by name"),
    ("?", "this help: ↑ ↓ pgup pgdn home end scroll it; ? esc q close it"),
    ("ctrl+c", "quit, from anywhere"),
)


def render_help(palette: Palette) -> Group:
    """The key table and the colour legend."""
    keys = grid(
        palette, ["key", "does"], [[Text(k, style=palette.title), Text(w)] for k, w in KEYS], 9
    )
    legend = [Text(""), Text("colours", style=palette.title)]
    for sev, meaning in (
        ("ok", "normal"),
        ("info", "noted by the analysis"),
        ("warn", "past a warning threshold, or off its own baseline"),
        ("crit", "past a critical threshold: look here first"),
    ):
        line = Text(f" {sev:<6}", style=palette.sev(sev))
        line.append(meaning, style=palette.muted)
        legend.append(line)
    marked = Text(" marked", style=palette.highlight)
    marked.append(" the series named by the selected finding, in every pane", style=palette.muted)
    heat = Text(" heat   ", style=palette.muted)
    for level in (0.25, 0.5, 0.75, 1.0):
        heat.append("█", style=palette.heat(level).name)
    heat.append(
        " share of the interval's waits in the bucket (rows) at that time (columns)",
        style=palette.muted,
    )
    lingering = Text(" italic", style=palette.lingering)
    lingering.append(
        " an outlier still open (it closes after 5 quiet ticks) whose value is back in line",
        style=palette.muted,
    )
    strip = Text(" strip  ", style=palette.muted)
    strip.append("host", style=palette.title)
    strip.append(
        " without a pane: place · lag transport/apply s · its dest status · worst finding",
        style=palette.muted,
    )
    legend += [marked, lingering, heat, strip]
    return Group(Text("sgmon keys\n", style=palette.title), *keys, *legend)


class HelpScreen(ModalScreen[None]):
    """Keys and colours, scrolled with the arrows, PgUp/PgDn, Home and End (at 80x24 it is
    taller than the terminal); only ``?``, Escape and ``q`` close it, so a key pressed to read
    on does not throw it away."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "close", "close"),
        Binding("up", "scroll('scroll_up')", show=False),
        Binding("down", "scroll('scroll_down')", show=False),
        Binding("pageup", "scroll('scroll_page_up')", show=False),
        Binding("pagedown", "scroll('scroll_page_down')", show=False),
        Binding("home", "scroll('scroll_home')", show=False),
        Binding("end", "scroll('scroll_end')", show=False),
    ]

    def __init__(self, palette: Palette) -> None:
        super().__init__()
        self.palette = palette
        self._leaving = False

    def compose(self) -> ComposeResult:
        """One static block in a box that scrolls."""
        with VerticalScroll(id="help"):
            yield Static(render_help(self.palette))

    def action_scroll(self, how: str) -> None:
        """Scroll the help at once (``how``: the box's own scroll method)."""
        getattr(self.query_one("#help", VerticalScroll), how)(animate=False)

    def action_close(self) -> None:
        """Back to the dashboard, once: ``dismiss`` pops whatever screen is on top, so a second
        key queued before the first one's pop (or a screen pushed above this one, such as the
        command palette) must not pop again (that raised ScreenStackError)."""
        if self.app.screen is self and not self._leaving:
            self._leaving = True
            self.dismiss()
