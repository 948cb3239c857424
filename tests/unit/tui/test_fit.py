"""Labels fit with an ellipsis that keeps them apart; panes give their lines to the evidence."""

from __future__ import annotations

from sgmon.tui.fit import fit
from sgmon.tui.layout import pane_hosts
from sgmon.tui.pane import allot


def test_labels_are_cut_with_an_ellipsis_and_stay_apart() -> None:
    assert fit("Redo Transport MISC", 18) == "Redo Transport MI…"
    assert fit("log file sync", 18) == "log file sync"
    cut = [fit(d, 6, "middle") for d in ("nvme0n1", "nvme1n1")]
    assert cut == ["nv…0n1", "nv…1n1"]
    assert all(len(c) == 6 for c in cut)
    assert fit("abc", 1) == "…" and fit("abc", 0) == ""


def test_cited_panels_get_their_lines_first_and_the_rest_fold() -> None:
    sizes = [4, 8, 7, 13, 6]
    assert allot(sizes, range(5), 100) == sizes  # room for all: all of every panel
    # one line short of the cited panel (index 3): its first 12, and one names the folded rest
    assert allot(sizes, [3, 0, 1, 2, 4], 13) == [0, 0, 0, 12, 0]
    given = allot(sizes, [3, 0, 1, 2, 4], 19)
    # 13 + 4 left one line blank while panel 1 was folded: it takes that line and two more
    assert given == [3, 3, 0, 12, 0]
    assert allot(sizes, [1, 0], 5) == [0, 4, 0, 0, 0]  # a part, title first, of the cited one
    assert allot(sizes, [1, 0], 3) == [0, 0, 0, 0, 0]  # two lines would be a bare header


def test_the_panes_take_the_hosts_along_the_commit_path() -> None:
    path = ["prod", "stby_b", "stby_a", "stby_c"]
    assert pane_hosts(path, 2, None, "stby_a") == ["prod", "stby_b"]  # from the primary
    assert pane_hosts(path, 3, "stby_a", None) == ["stby_a", "stby_c", "prod"]  # `s`, wrapping
    assert pane_hosts(path, 1, None, "stby_c") == ["stby_c"]  # one pane: the top finding's host
    assert pane_hosts(path, 1, "stby_b", "stby_c") == ["stby_b"]  # unless `s` picked one
    assert pane_hosts(path, 1, "gone", "gone") == ["prod"]
    assert pane_hosts(path[:1], 2, None, None) == ["prod"]
