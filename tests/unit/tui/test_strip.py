"""The panes' order along the commit path and the strip of the hosts without a pane, without an
App: seed 003's four hosts listed in a scrambled config order, a RAC primary, a lag that stopped."""

from __future__ import annotations

from types import SimpleNamespace

from rich.text import Text

import themes
from sgmon.grading import Grader
from sgmon.hosts import HostInfo
from sgmon.model import CollectorResult, Frame, Status
from sgmon.topology import Dest, Topology
from sgmon.tui.palette import Palette
from sgmon.tui.strip import entry, order, place, render_strip
from sgmon.tui.view import PaneView
from sgmon.verdicts import Judgement

PALETTE = Palette.from_variables("sgmon-dark", themes.load_themes()["sgmon-dark"]["variables"])


def dest(inst: str, mode: str, host: str, status: str = "VALID") -> Dest:
    return Dest(inst, host.upper(), "", mode, "YES", status, "ALL_ROLES", "PHYSICAL", (host,))


SEED_003 = Topology(
    ("prod",),
    "its database says PRIMARY",
    (dest("dest_2", "SYNC", "stby_b"), dest("dest_3", "ASYNC", "stby_a")),
    ("stby_c", "stby_a", "stby_b"),
    places={"stby_b": "commit path", "stby_a": "lag risk", "stby_c": "lag risk"},
)
"""SYNC to B, ASYNC to A, C cascaded from B (no destination of the primary ships to it)."""


def hosts(*spec: str) -> list[HostInfo]:
    """``name:role`` each."""
    return [HostInfo(*s.split(":")) for s in spec]


def test_the_order_follows_the_commit_path_not_the_config() -> None:
    config = hosts("stby_c:standby", "stby_a:standby", "prod:primary", "stby_b:standby")
    assert order(config, SEED_003) == ["prod", "stby_b", "stby_a", "stby_c"]
    assert [place(h, SEED_003) for h in config] == ["cascaded", "ASYNC lag risk", "primary", "SYNC"]
    # before the analysis has a topology: the primary first, then the config's order
    assert order(config, None) == ["prod", "stby_c", "stby_a", "stby_b"]


def test_several_sync_standbys_go_in_destination_order() -> None:
    topo = Topology(
        ("prod",),
        "",
        (dest("dest_2", "SYNC", "far"), dest("dest_3", "SYNC", "near")),
        ("near", "far"),
        frozenset({"far"}),
        places={"near": "commit path", "far": "commit path"},
    )
    config = hosts("near:standby", "far:standby", "prod:primary")
    assert order(config, topo) == ["prod", "far", "near"]
    assert [place(h, topo) for h in config] == ["SYNC", "far sync", "primary"]


def test_every_primary_instance_goes_first() -> None:
    """A RAC primary: every host whose role is primary is left of the standbys, in the config's
    order, whichever of them the topology took as the one that ships."""
    topo = Topology(("prod2", "prod1"), "", (dest("dest_2", "SYNC", "stby"),), ("stby",),
                    places={"stby": "commit path"})  # fmt: skip
    config = hosts("stby:standby", "prod1:primary", "prod2:primary")
    assert order(config, topo) == ["prod1", "prod2", "stby"]
    assert order(config, None) == ["prod1", "prod2", "stby"]
    assert [place(h, topo) for h in config] == ["SYNC", "primary", "primary"]


def test_a_dead_primary_follows_the_one_the_databases_name() -> None:
    """After a failover the old primary's host still says its configured role, primary: the
    database that says PRIMARY takes the first pane."""
    topo = Topology(("site_b",), "", (), ())
    config = hosts("site_a:primary", "site_b:primary")
    assert order(config, topo) == ["site_b", "site_a"]


def test_unmapped_destinations_say_standby_not_sync() -> None:
    """Until a destination is mapped to a watched host every standby is assumed on the commit
    path; the strip does not claim it is SYNC."""
    topo = Topology(("prod",), "", (), ("stby",), places={"stby": "commit path"})
    assert place(HostInfo("stby", "standby"), topo) == "standby"


