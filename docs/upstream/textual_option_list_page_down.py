"""Minimal reproduction for Textual (seen with 8.2.8): PageDown in an OptionList whose options were
added but not yet laid out raises ``KeyError: 0`` in ``OptionList._move_page``.

``_move_page`` reads ``self._index_to_line[self.highlighted or 0]``, a map built only when the list
is next laid out; until then it is empty.  The command palette meets it for real: Ctrl+P, then
PageDown about 10 ms later (a key typed ahead, or sent over a slow ssh link in one burst), ends
any Textual app that keeps the default command palette with this traceback::

    tmux new -d -s r 'python -m textual ... ; sleep 60'   # any app
    tmux send-keys -t r C-p; sleep 0.01; tmux send-keys -t r NPage

Run: ``python docs/upstream/textual_option_list_page_down.py``: the app exits with the traceback
(KeyError: 0) where a fixed Textual pages (or ignores the key) and exits cleanly.
"""

from textual.app import App, ComposeResult
from textual.widgets import OptionList


class Repro(App[None]):
    """An OptionList filled and paged in the same handler, before any layout."""

    def compose(self) -> ComposeResult:
        """One empty list."""
        yield OptionList()

    def on_mount(self) -> None:
        """Fill, highlight, page down: ``KeyError: 0``."""
        options = self.query_one(OptionList)
        options.add_options([f"option {i}" for i in range(50)])
        options.highlighted = 0
        options.action_page_down()
        self.exit()


if __name__ == "__main__":
    Repro().run(headless=True)
