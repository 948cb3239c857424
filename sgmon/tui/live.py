"""The dashboard's data side, started before Textual is imported.

Importing Textual and building the screen take a few hundred milliseconds; the collectors take
their first rates in that time (the engine's first frame comes 0.2 s after its priming sample, as
top and htop show data at once), so the first full frame is ready when the screen is.  Nothing
here imports textual or rich: ``run_dashboard`` starts this, then imports the app.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from sgmon.config import Config
from sgmon.hosts import Source
from sgmon.hosts.replay import replaying
from sgmon.judgement import judge_for
from sgmon.model import Frame, Schema
from sgmon.monitor import Monitor
from sgmon.sinks.statefile import StatePublisher
from sgmon.tui.feed import Feed
from sgmon.verdicts import Judgement


class Live:
    """Monitor, judge, feed and status publisher of one dashboard."""

    def __init__(self, sources: Sequence[Source], config: Config, history: int = 900) -> None:
        judge = judge_for(config, sources, schema_of=self.schema)
        self.publisher = (  # `sgmon status` shows a live dashboard too, not a replay
            StatePublisher(name=config.name) if sources and not replaying(sources) else None
        )
        sinks: list = [self._arrived]
        if self.publisher is not None:
            sinks.append(self.publisher)
        self.monitor = Monitor(sources, sinks=sinks, history=history, judge=judge)
        self.feed = Feed(self.monitor.history, judge, keep=history)
        self.listener: Callable[[], None] | None = None
        """Called after each frame is kept (the app asks itself to redraw)."""
        self.started = False

    def schema(self, host: str) -> Schema:
        """A host's schema: its source's, or the one a test ingested its frames with."""
        schema = self.feed.schemas.get(host)
        return schema if schema is not None else self.monitor.schema(host)

    def _arrived(self, frame: Frame, judgement: Judgement) -> None:
        self.feed.add(frame, judgement)
        if self.listener is not None:
            self.listener()

    def start(self) -> None:
        """Start collecting (once)."""
        if not self.started:
            self.started = True
            for source in self.monitor.sources:  # a screen wants its first figures at once
                soon = getattr(source, "show_soon", None)
                if soon is not None:
                    soon()
            self.monitor.start()

    def stop(self) -> None:
        """Stop the sources and withdraw the status line's state."""
        self.monitor.stop(timeout=1.0)
        if self.publisher is not None:
            self.publisher.close()


def run_dashboard(
    sources: list[Source], config: Config | None = None, title: str = "sgmon", notice: str = ""
) -> int:
    """Run the dashboard until the user quits; the exit code for the command.  ``notice`` is
    shown once the screen is up (a missing config: where sgmon looked, what to add)."""
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        from sgmon.errors import UsageError

        for source in sources:
            source.close()
        raise UsageError(
            "the dashboard needs a terminal; for headless use try `sgmon record` or `sgmon status`"
        )
    config = config or Config()
    live = Live(sources, config)
    live.start()  # the first frames are collected while Textual loads
    from sgmon.tui.app import SgmonApp

    app = SgmonApp(sources, config, title, live=live, notice=notice)
    app.run()
    return app.return_code or 0
