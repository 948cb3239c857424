"""What Textual itself costs to show a screen of sgmon's shape: the floor under the drawing.

A Textual app with sgmon's layout (a header, two bordered panes side by side, eleven line-API
widgets in each) changes as many lines per second as the demo does (``--changed``, 45 of 131
measured in the demo at 160x48 with rto-stall), with lines as coloured as sgmon's (a styled span
every 8 cells), through sgmon's terminal driver.  Every strip is built before the app starts, so
a tick costs no Python rendering at all: what this process spends per second is Textual's
compositor and its terminal output, the least any Textual dashboard repainting that many lines
pays.  ``bench/tui_cost.py`` runs it beside ``sgmon demo`` in the same round.

    python bench/textual_floor.py [--changed 45]     (run inside a terminal or tmux)
"""

from __future__ import annotations

import argparse
import itertools
import random
import time

from rich.segment import Segment
from rich.style import Style
from textual.app import App, ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

from sgmon.tui.driver import QuietLinuxDriver

HEIGHTS = (2, 6, 5, 7, 6, 4, 6, 8, 7, 3, 4)
"""Lines of each panel, as the demo's panes show them at 160x48."""
WIDTH = 76
COLOURS = ("green", "yellow", "red", "bright_black", "cyan", "default")


def strip(rng: random.Random) -> Strip:
    """One line of coloured numbers, a style change every 8 cells."""
    segments = []
    for _ in range(WIDTH // 8):
        text = f"{rng.uniform(0, 9999):8.1f}"
        segments.append(Segment(text, Style(color=rng.choice(COLOURS), bold=rng.random() < 0.1)))
    return Strip(Segment.adjust_line_length(segments, WIDTH), WIDTH)


class Lines(Widget):
    """A panel drawn through the line API, as sgmon's panels are."""

    DEFAULT_CSS = "Lines { height: auto; }"

    def __init__(self, pool: list[Strip], height: int) -> None:
        super().__init__()
        self.pool = pool
        self.shown = pool[:height]
        self.styles.height = height

    def render_line(self, y: int) -> Strip:
        return self.shown[y] if y < len(self.shown) else Strip.blank(self.size.width)

    def change(self, ys: list[int], step: int) -> None:
        """New strips on lines ``ys``; only those lines are repainted."""
        for y in ys:
            self.shown[y] = self.pool[(step * 7 + y) % len(self.pool)]
        self.refresh(*(Region(0, y, self.size.width, 1) for y in ys))


class Floor(App[None]):
    """Two panes of panels, ``changed`` lines replaced each second."""

    CSS = """
    VerticalScroll { width: 1fr; border: round $panel; padding: 0 1; visibility: visible; }
    Horizontal { visibility: hidden; }
    """
    """The container of the panes is not composited, as sgmon's are not (sgmon.tcss)."""

    def __init__(self, changed: int) -> None:
        # sgmon's own driver, whose input thread sleeps while no key comes: Textual's looks ten
        # times a second (0.13-0.17 % of a core), which sgmon does not pay and a floor must not
        super().__init__(driver_class=QuietLinuxDriver)
        rng = random.Random(1)
        self.pool = [strip(rng) for _ in range(400)]
        self.changed = changed
        self.step = 0

    def compose(self) -> ComposeResult:
        yield Static("LIVE 00:00:00  floor", id="header")
        with Horizontal():
            for side in ("PRIMARY", "STANDBY"):
                with VerticalScroll() as pane:
                    pane.border_title = side
                    for h in HEIGHTS:
                        yield Lines(self.pool, h)

    def on_mount(self) -> None:
        self.set_interval(1.0, self.tick)

    def tick(self) -> None:
        """One second: the header's clock and ``changed`` lines spread over both panes."""
        self.step += 1
        self.query_one("#header", Static).update(f"LIVE {time.strftime('%H:%M:%S')}  floor")
        panels = list(self.query(Lines))
        slots = [(p, y) for p in panels for y in range(len(p.shown))]
        every = max(1, len(slots) // max(1, self.changed))
        chosen = slots[self.step % 3 :: every][: self.changed]
        for panel, group in itertools.groupby(chosen, key=lambda s: s[0]):
            panel.change([y for _, y in group], self.step)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--changed", type=int, default=45, help="lines changed per second")
    Floor(ap.parse_args().changed).run()


if __name__ == "__main__":
    main()
