"""The disk collector's device selection, option errors and counter edge cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.disk import FIELDS, DiskCollector, iostat_row, parse_diskstats
from sgmon.collector import ConfigError

LINE = "   7       0 loop0 {} 0 {} {} {} 0 {} {} 0 {} {} 0 0 0 0 0 0"


def _raw(rd: int, rd_ms: int, wr: int, wr_ms: int, io_ms: int, rq_ms: int) -> dict:
    text = LINE.format(rd, rd * 16, rd_ms, wr, wr * 8, wr_ms, io_ms, rq_ms)
    return parse_diskstats(text)["loop0"]


def test_unknown_device_in_include_is_one_line_naming_the_devices() -> None:
    with open("/proc/diskstats") as f:
        some = next(iter(parse_diskstats(f.read())))
    with pytest.raises(ConfigError) as e:
        DiskCollector({"include": ["nosuchdisk9"]})
    msg = str(e.value)
    assert "\n" not in msg and "nosuchdisk9" in msg and some in msg
    with pytest.raises(ConfigError, match="no block device"):
        DiskCollector({"pinned": ["nosuchdisk9"]})
    DiskCollector({"include": ["nosuch*"]})  # a glob may match devices that come later


@pytest.mark.parametrize(
    "opts", [{"include": 5}, {"exclude": [1, 2]}, {"partitions": "yes"}]
)  # fmt: skip
def test_bad_option_types_are_config_errors(opts: dict) -> None:
    with pytest.raises(ConfigError, match=r"collectors\.disk"):
        DiskCollector(opts)


def test_iostat_formulas_and_32_bit_wrap() -> None:
    before = _raw(rd=100, rd_ms=2**32 - 500, wr=1000, wr_ms=4000, io_ms=2**32 - 100, rq_ms=0)
    after = _raw(rd=300, rd_ms=500, wr=1400, wr_ms=8000, io_ms=1900, rq_ms=16000)
    row = iostat_row(before, after, 2.0)
    assert row["r_s"] == 100.0 and row["w_s"] == 200.0
    assert row["r_await"] == 1000 / 200  # 1000 ms over the wrap, 200 reads
    assert row["w_await"] == 4000 / 400
    assert row["aqu_sz"] == 16000 / 2000
    assert row["util"] == 100.0  # 2000 ms busy in 2000 ms
    assert row["rkb_s"] == 200 * 16 / 2 / 2 and row["rareq_sz"] == 8.0
    assert row["svctm"] == 2000 / 600


def test_idle_device_has_no_average_and_zero_rates() -> None:
    same = _raw(rd=5, rd_ms=7, wr=5, wr_ms=7, io_ms=9, rq_ms=9)
    row = iostat_row(same, same, 1.0)
    assert row["r_s"] == 0 and row["util"] == 0 and row["aqu_sz"] == 0
    assert row["r_await"] is None and row["w_await"] is None and row["svctm"] is None


def test_recreated_device_gives_no_values_for_one_interval() -> None:
    c = DiskCollector()
    old = {"loop0": _raw(rd=9000, rd_ms=100, wr=9000, wr_ms=100, io_ms=100, rq_ms=100)}
    new = {"loop0": _raw(rd=3, rd_ms=1, wr=3, wr_ms=1, io_ms=1, rq_ms=1)}
    assert set(c.derive(old, new, 1.0)["loop0"].values()) == {None}  # counters restarted
    assert set(c.derive({}, new, 1.0)["loop0"].values()) == {None}  # not there last tick
    later = {"loop0": _raw(rd=13, rd_ms=11, wr=3, wr_ms=1, io_ms=11, rq_ms=11)}
    assert c.derive(new, later, 1.0)["loop0"]["r_await"] == 1.0
    assert list(c.derive(new, later, 1.0)["loop0"]) == [f.name for f in FIELDS]


def _root_with(tmp_path: Path, lines: list[str]) -> Path:
    """A root holding just a /proc/diskstats of ``lines`` and an empty /sys/class/block."""
    (tmp_path / "proc").mkdir(exist_ok=True)
    (tmp_path / "sys/class/block").mkdir(parents=True, exist_ok=True)
    (tmp_path / "proc/diskstats").write_text("".join(f"{x}\n" for x in lines))
    return tmp_path


def _line(name: str, rd: int, rd_ms: int = 0) -> str:
    return f"   8       0 {name} {rd} 0 {rd * 8} {rd_ms} 0 0 0 0 0 {rd_ms} {rd_ms} 0 0 0 0 0 0"


def test_unchanged_line_gives_idle_figures_without_arithmetic_then_a_moved_counter_its_rate(
    tmp_path: Path,
) -> None:
    """A device whose line did not change keeps its row object and gets iostat's idle figures;
    once a counter moves, the figures are iostat_row's over the real interval."""
    root = _root_with(tmp_path, [_line("sda", 10, 5), _line("vdb", 0)])  # vdb: never did I/O
    c = DiskCollector({"root": str(root)})
    c.open()
    try:
        first = c.sample()
        assert set(first) == {"sda"}
        second = c.sample()
        assert second["sda"] is first["sda"]
        idle = c.derive(first, second, 1.0)["sda"]
        assert idle == iostat_row(first["sda"], second["sda"], 1.0)
        assert idle["r_s"] == 0 and idle["util"] == 0 and idle["r_await"] is None
        (root / "proc/diskstats").write_text(f"{_line('sda', 30, 45)}\n{_line('vdb', 0)}\n")
        third = c.sample()
        row = c.derive(second, third, 2.0)["sda"]
        assert row["r_s"] == 10.0 and row["r_await"] == 2.0 and row["util"] == 2.0
        assert c.derive(second, third, 0.0)["sda"]["r_s"] is None  # no time passed
    finally:
        c.close()


def test_selection_follows_a_device_that_appears_or_is_renamed_with_the_same_counters(
    tmp_path: Path,
) -> None:
    """Remembering verdicts by line must still judge a new name by the globs: the same
    counters under another name are another line."""
    root = _root_with(tmp_path, [_line("sda", 10)])
    c = DiskCollector({"root": str(root), "include": ["sd*"], "exclude": ["sdz"]})
    c.open()
    try:
        assert set(c.sample()) == {"sda"}
        (root / "proc/diskstats").write_text(f"{_line('sdz', 10)}\n{_line('vda', 10)}\n")
        assert c.sample() == {}  # sdz excluded, vda not included
        (root / "proc/diskstats").write_text(f"{_line('sdz', 10)}\n{_line('sdb', 10)}\n")
        assert set(c.sample()) == {"sdb"}
        (root / "proc/diskstats").write_text(f"{_line('vdb', 0)}\n")
        assert c.sample() == {}
        (root / "proc/diskstats").write_text(f"{_line('vdb', 1)}\n{_line('sdc', 0)}\n")
        assert c.sample() == {}  # sdc: included by glob but never did I/O
    finally:
        c.close()
