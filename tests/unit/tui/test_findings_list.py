"""The findings list on its own, driven by keys and clicks through Textual's Pilot.

The list is sgmon's own line-API widget: these check what a user does with it (pick, expand,
page, click) and that a tick which moves only one finding's numbers repaints only that one.
"""

from __future__ import annotations

from types import SimpleNamespace

from textual.app import App, ComposeResult

from sgmon.tui.palette import Palette
from sgmon.tui.panels.findings import FindingsPanel
from themes import load_themes

EVIDENCE = [f"item {i} with a few words of evidence" for i in range(8)]


def finding(key: str, title: str, evidence: list[str] = EVIDENCE) -> SimpleNamespace:
    return SimpleNamespace(
        key=key, severity="warn", host="primary", title=title, evidence=evidence, end=None
    )


FOUR = [finding(k, f"finding {k} title") for k in "abcd"]


class OneList(App[None]):
    """The findings list alone, 60 columns wide, 4 lines inside its border, focused, listing
    ``FOUR``."""

    CSS = "FindingsPanel { height: 6; width: 60; border: round; }"

    def __init__(self) -> None:
        super().__init__()
        self.chosen: list[str | None] = []
        spec = load_themes()["sgmon-dark"]
        self.palette = Palette.from_variables("sgmon-dark", spec["variables"])

    def compose(self) -> ComposeResult:
        yield FindingsPanel()

    def on_mount(self) -> None:
        self.panel = self.query_one(FindingsPanel)
        self.panel.show(FOUR, self.palette)
        self.panel.focus()

    def on_findings_panel_finding_chosen(self, event: FindingsPanel.FindingChosen) -> None:
        self.chosen.append(event.key)


async def test_arrows_pick_enter_expands_and_a_click_picks() -> None:
    app = OneList()
    async with app.run_test() as pilot:
        panel = app.panel
        await pilot.press("down")
        assert panel.highlighted_key() == "a" and app.chosen == ["a"]
        await pilot.press("down", "down")
        assert panel.highlighted_key() == "c" and app.chosen == ["a", "b", "c"]
        assert panel.scroll_offset.y > 0  # the third finding's two lines are below the fold
        await pilot.press("up")
        assert panel.highlighted_key() == "b"
        lines = panel.virtual_size.height
        await pilot.press("enter")  # every evidence item on its own line
        assert panel.virtual_size.height == lines + len(EVIDENCE) - 1
        await pilot.press("enter")
        assert panel.virtual_size.height == lines
        await pilot.press("pagedown")
        assert panel.highlighted_key() == "d"  # a page (4 lines) is two findings
        await pilot.press("pageup", "pageup")
        assert panel.highlighted_key() == "a"
        await pilot.click(FindingsPanel, offset=(3, 3))  # the border, then a's two lines
        assert panel.highlighted_key() == "b"
        await pilot.click(FindingsPanel, offset=(3, 3))  # a click on the picked one expands it
        assert "b" in panel.expanded


async def test_a_tick_rewraps_only_the_finding_whose_numbers_moved() -> None:
    app = OneList()
    async with app.run_test() as pilot:
        panel = app.panel
        await pilot.pause()
        # wrapped at the width left beside the scrollbar that eight lines in four bring
        width = panel.scrollable_content_region.width
        assert width < 58 and {s.cell_length for item in panel._items for s in item} == {width}
        before = [list(item) for item in panel._items]
        moved = [*FOUR[:2], finding("c", "finding c title, now 12.5 ms"), FOUR[3]]
        panel.show(moved, app.palette)
        after = panel._items
        pairs = zip(before, after, strict=True)
        same = [all(a is b for a, b in zip(x, y, strict=True)) for x, y in pairs]
        assert same == [True, True, False, True]
        assert "12.5 ms" in panel.texts[2]


async def test_the_pick_follows_its_finding_and_an_empty_list_says_why() -> None:
    app = OneList()
    async with app.run_test() as pilot:
        panel = app.panel
        await pilot.press("down", "down")
        panel.show([FOUR[3], FOUR[1]], app.palette)  # b moved up to second place
        assert panel.highlighted == 1 and panel.highlighted_key() == "b"
        panel.show([], app.palette, "no findings at this instant")
        await pilot.pause()
        assert panel.count == 0 and panel.highlighted is None
        assert panel.render_line(0).text.startswith("no findings at this instant")
        await pilot.press("down", "enter")  # nothing to pick, nothing fails
        assert panel.highlighted is None and not panel.expanded
