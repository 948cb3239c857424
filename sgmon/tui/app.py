"""The sgmon dashboard: primary and standby side by side, one time cursor, findings ranked.

``SgmonApp`` lays the dashboard out on the terminal (``sgmon.tui.layout``) and runs it: what it
draws at the cursor is ``sgmon.tui.drawing``'s, its keys ``sgmon.tui.keys``'.
"""

from __future__ import annotations

import gc
from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Container
from textual.driver import Driver
from textual.events import Print, Resize
from textual.widgets import Footer, Input, Static

from sgmon.config import Config
from sgmon.hosts import Source
from sgmon.tui.keys import FILTER_HINT, Keys
from sgmon.tui.layout import (
    COMPACT_BELOW,
    MIN_SIZE,
    SIDE_FINDINGS_FROM,
    STACK_BELOW,
    pane_count,
)
from sgmon.tui.live import Live
from sgmon.tui.pane import HostPane

SETTLE_AFTER = 2.0
"""Seconds after start of ``_settle``: after the first frame, before anyone presses a key."""
NOTICE_FOR = 30.0
"""Seconds the notice (no config found) stays under the panes: long enough to read."""


class SgmonApp(Keys):
    """The dashboard over any sources (local, remote, simulated, replayed)."""

    CSS_PATH = "sgmon.tcss"
    TITLE = "sgmon"

    def __init__(
        self,
        sources: Sequence[Source] = (),
        config: Config | None = None,
        title: str = "sgmon",
        *,
        history: int = 900,
        measure_self: bool = True,
        live: Live | None = None,
        notice: str = "",
    ) -> None:
        config = config or Config()
        live = live or Live(sources, config, history)
        super().__init__(live, config, measure_self=measure_self)
        self.title = title
        self._notice = notice
        """Said once the screen is up, long enough to read (``run_dashboard``)."""
        self.theme = "sgmon-dark"

    def compose(self) -> ComposeResult:
        """Header, the host panes (more are added when there is room and hosts for them) and the
        strip of the hosts without one, the findings, the filter line and the footer."""
        yield self._header
        with Container(id="hosts"):
            with self._body:
                yield HostPane(id="pane-0")
                yield HostPane(id="pane-1")
            yield self._strip
            yield Static(id="notice")
        self._findings.border_title = "FINDINGS  (f)"
        yield self._findings
        yield Static(id="toosmall")
        yield Input(placeholder=FILTER_HINT, id="filter")
        yield Footer()

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver for this terminal; on Linux, one whose input thread sleeps while no
        key comes (``sgmon.tui.driver``)."""
        driver = super().get_driver_class()
        from textual.drivers.linux_driver import LinuxDriver

        if driver is LinuxDriver:
            from sgmon.tui.driver import QuietLinuxDriver

            return QuietLinuxDriver
        return driver

    def on_mount(self) -> None:
        """Start collecting; redraw once a second for liveness and the clock."""
        self._drawing = True
        self.begin_capture_print(self, stdout=False, stderr=True)
        self._layout(self.size.width, self.size.height)
        self.live.listener = self._arrived
        self.live.start()
        self.set_interval(1.0, self._tick)
        self.set_timer(SETTLE_AFTER, self._settle)
        self.redraw()
        if self._notice:
            self._show_notice()

    def _show_notice(self) -> None:
        """The notice goes under the panes, in the layout, for ``NOTICE_FOR`` seconds: a toast
        of its length covered the findings for that long at 80x24."""
        box = self.main.query_one("#notice", Static)
        box.update(Text.assemble(("sgmon.toml  ", "bold"), self._notice))
        box.display = True
        self.set_timer(NOTICE_FOR, lambda: setattr(box, "display", False))

    def on_print(self, event: Print) -> None:
        """A source or sink reported a problem on stderr (`sgmon: ...`): show it, don't lose it."""
        text = event.text.strip()
        if text:
            self.notify(text, severity="error", timeout=10)

    def on_unmount(self) -> None:
        """Stop the sources (their threads end at their next wait)."""
        self._drawing = False
        self.live.stop()

    def on_resize(self, event: Resize) -> None:
        """Side by side, stacked, one pane, or a message, by terminal size."""
        self._layout(event.size.width, event.size.height)

    def _layout(self, width: int, height: int) -> None:
        small = width < MIN_SIZE[0] or height < MIN_SIZE[1]
        panes, self._panes = self._panes, pane_count(width, height)
        screen = self.main
        screen.set_class(small, "-toosmall")
        screen.set_class(width < STACK_BELOW, "-stacked")
        screen.set_class(width < COMPACT_BELOW[0] or height < COMPACT_BELOW[1], "-compact")
        screen.set_class(width >= SIDE_FINDINGS_FROM, "-wide")
        for pane in self.main.query(HostPane):
            self.call_after_refresh(pane.catch_up)
        if small:
            self.main.query_one("#toosmall", Static).update(
                f"sgmon needs {MIN_SIZE[0]}x{MIN_SIZE[1]}, this terminal is {width}x{height}"
            )
        if panes != self._panes:  # hosts go into panes or the strip
            self.redraw()

    def _settle(self) -> None:
        """Collect the start's garbage, then freeze what is left out of later collections.

        Python's full collection walks every tracked object; 85,000 of them are the imports'
        and Textual's, alive as long as the app.  Walking them made each full collection stop
        the UI for 35-100 ms (a key pressed then waited as long).  Frozen once, after the first
        frame, they are not walked again.  Not repeated: a freeze also keeps whatever cyclic
        garbage later comes of the objects it froze (Textual's strips hold themselves in their
        caches), about 1,000 objects each time.
        """
        gc.collect()
        gc.freeze()
