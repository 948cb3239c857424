"""Monitor and History: ordered fan-out, failing sinks isolated, cursor lookups, source building."""

from __future__ import annotations

import enum
import gc
import sys

from kits.listsource import ListSource, frame

from sgmon import model
from sgmon.config import Config, parse_config
from sgmon.hosts.build import make_collectors
from sgmon.model import CollectorResult, Frame, Status
from sgmon.monitor import History, Monitor
from sgmon.sim import SimPair


def test_frames_reach_sinks_in_order_and_a_failing_sink_is_dropped(capsys) -> None:
    a = ListSource("a", [frame("a", t, t) for t in range(1, 6)])
    b = ListSource("b", [frame("b", t, 10 * t) for t in range(1, 4)])
    seen: list[tuple[str, float]] = []

    def bad_sink(f: Frame, _) -> None:
        raise OSError("disk full")

    mon = Monitor([a, b], sinks=[bad_sink, lambda f, _: seen.append((f.host, f.time))])
    mon.start()
    assert mon.wait(5)
    mon.stop()
    assert [t for h, t in seen if h == "a"] == [1, 2, 3, 4, 5]
    assert [t for h, t in seen if h == "b"] == [1, 2, 3]
    assert "disabled: disk full" in capsys.readouterr().err
    assert a.closed and b.closed
    assert mon.history.latest("a").value("c", "all", "x") == 5


def test_history_is_bounded_and_the_cursor_finds_the_frame_at_a_time() -> None:
    h = History(size=3)
    for t in range(1, 6):
        h.add(frame("p", float(t), t * 2.0))
    assert [f.time for f in h.frames("p")] == [3.0, 4.0, 5.0]
    assert h.at("p", 4.5).time == 4.0
    assert h.at("p", 2.0) is None
    assert h.series("p", "c", "all", "x", n=2) == [(4.0, 8.0), (5.0, 10.0)]


def test_collectors_follow_the_config() -> None:
    cfg = parse_config({"collectors": {"tcp": {"enabled": False}}})
    names = [c.name for c in make_collectors(cfg, None)]
    assert "tcp" not in names and "cpu" in names
    assert not any(n.startswith("oracle_") for n in names)  # no database configured
    assert [c.name for c in make_collectors(Config(), None)][:1] == ["cpu"]


def test_older_frames_are_packed_and_read_the_same() -> None:
    """The history packs a frame's rows once newer ones are in: every reader (values, the
    JSON form, iteration) sees the same content, and the newest frames stay plain dicts."""
    from sgmon.model import PackedRow

    def made(t: float) -> Frame:
        rows = {
            "sda": {"r_s": t, "ios": 3, "name": "sda", "hist": [[1.0, 3], [None, 0]], "x": [1]},
            "sdb": {"r_s": None, "w_await": 0.0},
        }
        return Frame("h", t, int(t), 1.0, {"disk": CollectorResult(Status.OK, rows)})

    history = History(size=10)
    frames = [made(float(t)) for t in range(5)]
    want = [f.to_dict() for f in frames]
    for f in frames:
        history.add(f)
    kept = history.frames("h")
    assert [f.to_dict() for f in kept] == want
    assert isinstance(kept[0].rows("disk")["sda"], PackedRow)
    assert all(isinstance(r, dict) for f in kept[-2:] for r in f.rows("disk").values())
    old = kept[1].rows("disk")
    assert old["sda"]["r_s"] == 1.0 and old["sda"].get("missing", 7) == 7
    assert dict(old["sdb"]) == {"r_s": None, "w_await": 0.0} and "w_await" in old["sdb"]
    assert kept[1].value("disk", "sda", "hist") == [[1.0, 3], [None, 0]]
    assert [type(v) for v in old["sda"].values()] == [float, int, str, list, list]
    assert old["sda"]["x"] == [1] and "sdc" not in old and old.get("sdc") is None


def footprint(frames: list[Frame]) -> int:
    """Bytes of every object the frames hold (each counted once; classes and enum members,
    which every frame shares with the rest of the program, not at all)."""
    seen: set[int] = set()
    todo: list[object] = list(frames)
    total = 0
    while todo:
        o = todo.pop()
        if id(o) in seen or isinstance(o, type | enum.Enum):
            continue
        seen.add(id(o))
        total += sys.getsizeof(o)
        todo.extend(gc.get_referents(o))
    return total


def test_a_full_history_holds_its_frames_in_a_fraction_of_their_memory() -> None:
    """The demo's frames, once a history has packed them, take under half of what they took
    fresh (35 %; a tuple per row, with its floats as objects of their own, took 77 %)."""
    frames = demo_frames(150)
    fresh = footprint(demo_frames(150))
    history = History(size=300)
    for f in frames:
        history.add(f)
    kept = [f for h in history.hosts() for f in history.frames(h)]
    assert len(kept) == 300
    assert footprint(kept) < 0.5 * fresh


def demo_frames(ticks: int) -> list[Frame]:
    """The frames of both hosts of the demo's pair over ``ticks`` ticks (the same each call)."""
    pair = SimPair("rto-stall", seed=1, start=1_800_000_000.0, onset=20)
    try:
        return [f for _ in range(ticks) for f in pair.step()]
    finally:
        pair.close()


def test_packed_rows_of_instances_that_come_and_go_do_not_stay() -> None:
    """Each process or socket that appears makes rows of a new shape; a shape goes with the
    last frame that has it, so a history of 5 frames keeps a handful, not one per instance."""
    history = History(size=5)
    for t in range(200):
        rows = {f"pid-{t}": {"cpu": float(t), "name": "ora_lgwr"}, "all": {"cpu": 1.0}}
        history.add(Frame("h", float(t), t, 1.0, {"procs": CollectorResult(Status.OK, rows)}))
    gc.collect()
    ours = [k for k in list(model._SHAPES.keys()) if str(k[0]).startswith("pid-")]
    assert 0 < len(ours) <= 5
