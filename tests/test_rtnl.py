"""The rtnetlink link reader: a dump read at learned offsets says what the attribute walk says.
Reads this host's own links; no root needed."""

from __future__ import annotations

import struct
from operator import itemgetter

from collectors.rtnl import Link, Rtnl


def _stable(link: Link) -> tuple:
    return link.ifindex, link.name, link.operstate, link.carrier_changes, len(link.stats or ())


def _not_before(later: Link, earlier: Link) -> bool:
    """Counters never go back between two dumps of the same interface."""
    assert later.stats is not None and earlier.stats is not None
    return all(b >= a for a, b in zip(earlier.stats, later.stats, strict=True))


def test_learned_layouts_read_what_the_walk_reads_and_a_wrong_one_is_walked_again() -> None:
    rtnl = Rtnl()
    try:
        walked = {link.ifindex: link for link in rtnl.links()}  # each layout walked and learned
        assert rtnl._layouts and len(rtnl._layouts) == len(walked)
        fast = {link.ifindex: link for link in rtnl.links()}
        assert {i: _stable(x) for i, x in fast.items()} == {
            i: _stable(x) for i, x in walked.items()
        }
        assert all(_not_before(fast[i], walked[i]) for i in walked)
        # a learned layout whose attribute types do not check out is walked and learned again
        bad = (struct.Struct("=4H"), itemgetter(0, 1, 2, 3))
        rtnl._layouts = dict.fromkeys(rtnl._layouts, (bad, 0, 0))
        again = {link.ifindex: link for link in rtnl.links()}
        assert all(at[0] is not bad for at in rtnl._layouts.values())
    finally:
        rtnl.close()
    assert {i: _stable(x) for i, x in again.items()} == {i: _stable(x) for i, x in fast.items()}
    assert all(_not_before(again[i], fast[i]) for i in fast)
    assert any(x.name == "lo" for x in again.values())
