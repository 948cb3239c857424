"""The rtnetlink link reader: a dump read at learned offsets says what the attribute walk says,
and a message that comes back unchanged gives the same Link.  Reads this host's own links; no
root needed."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from operator import itemgetter

from sgmon.readers.netlink import attributes
from sgmon.readers.rtnl import Link, Rtnl


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
        rtnl._last = {}  # else an unchanged message would give its Link without reading
        again = {link.ifindex: link for link in rtnl.links()}
        assert all(at[0] is not bad for at in rtnl._layouts.values())
    finally:
        rtnl.close()
    assert {i: _stable(x) for i, x in again.items()} == {i: _stable(x) for i, x in fast.items()}
    assert all(_not_before(again[i], fast[i]) for i in fast)
    assert any(x.name == "lo" for x in again.values())


class _Replay:
    """Stands for the netlink socket: answers every dump with the recorded payloads."""

    def __init__(self, payloads: list[bytes]) -> None:
        self.payloads = payloads
        self.buf = bytearray()

    def send(self, _data: bytes) -> None:
        pass

    def messages(self) -> Iterator[tuple[int, int, int, int]]:
        self.buf = bytearray(b"".join(self.payloads))
        at = 0
        for payload in self.payloads:
            yield 16, 1, at, at + len(payload)  # RTM_NEWLINK
            at += len(payload)
        yield 3, 1, at, at  # NLMSG_DONE


def test_an_unchanged_message_gives_the_same_link_and_a_changed_one_is_read_again() -> None:
    """This host's link dump replayed: a message that comes back byte for byte gives the same
    Link object; one whose counter moved is read again, with the new count."""
    rtnl = Rtnl()
    try:
        payloads = []
        rtnl._nl.send(rtnl._req)
        for mtype, _seq, start, end in rtnl._nl.messages():
            if mtype == 3:
                break
            if mtype == 16:
                payloads.append(bytes(rtnl._nl.buf[start:end]))
    finally:
        rtnl.close()
    replay = _Replay(payloads)
    rtnl._nl = replay  # type: ignore[assignment]
    first = list(rtnl.links())
    assert [x.name for x in first] and all(a is b for a, b in zip(first, rtnl.links(), strict=True))
    lo = next(i for i, x in enumerate(first) if x.name == "lo")
    assert first[lo].stats is not None
    before = first[lo].stats[0]
    message = bytearray(payloads[lo])
    at = next(a for t, a, _ in attributes(message, 16, len(message)) if t == 23)  # IFLA_STATS64
    assert int.from_bytes(message[at : at + 8], "little") == before  # rx_packets
    message[at : at + 8] = (before + 5).to_bytes(8, "little")
    replay.payloads[lo] = bytes(message)
    again = list(rtnl.links())
    assert again[lo] is not first[lo] and again[lo].stats is not None
    assert again[lo].stats[0] == before + 5
    assert all(a is b for i, (a, b) in enumerate(zip(first, again, strict=True)) if i != lo)
