"""The findings: the analysis' ranked cross-host conclusions, with their evidence.

Moving the highlight to a finding posts ``FindingChosen``; the app then marks the series it
names in both host panes.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from sgmon.tui.fit import fit_words
from sgmon.tui.palette import Palette


def render_finding(f: Any, palette: Palette, width: int = 160, full: bool = False) -> Text:
    """Severity, host and title (wrapped whole), then the evidence: its first line cut after a
    whole word, or every item on its own wrapped line when ``full`` (Enter on the finding)."""
    sev = str(getattr(f, "severity", "info"))
    out = Text(f"{sev.upper():<4} ", style=palette.sev(sev))
    out.append(f"{getattr(f, 'host', '') or 'both'}: ", style=palette.muted)
    out.append(str(getattr(f, "title", "")))
    if getattr(f, "end", None) is not None:
        out.append(
            f"  (ended {time.strftime('%H:%M:%S', time.localtime(f.end))})", style=palette.muted
        )
    evidence = [str(e) for e in getattr(f, "evidence", []) or []]
    if not evidence:
        return out
    if full:
        for item in evidence:
            out.append("\n     " + item, style=palette.muted)
        return out
    more = "  (Enter: all)" if len(" · ".join(evidence)) > width - 6 else ""
    line = fit_words(" · ".join(evidence), max(20, width - 6 - len(more)))
    out.append("\n     " + line + more, style=palette.muted)
    return out


class FindingsPanel(OptionList):
    """The ranked findings at the cursor; highlight one to mark its series in every pane."""

    class FindingChosen(Message):
        """The highlighted finding changed (``key`` None: none)."""

        def __init__(self, key: str | None) -> None:
            super().__init__()
            self.key = key

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown: tuple = ((), None, None, 0, ())
        self._keys: list[str] = []
        self.expanded: set[str] = set()
        """Keys of the findings shown with all their evidence (Enter toggles)."""
        self._last: tuple[Sequence[Any], Palette | None, str] = ((), None, "")

    def show(self, findings: Sequence[Any], palette: Palette, note: str = "") -> None:
        """Show the findings, keeping the highlighted one where it still is.

        When the same findings are listed (their titles and evidence carry numbers that move
        every tick), the rows are rewritten in place: rebuilding the list relayouts the whole
        screen.
        """
        self._last = (findings, palette, note)
        width = self.content_region.width or 120
        rows = tuple((f.key, f.key in self.expanded) for f in findings)
        texts = [render_finding(f, palette, width, f.key in self.expanded) for f in findings]
        plain = tuple(t.plain for t in texts)
        if (rows, palette, note, width) == self._shown[:4]:
            for i, (old, new) in enumerate(zip(self._shown[4], plain, strict=True)):
                if old != new:
                    self.replace_option_prompt_at_index(i, texts[i])
            self._shown = (rows, palette, note, width, plain)
            return
        self._shown = (rows, palette, note, width, plain)
        keep = self.highlighted_key()
        self.clear_options()
        # A finding that ended and came back is listed twice under one key: ids must differ.
        self._keys = [f.key for f in findings]
        if not findings:
            self.add_option(Option(Text(note or "no findings", style=palette.muted), disabled=True))
            return
        self.add_options(texts)
        if keep in self._keys:
            self.highlighted = self._keys.index(keep)

    def highlighted_key(self) -> str | None:
        """Key of the highlighted finding, if any."""
        i = self.highlighted
        return self._keys[i] if i is not None and i < len(self._keys) else None

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Enter: show the finding's whole evidence, or fold it back to one line."""
        event.stop()
        key = self.highlighted_key()
        if key is None:
            return
        self.expanded ^= {key}
        findings, palette, note = self._last
        if palette is not None:
            self.show(findings, palette, note)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        """Tell the app which finding to mark."""
        event.stop()
        self.post_message(self.FindingChosen(self.highlighted_key()))