def test_a_cascaded_standby_says_what_feeds_it() -> None:
    """C is fed by B's own ASYNC destination, D by a far sync instance's (onward rows)."""
    onward = (
        Dest("dest_2", "STBY_C", "", "ASYNC", "NO", "VALID", "STANDBY_ROLE", "PHYSICAL", ("c",),
             source="b"),
        Dest("dest_3", "STBY_D", "", "ASYNC", "NO", "VALID", "ALL_ROLES", "PHYSICAL", ("d",),
             source="fs1"),
    )  # fmt: skip
    topo = Topology(
        ("prod",),
        "",
        (dest("dest_2", "SYNC", "b"), dest("dest_3", "SYNC", "fs1")),
        ("b", "fs1", "c", "d"),
        frozenset({"fs1"}),
        places={"b": "commit path", "fs1": "commit path", "c": "lag risk", "d": "lag risk"},
        onward=onward,
    )
    config = hosts("c:standby", "d:standby", "b:standby")
    assert [place(h, topo) for h in config] == [
        "cascaded from b (dest_2 ASYNC)",
        "behind far sync fs1 (dest_3 ASYNC)",
        "SYNC",
    ]
    b = _view("b", {"dest_2": {"status": "VALID", "gap_status": "NO GAP"}})
    c = _view("c", {"db": {"transport_lag": 2.0, "apply_lag": 2.0}})
    head, _ = entry(c, place(config[0], topo), b, ["dest_2"], None)
    assert head.plain == "c  cascaded from b (dest_2 ASYNC) · lag 2/2 s · dest_2 VALID"


def test_a_rac_standby_shows_its_threads_only_when_they_differ() -> None:
    rows = {"db": {"transport_lag": 14.0, "apply_lag": 14.0}}
    split = _view(
        "stby", {**rows, "thread_1": {"thread_lag": 14.0}, "thread_2": {"thread_lag": 0.0}}
    )
    head, _ = entry(split, "SYNC", primary=None, dests=[], finding=None)
    assert head.plain == "stby  SYNC · lag 14/14 s · lag t1 14 s t2 0 s"
    even = _view(
        "stby", {**rows, "thread_1": {"thread_lag": 14.0}, "thread_2": {"thread_lag": 14.0}}
    )
    head, _ = entry(even, "SYNC", primary=None, dests=[], finding=None)
    assert head.plain == "stby  SYNC · lag 14/14 s"


def _view(host: str, rows: dict) -> PaneView:
    f = Frame(host, 1.8e9, 1, 1.0, {"oracle_dg": CollectorResult(Status.OK, rows)})
    return PaneView(host, "", PALETTE, f, judgement=Judgement(f, Grader()), grader=Grader())


def test_an_entry_says_place_lag_destination_and_worst_finding() -> None:
    stopped = _view("stby_a", {"db": {"lag_unknown": 1, "apply_lag": 40.0, "datum_age": 400.0}})
    primary = _view("prod", {"dest_3": {"status": "ERROR", "gap_status": "RESOLVABLE GAP"}})
    finding = SimpleNamespace(severity="warn", title="lag risk, not on the commit path")
    head, note = entry(stopped, "ASYNC lag risk", primary, ["dest_3"], finding)
    assert head.plain == (
        "stby_a  ASYNC lag risk · lag unknown/40 s datum 400 s old · dest_3 ERROR RESOLVABLE GAP"
    )
    assert note == ("warn", "lag risk, not on the commit path")
    assert head.style == PALETTE.title + PALETTE.sev("crit")  # the worst: the ERROR

    quiet = _view("stby_b", {"db": {"transport_lag": 0.0, "apply_lag": 3.0}})
    head, note = entry(quiet, "SYNC", primary=None, dests=[], finding=None)
    assert head.plain == "stby_b  SYNC · lag 0/3 s" and note is None
    assert head.style == PALETTE.title


def test_entries_share_a_line_when_whole_and_the_rest_is_counted() -> None:
    entries = [
        (_text("a  SYNC"), None),
        (_text("b  ASYNC lag risk"), ("warn", "standby is behind by a lot of redo")),
        (_text("c  cascaded"), None),
        (_text("d  cascaded"), None),
    ]
    wide = [t.plain for t in render_strip(PALETTE, entries, 200)]
    assert wide == [
        (
            "a  SYNC │ b  ASYNC lag risk · WARN standby is behind by a lot of redo │ c  cascaded"
            " │ d  cascaded"
        )
    ]
    narrow = [t.plain for t in render_strip(PALETTE, entries, 40, most=2)]
    assert narrow == ["a  SYNC", "b  ASYNC lag risk · WARN s…  +2 more (s)"]
    assert all(len(line) <= 40 for line in narrow)


def _text(s: str) -> Text:
    return Text(s)
