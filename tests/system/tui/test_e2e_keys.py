"""Every key of the dashboard, pressed in a real tmux on `sgmon demo`, checked on the screen.

What top, htop and k9s users expect: `?` lists every key, Esc clears what was applied last, a
filtered panel says so (and says when nothing matches), zoom keeps the hosts and the time, and
+/- change the demo's sampling interval.
"""

from __future__ import annotations

import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tmuxkit import Tmux

from sgmon.tui.app import SgmonApp
from sgmon.tui.panels.findings import FindingsPanel

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Tmux]:
    """The rto-stall demo at 220x60, started in an empty directory (for `e`'s SVG)."""
    monkeypatch.chdir(tmp_path)
    t = Tmux("keys")
    t.start(f"{sys.executable} -m sgmon demo --speed 2 --onset 5s", 220, 60)
    try:
        t.wait_for(lambda s: re.search(r"busiest +usr", s) is not None, "the first frames")
        yield t
    finally:
        t.kill()


NAMES = {
    "question_mark": "?",
    "slash": "/",
    "escape": "esc",
    "left": "←",
    "up": "↑",
    "down": "↓",
    "pageup": "pgup",
    "pagedown": "pgdn",
    "right": "→",
    "left_square_bracket": "[",
    "right_square_bracket": "]",
    "plus": "+",
    "minus": "-",
}
"""How the help screen writes the keys Textual names otherwise."""


def test_help_lists_every_key(demo: Tmux) -> None:
    demo.keys("?")
    screen = demo.wait_for(lambda s: "sgmon keys" in s, "the help screen")
    listed = set()
    for line in screen.splitlines():
        if "│" in line:
            listed.update(line.split("│")[1][:17].split())  # the key column
    for binding in [*SgmonApp.BINDINGS, *FindingsPanel.BINDINGS]:
        for key in binding.key.split(","):  # type: ignore[union-attr]
            if key != "equals_sign":  # `=` is `+` without shift
                assert NAMES.get(key, key) in listed, f"`{key}` is not in the help:\n{screen}"
    demo.keys("Escape")  # its own keys close it (a letter no longer does)
    demo.wait_for(lambda s: "sgmon keys" not in s, "the help to close")


def test_filter_says_so_esc_clears_it_and_no_match_is_said(demo: Tmux) -> None:
    demo.keys("/")
    demo.wait_for(lambda s: "filter devices" in s, "the filter line")
    demo.keys("sdb", "Enter")
    screen = demo.wait_for(lambda s: "(filtered 'sdb')" in s, "the filtered note")
    disks = [line for line in screen.splitlines() if re.search(r"│\s+\*?sd[abc] ", line)]
    assert disks and all(" sdb " in line for line in disks), screen
    demo.keys("Escape")  # the filter line is closed: Esc clears the applied filter
    screen = demo.wait_for(lambda s: "(filtered" not in s, "Esc to clear the filter")
    assert re.search(r"│\s+\*?sda ", screen) and re.search(r"│\s+\*?sdc ", screen)

    demo.keys("/")
    demo.wait_for(lambda s: "filter devices" in s, "the filter line")
    demo.keys("nosuchdev", "Enter")
    screen = demo.wait_for(lambda s: "nothing matches 'nosuchdev'" in s, "the no-match note")
    assert "0 sockets" not in screen or "(filtered 'nosuchdev')" in screen
    demo.keys("Escape")
    demo.wait_for(lambda s: "nosuchdev" not in s, "Esc to clear the filter")


def test_zoom_keeps_the_hosts_and_the_time(demo: Tmux) -> None:
    demo.keys("z")  # nothing focused: the first panel, the commit budget
    screen = demo.wait_for(lambda s: "WAIT EVENTS" not in s, "the zoom")
    assert "COMMIT BUDGET" in screen
    header = screen.splitlines()[0]
    assert re.search(r"LIVE \d\d:\d\d:\d\d", header) and "primary" in header, header
    assert re.search(r"PRIMARY  primary", screen) and re.search(r"at \d\d:\d\d:\d\d", screen)
    demo.keys("Escape")
    demo.wait_for(lambda s: "WAIT EVENTS" in s and "STANDBY  standby" in s, "Esc to unzoom")


def test_plus_and_minus_change_the_demos_interval(demo: Tmux) -> None:
    assert "every 1s" in demo.screen()
    demo.keys("+")
    demo.wait_for(lambda s: "every 2s" in s and "interval 2s" in s, "a 2 s interval")
    demo.keys("-", "-")
    demo.wait_for(lambda s: "every 0.50s" in s, "a 0.5 s interval")


def _left_of(first: str, second: str, screen: str) -> bool:
    """Both on the screen, ``first`` before ``second`` (a screen read while the panes are laid
    out again may hold neither: read again)."""
    return first in screen and second in screen and screen.index(first) < screen.index(second)


def test_the_other_keys(demo: Tmux) -> None:
    screen = demo.screen()
    assert re.search(r"busiest +usr +sys", screen), "the CPU panel lists the busiest CPUs"
    demo.keys("s")  # the panes swap hosts
    demo.wait_for(lambda s: _left_of("STANDBY  standby", "PRIMARY  primary", s), "swap")
    demo.keys("t")
    demo.wait_for(lambda s: "theme sgmon-light" in s, "the next theme")
    demo.keys("e")
    demo.wait_for(lambda s: "saved " in s, "the SVG saved")
    assert len(list(Path.cwd().glob("sgmon-*.svg"))) == 1
    demo.keys("Space")
    demo.wait_for(lambda s: " PAUSED " in s, "pause")
    demo.keys("Home")
    demo.wait_for(lambda s: re.search(r"PAUSED \d\d:\d\d:\d\d -\d", s) is not None, "oldest")
    demo.keys("End")
    demo.wait_for(lambda s: " LIVE " in s, "live")
    demo.keys("f")  # the findings take the arrows: the panes' cursor does not move
    demo.keys("Down")
    screen = demo.screen()
    assert " LIVE " in screen
    demo.keys("z")  # the findings alone, under the header
    # the findings alone: neither pane (a capture taken while the terminal is half painted
    # may lack one pane's line without the zoom, so wait for both to go and the findings)
    screen = demo.wait_for(
        lambda s: "FINDINGS" in s and "PRIMARY  primary" not in s and "STANDBY  standby" not in s,
        "the findings zoomed",
    )
    assert re.search(r"LIVE \d\d:\d\d:\d\d", screen.splitlines()[0])
    demo.keys("Escape")
    demo.wait_for(lambda s: "PRIMARY  primary" in s, "Esc to unzoom the findings")
    demo.keys("C-p")
    demo.wait_for(lambda s: "Search for commands" in s, "the command palette")
    demo.keys("Escape")
    demo.wait_for(lambda s: "Search for commands" not in s, "the palette to close")
    demo.keys("q")
    demo.wait_for(lambda s: "PRIMARY" not in s, "the dashboard to quit", timeout=10)
