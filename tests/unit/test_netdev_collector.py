"""The netdev collector's memory across ticks, on links it is handed: an unchanged link keeps its
row and costs no arithmetic, and the remembered selection follows names that come and go.  No
root needed: the rtnetlink reader is replaced by a list of links."""

from __future__ import annotations

from collections.abc import Iterator

from collectors.netdev import NetdevCollector
from sgmon.readers.rtnl import Link


class _Links:
    """Stands for the rtnetlink reader: yields whatever links the test set last."""

    def __init__(self) -> None:
        self.now: list[Link] = []

    def links(self) -> Iterator[Link]:
        yield from self.now

    def close(self) -> None:
        pass


def _link(name: str, index: int, packets: int, changes: int = 1) -> Link:
    stats = [0] * 17
    stats[0] = packets  # RX_PACKETS
    stats[2] = packets * 1024  # RX_BYTES
    return Link(index, name, "up", changes, tuple(stats))


def _collector(options: dict) -> tuple[NetdevCollector, _Links]:
    c = NetdevCollector({"include": [], **options})
    fake = _Links()
    c._rtnl = fake  # type: ignore[assignment]
    return c, fake


def test_an_unchanged_link_keeps_its_row_and_gets_idle_figures_then_a_moved_one_its_rate() -> None:
    c, fake = _collector({"include": ["sgt*"]})
    idle = _link("sgt0", 7, 100)
    fake.now = [idle]
    first = c.sample()
    second = c.sample()
    assert second["sgt0"] is first["sgt0"]
    a = c.derive(first, second, 1.0)["sgt0"]
    b = c.derive(second, c.sample(), 1.0)["sgt0"]
    assert a == b
    assert a["rx_pkt"] == 0.0 and a["rx_kb"] == 0.0 and a["carrier_changes"] == 0
    assert a["operstate"] == "up" and a["util"] is None  # no speed in sysfs for sgt0
    b["rx_pkt"] = -1.0  # a frame's row is the caller's: the memory is not shared with it
    assert c.derive(second, c.sample(), 1.0)["sgt0"]["rx_pkt"] == 0.0
    third = c.sample()
    fake.now = [_link("sgt0", 7, 300, changes=3)]
    fourth = c.sample()
    moved = c.derive(third, fourth, 2.0)["sgt0"]
    assert moved["rx_pkt"] == 100.0 and moved["rx_kb"] == 100.0 and moved["carrier_changes"] == 2
    assert c.derive(fourth, fourth, 0.0)["sgt0"]["rx_pkt"] is None  # no time passed
    fake.now = [_link("sgt0", 8, 300, changes=3)]  # re-created: new ifindex, same counters
    gap = c.sample()
    assert c.derive(fourth, gap, 1.0)["sgt0"]["rx_pkt"] is None


def test_the_remembered_selection_follows_renamed_and_added_links() -> None:
    c, fake = _collector({"include": ["sgt*"], "exclude": ["sgt9"]})
    fake.now = [_link("sgt0", 7, 100), _link("other0", 8, 5)]
    assert set(c.sample()) == {"sgt0"}
    fake.now = [_link("wan0", 7, 100), _link("other0", 8, 5)]  # sgt0 renamed, same counters
    assert c.sample() == {}
    fake.now = [_link("wan0", 7, 100), _link("sgt9", 8, 5), _link("sgt1", 9, 0)]
    assert set(c.sample()) == {"sgt1"}
    fake.now = [_link("sgt0", 7, 100), _link("sgt9", 8, 5)]  # renamed back
    assert set(c.sample()) == {"sgt0"}


def test_rows_and_memories_follow_links_that_go_away() -> None:
    c, fake = _collector({"include": ["sgt*"]})
    fake.now = [_link(f"sgt{i}", 10 + i, 5) for i in range(3)]
    c.derive(None, c.sample(), 0.0)
    fake.now = []
    rows = c.sample()
    assert rows == {} and c.derive(None, rows, 1.0) == {}
    assert not c._rows and not c._speeds
