"""The command palette (ctrl+p), hardened against keys typed ahead."""

from __future__ import annotations

import contextlib
from typing import Any

from textual.await_complete import AwaitComplete
from textual.command import CommandPalette
from textual.css.query import NoMatches


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
