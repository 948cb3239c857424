"""The command palette (ctrl+p): sgmon's own commands by name, each running its key's action, in
Textual's palette hardened against keys typed ahead."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from textual.await_complete import AwaitComplete
from textual.command import CommandPalette, DiscoveryHit, Hit, Hits, Provider
from textual.css.query import NoMatches

COMMANDS = (
    ("pause / resume live", "hold the view at the cursor, or back to live (space, p)", "pause"),
    ("go to a time", "put the cursor on 10:31:02, an ISO time, or -5m / +30s (g)", "goto"),
    ("switch host", "the next host along the commit path into the panes (s)", "switch_host(1)"),
    ("filter devices, interfaces, sockets", "show only those whose name contains (/)", "filter"),
    ("next theme", "cycle the themes (t)", "next_theme"),
    ("export the screen as SVG", "save the screen in the current directory (e)", "export"),
    ("findings", "go to the findings, again back to the panes (f)", "findings"),
    ("what a change would buy", "Fast Sync, ASYNC, rto_min 10 ms, faster disks (w)", "what_if"),
)
"""(name, what it does and its key, the action its key runs) of each of sgmon's commands."""


class SgmonCommands(Provider):
    """sgmon's commands for the palette: each runs the very action its key is bound to."""

    def _run(self, action: str) -> Callable[[], Awaitable[bool]]:
        """A callback the palette calls after it closes: the app runs the key's action."""
        return lambda: self.app.run_action(action)

    async def discover(self) -> Hits:
        """Every command, listed before anything is typed."""
        for name, help_text, action in COMMANDS:
            yield DiscoveryHit(name, self._run(action), help=help_text)

    async def search(self, query: str) -> Hits:
        """The commands whose name matches what is typed (Textual's fuzzy match)."""
        matcher = self.matcher(query)
        for name, help_text, action in COMMANDS:
            if (score := matcher.match(name)) > 0:
                yield Hit(score, matcher.highlight(name), self._run(action), name, help_text)


class SafeCommandPalette(CommandPalette):
    """Textual's command palette, hardened against keys typed ahead (Textual 8.2's races, each of
    which ended the dashboard with a traceback; docs/upstream/ reproduces the first):

    - PageUp/PageDown before its list is laid out read an empty line map (``KeyError: 0``): such
      a key is dropped, one a moment later pages as usual;
    - a key queued behind the one that closed it closed it again, popping the screen below
      (``ScreenStackError``): it closes once, and only while it is on top;
    - its search ran on after it closed and looked for its own removed list (``NoMatches``): the
      search stops when it closes, and a late watcher finds nothing to update.
    """

    def _action_command_list(self, action: str) -> None:
        try:
            super()._action_command_list(action)
        except KeyError:
            if action not in ("page_up", "page_down"):
                raise

    def dismiss(self, result: Any = None) -> AwaitComplete:
        """Close once, stopping the search first."""
        self._cancel_gather_commands()
        if self.app.screen is not self:
            return AwaitComplete.nothing()
        return super().dismiss(result)

    def _watch__list_visible(self) -> None:
        with contextlib.suppress(NoMatches):
            super()._watch__list_visible()

    async def _watch__show_busy(self) -> None:
        with contextlib.suppress(NoMatches):
            await super()._watch__show_busy()
