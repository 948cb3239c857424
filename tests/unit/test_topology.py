"""The topology from the database (issue 15, seed 003): the primary's V$ARCHIVE_DEST rows, read by
the real oracle_dg collector from the SQLite stand-in, mapped to the configured hosts; standbys
off the commit path are lag risks, never the cause of commit time; `config --check` prints it."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest
from kits.analysis import stepped

from collectors.oracle.dg import OracleDgCollector
from sgmon import analysis
from sgmon.analysis import Analyzer
from sgmon.analysis.context import Context
from sgmon.analysis.rules import RULES
from sgmon.analysis.rules.base import HostClaims
from sgmon.config import Config, DbConfig, HostConfig, parse_config
from sgmon.model import CollectorResult, Frame, Status
from sgmon.oracle.session import Session
from sgmon.sim import SimPair
from sgmon.sim.standin import StandIn
from sgmon.topology import build, disagreements, instance_text

START = 1_800_000_000.0


def _frame(host: str, db: StandIn, role: str) -> Frame:
    """One real oracle_dg sample of a stand-in, as the host's frame."""
    c = OracleDgCollector({"session": Session(role=role, connect=db.connect)})
    c.open()
    try:
        rows = c.derive(None, c.sample(), 1.0)
    finally:
        c.close()
    result = CollectorResult(Status.OK, rows=rows)
    return Frame(host, START, 1, 1.0, {"oracle_dg": result}, (), role)


def _standby(name: str) -> StandIn:
    return StandIn(role="PHYSICAL STANDBY", db_unique_name=name)


def test_sync_and_async_destinations_map_to_their_hosts(primary):
    primary.set_dest(2, db_unique_name="STBY_B", transmit_mode="SYNCHRONOUS", affirm="YES")
    primary.set_dest(3, db_unique_name="STBY_A", transmit_mode="ASYNCHRONOUS", affirm="NO")
    b, a = _standby("STBY_B"), _standby("STBY_A")
    try:
        frames = {
            "p": _frame("p", primary, "primary"),
            "b": _frame("b", b, "standby"),
            "a": _frame("a", a, "standby"),
        }
    finally:
        b.close()
        a.close()
    topo = build(Config(), frames)
    assert topo.primary == "p" and topo.why == "its database says PRIMARY"
    by = {d.inst: d for d in topo.dests}
    assert by["dest_2"].hosts == ("b",) and by["dest_2"].matched_by == "db_unique_name"
    assert by["dest_2"].commit_path and by["dest_2"].mode_text() == "SYNC AFFIRM"
    assert by["dest_3"].hosts == ("a",) and not by["dest_3"].commit_path
    assert topo.on_commit_path("b") and not topo.on_commit_path("a")
    assert topo.sync_standbys() == ["b"]
    assert "commit path: b; lag risk only: a" in topo.summary()
    assert not topo.cascaded("a") and not topo.cascaded("b")
    c = _standby("STBY_C")  # fed by b, no destination of the primary: its route is its own
    try:
        frames["c"] = _frame("c", c, "standby")
    finally:
        c.close()
    assert build(Config(), frames).cascaded("c")


def test_a_destination_is_matched_by_the_host_in_its_service(primary):
    descriptor = (
        "(DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(HOST=stby2.example.com)(PORT=1521))"
        "(CONNECT_DATA=(SERVICE_NAME=S2)))"
    )
    primary.set_dest(2, db_unique_name="NONE", destination=descriptor)
    primary.set_dest(3, db_unique_name="NONE", destination="stby3:1521/S3",
                     transmit_mode="PARALLELSYNC")  # fmt: skip
    config = parse_config(
        {
            "host": [
                {"name": "p", "role": "primary"},
                {"name": "s2", "role": "standby", "ssh": "oracle@stby2.example.com"},
                {"name": "s3", "role": "standby", "db": {"dsn": "stby3.example.com:1521/S3"}},
            ]
        }
    )
    topo = build(config, {"p": _frame("p", primary, "primary")})
    by = {d.inst: d for d in topo.dests}
    assert by["dest_2"].hosts == ("s2",) and by["dest_2"].matched_by == "host in service"
    assert by["dest_3"].hosts == ("s3",) and by["dest_3"].commit_path  # PARALLELSYNC waits too
    assert by["dest_2"].target == descriptor  # no DB_UNIQUE_NAME: the service names it


def test_unmatched_destination_is_unmonitored_with_its_lag(primary):
    primary.set_dest(2, db_unique_name="STBY")
    primary.set_dest(4, db_unique_name="FARAWAY", transmit_mode="ASYNCHRONOUS")
    for _ in range(7):
        primary.log_switch(1)
    primary.set_archived(2, 7)
    primary.set_archived(4, 4)
    s = _standby("STBY")
    try:
        frames = {"p": _frame("p", primary, "primary"), "s": _frame("s", s, "standby")}
    finally:
        s.close()
    topo = build(Config(), frames)
    lost = next(d for d in topo.dests if d.inst == "dest_4")
    assert lost.hosts == () and lost.logs_behind == 3
    assert next(d for d in topo.dests if d.inst == "dest_2").logs_behind == 0
    assert "unmonitored: dest_4 FARAWAY (ASYNC, 3 log(s) behind)" in topo.summary()
    assert any("-> unmonitored" in line for line in topo.lines())
    # an unmonitored ASYNC destination is no disagreement; a SYNC one hides the commit path
    config = parse_config({"host": [{"name": "p", "role": "primary"}]})
    assert disagreements(config, build(config, {"p": frames["p"]})) == [
        (
            "dest_2 STBY (SYNC AFFIRM) is on the commit path, but no configured host matches it: "
            "add its host, or its db_unique_name"
        )
    ]


def test_two_hosts_claiming_one_destination_give_one_line_naming_both(primary):
    primary.set_dest(2, db_unique_name="STBY")
    config = parse_config(
        {
            "host": [
                {"name": "p", "role": "primary"},
                {"name": "s1", "role": "standby", "db_unique_name": "stby"},
                {"name": "s2", "role": "standby", "db_unique_name": "STBY"},
            ]
        }
    )
    topo = build(config, {"p": _frame("p", primary, "primary")})
    claims = [n for n in topo.notes if "claimed by" in n]
    assert len(claims) == 1 and "s1 and s2" in claims[0] and claims[0].startswith("sgmon: ")
    assert topo.on_commit_path("s1") and topo.on_commit_path("s2")  # either may be the SYNC one


def test_off_and_standby_only_destinations_are_off_the_commit_path(primary):
    primary.set_dest(2, db_unique_name="S2", status="DEFERRED")
    primary.set_dest(3, db_unique_name="S3", valid_role="STANDBY_ROLE")
    hosts = [{"name": n, "db_unique_name": n.upper(), "role": "standby"} for n in ("s2", "s3")]
    config = parse_config({"host": hosts})
    topo = build(config, {"p": _frame("p", primary, "primary")})
    assert topo.sync_standbys() == []
    assert not topo.on_commit_path("s2") and not topo.on_commit_path("s3")


def test_no_primary_says_what_it_assumed_and_why(primary):
    primary.set_dest(2, db_unique_name="STBY")
    roleless = parse_config({"host": [{"name": "x"}, {"name": "y"}]})
    # no roles and no database: no primary, and it says commit-path analysis is off
    none = build(roleless, {})
    assert none.primary is None and "commit-path analysis is off" in none.why
    # the database's role decides
    f = _frame("y", primary, "")
    assert build(roleless, {"y": f}).primary == "y"
    # a host whose database says nothing of its role, but ships redo, is taken as the primary
    shipping = Frame("y", START, 1, 1.0, {"oracle_dg": CollectorResult(Status.OK, rows={
        "dest_2": dict(f.rows("oracle_dg")["dest_2"])})}, ())  # fmt: skip
    topo = build(roleless, {"y": shipping})
    assert topo.primary == "y" and "ships redo" in topo.why
    assert build(parse_config({"host": [{"name": "solo"}]}), {}).why.startswith("assumed")


def test_unmapped_destinations_keep_every_standby_on_the_commit_path():
    """An OS-only config (no database) or an old recording: sgmon did not know the topology,
    and every standby stays a possible cause, as before."""
    config = parse_config({"host": [{"name": "p", "role": "primary"},
                                    {"name": "s", "role": "standby"}]})  # fmt: skip
    topo = build(config, {})
    assert not topo.mapped and topo.on_commit_path("s")
    assert "assumed: no destination is mapped" in "\n".join(topo.lines())


def test_a_primary_without_sync_destinations_has_no_standby_on_the_commit_path(primary):
    """Destinations read but none matches a host: if none of them is SYNC, none waits."""
    primary.set_dest(2, db_unique_name="ELSEWHERE", transmit_mode="ASYNCHRONOUS")
    config = parse_config({"host": [{"name": "p", "role": "primary"},
                                    {"name": "s", "role": "standby"}]})  # fmt: skip
    topo = build(config, {"p": _frame("p", primary, "primary")})
    assert not topo.mapped and not topo.on_commit_path("s")
    assert "standby s: lag risk (the primary has no SYNC destination)" in topo.lines()
    primary.set_dest(2, db_unique_name="ELSEWHERE")  # SYNC again: s may be behind it
    assert build(config, {"p": _frame("p", primary, "primary")}).on_commit_path("s")


def test_config_disagreements_are_lines():
    config = parse_config(
        {
            "host": [
                {"name": "a", "role": "primary"},
                {"name": "b", "role": "far_sync", "db_unique_name": "B"},
            ]
        }
    )
    assert config.hosts[1].role == "standby" and config.hosts[1].far_sync
    db = StandIn(role="PRIMARY", db_unique_name="PROD")
    try:
        db.set_dest(2, db_unique_name="B", type="PHYSICAL")
        topo = build(config, {"b": _frame("b", db, "primary")})
    finally:
        db.close()
    said = disagreements(config, topo)
    assert any(s.startswith("a is configured primary, but b is") for s in said), said
    assert any(s.startswith("b is configured far_sync, but is the primary") for s in said), said


def _analyse(pair: SimPair, seconds: float) -> list:
    """Every tick's findings, in order."""
    return [f for a in stepped(pair, seconds) for f in a.state().findings]


def test_capped_async_standby_is_a_lag_risk_and_the_sync_one_the_cause():
    findings = _analyse(SimPair("cascade-iops-cap", seed=2, start=START, onset=20.0), 120)
    off = [f for f in findings if f.host in ("standby_a", "standby_c")]
    assert off, "the capped cascaded standby said nothing"
    for f in off:
        assert f.severity in ("info", "warn") and " <- " not in f.title, f.title
        assert f.rule == "lag_risk" or "lag risk" in f.title, f.title
    c_disk = [f for f in off if f.host == "standby_c" and "disk sdb" in f.title]
    # C is named with what feeds it: B's own ASYNC destination (its dest_2, read on B)
    assert c_disk and "lag risk, cascaded from standby_b (dest_2 ASYNC), not on the commit path" \
        in c_disk[0].title  # fmt: skip
    a_disk = [f for f in off if f.host == "standby_a" and "lag risk, not on the commit" in f.title]
    assert all("cascaded" not in f.title for f in a_disk)
    assert c_disk[0].seed == "003"
    causes = [f for f in findings if " <- " in f.title]
    assert causes and all(f.host in ("primary", "standby_b") for f in causes)
    assert any(f.rule == "standby_io" and f.host == "standby_b" for f in causes)
    advice = [f.title for f in findings if f.rule == "fast_sync"]  # seed 003: 11.2 has none
    assert not any("consider Fast Sync" in t for t in advice), advice[:1]
    fixes = [e for f in findings if f.rule == "standby_io" for e in f.evidence if "fix:" in e]
    assert fixes and all("Fast Sync (SYNC NOAFFIRM) keeps" not in e for e in fixes), fixes


def test_a_cap_on_the_async_standby_alone_leaves_commits_alone():
    """Issue 15's lab case in the simulation: only the ASYNC standby's volume is capped."""
    findings = _analyse(SimPair("async-iops-cap", seed=6, start=START, onset=20.0), 100)
    a = [f for f in findings if f.host == "standby_a"]
    assert any("disk sdb" in f.title and f.rule == "lag_risk" for f in a), [f.title for f in a]
    assert all(f.severity == "warn" and " <- " not in f.title for f in a)
    assert all(f.severity == "info" for f in findings if f.host != "standby_a")
    assert not [f for f in findings if f.rule == "commit_chain"]


def test_the_same_capped_standby_is_no_cause_once_its_destination_is_async():
    """standby-iops-cap with the destination turned ASYNC: the capped disk lines up with log
    file sync perfectly (the model still waits for it), and is still never named its cause."""
    pair = SimPair("standby-iops-cap", seed=4, start=START, onset=20.0)
    pair.dbs["primary"].set_dest(2, db_unique_name="STBY", transmit_mode="ASYNCHRONOUS",
                                 affirm="NO")  # fmt: skip
    findings = _analyse(pair, 90)
    stby = [f for f in findings if f.host == "standby"]
    assert stby and all(f.severity != "crit" and " <- " not in f.title for f in stby)
    assert all(f.rule == "lag_risk" for f in stby if "disk" in f.title)
    assert not [f for f in findings if " <- " in f.title and "standby" in f.title]


def test_config_check_reads_a_local_database_once(primary):
    """The live path: the real collector's SQL against a stand-in reached through the
    collector's connect option (no Oracle database runs here)."""
    from sgmon.commands.configcmd import _read, _session

    primary.set_dest(2, db_unique_name="STBY")
    config = Config(
        hosts=(
            HostConfig("p", "primary", db=DbConfig(dsn="p:1521/PROD")),
            HostConfig("s", "standby", ssh="oracle@s", db=DbConfig(dsn="s:1521/STBY")),
            HostConfig(
                "a",
                "standby",
                ssh="oracle@a",
                sgmon_path="sgmon",
                db_from="agent",
                db=DbConfig(dsn="a:1521/A"),
            ),
            HostConfig("q", "standby", db=DbConfig(dsn="q:1521/Q", password="prompt")),
        ),
        collectors={"oracle_dg": {"connect": primary.connect}},
    )
    # the logins that answered: "a" is read by its agent, "q" could not ask for its password
    sessions = {h.name: _session(config, h) for h in config.hosts if h.name in ("p", "s")}
    try:
        frames, unread = _read(config, sessions)
    finally:
        for s in sessions.values():
            s.close()
    assert set(frames) == {"p", "s"}  # an ssh host's database is read from here too
    assert [u.split(":")[0] for u in unread] == ["a", "q"]
    topo = build(config, frames)
    assert topo.primary == "p" and topo.dests[0].target == "STBY"


def test_cascade_is_deterministic_under_a_seed():
    def frames(seed: int) -> list[dict]:
        pair = SimPair("cascade-iops-cap", seed=seed, start=START, onset=5.0)
        out = []
        try:
            for _ in range(12):
                for f in pair.step():
                    d = f.to_dict()
                    for c in d["collectors"].values():
                        c["duration_ms"] = None
                    out.append(d)
        finally:
            pair.close()
        return out

    a = frames(7)
    assert [d["host"] for d in a[:4]] == ["primary", "standby_b", "standby_a", "standby_c"]
    assert a == frames(7) and a != frames(8)


def _renamed(frame: Frame, process: str) -> Frame:
    """The frame with its DG sockets owned by ``process`` (as ss -p would name it)."""
    from dataclasses import replace

    tcp = frame.collectors["tcp"]
    rows = {i: (dict(r, process=process) if i != "host" else r) for i, r in tcp.rows.items()}
    return replace(frame, collectors={**frame.collectors, "tcp": CollectorResult(tcp.status, rows)})


def _dest_mode(frame: Frame, mode: str) -> Frame:
    """The primary's frame with its destination 2 in ``mode`` (SYNCHRONOUS, ASYNCHRONOUS)."""
    from dataclasses import replace

    dg = frame.collectors["oracle_dg"]
    rows = {i: (dict(r, transmit_mode=mode) if i == "dest_2" else r) for i, r in dg.rows.items()}
    return replace(
        frame, collectors={**frame.collectors, "oracle_dg": CollectorResult(dg.status, rows)}
    )


@pytest.mark.parametrize(
    ("process", "mode", "why"),
    [
        ("ora_nss2_PROD", "SYNCHRONOUS", ""),
        ("ora_tt00_PROD", "SYNCHRONOUS", "ships ASYNC redo"),
        ("ora_lns1_PROD", "SYNCHRONOUS", ""),
        ("ora_lns1_PROD", "ASYNCHRONOUS", "ships to standby, which is not a SYNC destination"),
    ],
)
def test_retransmits_on_an_async_transport_socket_are_no_cause(process: str, mode: str, why: str):
    """rto-stall's lossy socket as NSS's (SYNC) is the cause; as a TTnn's (ASYNC redo, 12.1
    onward) it is a lag risk, however well it lines up.  11.2's LNSn ship SYNC and ASYNC alike,
    so there the owner cannot tell, the standby holding the same socket reversed can: the cause
    while that standby is a SYNC destination, a lag risk once the primary ships to it ASYNC."""
    pair = SimPair("rto-stall", seed=3, start=START, onset=10.0)
    a = Analyzer()
    found = []
    try:
        while pair.t < 60:
            primary, standby = pair.step()
            a.feed(_dest_mode(_renamed(primary, process), mode))
            a.feed(standby)
            found += [f for f in a.state().findings if f.host == "primary"]
    finally:
        pair.close()
    stalls = [f for f in found if "DG socket retransmits" in f.title]
    assert stalls
    assert any(" <- DG socket retransmits" in f.title for f in stalls) is (why == "")
    if why:
        assert all(f.rule == "lag_risk" and f.severity == "warn" for f in stalls)
        assert why in stalls[0].evidence[-1]


def test_rac_instances_of_one_database_are_all_primary_and_named(primary):
    """Two hosts whose databases say PRIMARY with one DB_UNIQUE_NAME are one RAC primary; a
    third with another name is a conflict, noted, and not taken."""
    node2 = StandIn(role="PRIMARY", db_unique_name="PROD")
    other = StandIn(role="PRIMARY", db_unique_name="ELSE")
    sb = _standby("STBY")
    try:
        primary.set_instance(instance_name="PROD1", instance_number=1, **{"THREAD#": 1})
        node2.set_instance(instance_name="PROD2", instance_number=2, **{"THREAD#": 2})
        primary.set_dest(2, db_unique_name="STBY")
        frames = {
            "node1": _frame("node1", primary, "primary"),
            "node2": _frame("node2", node2, "primary"),
            "sb": _frame("sb", sb, "standby"),
        }
        topo = build(Config(), frames)
        assert topo.primaries == ("node1", "node2") and topo.primary == "node1"
        assert topo.sync_standbys() == ["sb"] and not topo.notes
        assert topo.on_commit_path("node2") and "node1 + node2 (RAC)" in topo.lines()[0]
        assert instance_text(frames["node2"]) == "PROD2 (inst 2, thread 2)"
        frames["x"] = _frame("x", other, "primary")
        topo = build(Config(), frames)
        assert topo.primaries == ("node1", "node2")
        assert any("x all say primary" in n for n in topo.notes), topo.notes
        node2.set_instance(instance_name="PROD2", instance_number=2, **{"THREAD#": 1})
        frames["node2"] = _frame("node2", node2, "primary")
        clash = [n for n in build(Config(), frames).notes if "thread" in n]
        assert clash == [
            (
                "sgmon: node1 and node2 both report redo thread 1: two names for one instance, or "
                "a misread config; each RAC instance writes its own thread"
            )
        ]
    finally:
        for db in (node2, other, sb):
            db.close()


def test_the_only_host_is_no_primary_when_it_says_standby(primary):
    sb = _standby("STBY")
    try:
        topo = build(Config(), {"sb": _frame("sb", sb, "standby")})
        assert topo.primary is None and topo.primaries == ()
    finally:
        sb.close()


def _sick(f: Frame) -> Frame:
    """A standby's frame that breaks every per-host rule: a memory shortage, NIC drops, and
    DG sockets with a long round trip and a receive buffer far below 3 x BDP."""
    rows = {k: dict(r.rows) for k, r in f.collectors.items()}
    rows["paging"]["all"].update(memused=99.5, pgscank=800.0)
    rows["netdev"]["eth1"].update(rx_drop=12.0)
    for inst, sock in rows["tcp"].items():
        if inst != "host":
            sock.update(rtt=30.0, rcvbuf=100_000.0)
    return replace(f, collectors={k: CollectorResult(Status.OK, v) for k, v in rows.items()})


def test_a_per_host_rule_claims_the_same_from_either_instance(monkeypatch):
    """RAC evaluates each primary instance apart, but makes the per-host rules' claims once a
    tick, from a context without an instance: from each instance's own context (its primary,
    budget, chain and route) they must be the same, here about a standby that breaks them all
    while thread 1 falls behind (dg_state)."""
    claimed: Counter[tuple[str, str]] = Counter()
    evaluate = analysis.evaluate

    def checked(ctx: Context, hosts: HostClaims) -> list:
        for r in RULES:
            for h, view in ctx.hosts.items() if r.host_check is not None else ():
                mine = list(r.host_check(ctx, view))
                assert mine == hosts[r.name][h], (r.name, ctx.primary_name, h)
                claimed[r.name, h] += len(mine)
        return evaluate(ctx, hosts)

    monkeypatch.setattr(analysis, "evaluate", checked)
    pair = SimPair("rac-thread-lag", seed=1, start=START, onset=20)
    a = Analyzer()
    try:
        for _ in range(60):
            for f in pair.step():
                a.feed(_sick(f) if f.host == "standby" else f)
    finally:
        pair.close()
    assert a.topology is not None and a.topology.primaries == ("node1", "node2")
    per_host = {r.name for r in RULES if r.host_check is not None}
    assert per_host == {"memory", "nic", "dg_state", "network_latency", "socket_buffers"}
    assert {name for (name, h), n in claimed.items() if h == "standby" and n} == per_host


@pytest.mark.parametrize(
    ("status", "place", "ships"),
    [
        ("VALID", True, True),
        ("ERROR", True, False),  # the SYNC standby, failing: commits no longer wait for it
        ("INACTIVE", False, False),
        ("DEFERRED", False, False),
        ("DISABLED", False, False),
    ],
)
def test_a_sync_destinations_place_and_whether_it_ships_now_agree_on_each_status(
    primary, status, place, ships
):
    """One reading of a SYNC destination's STATUS for the topology, the commit budget's remote
    write and the Fast Sync advice (three readings disagreed on ERROR and INACTIVE)."""
    from sgmon.analysis.budget import remote_write
    from sgmon.topology import ships_sync

    primary.set_dest(2, db_unique_name="S2", transmit_mode="SYNCHRONOUS", affirm="YES")
    primary.set_dest(2, status=status)
    hosts = [{"name": "s2", "db_unique_name": "S2", "role": "standby"}]
    f = _frame("p", primary, "primary")
    topo = build(parse_config({"host": hosts}), {"p": f})
    assert any(d.commit_path for d in topo.dests) is place  # INACTIVE: not read as a destination
    assert ships_sync(f.rows("oracle_dg").get("dest_2", {})) is ships
    redo = {"db": {"redo_write_time": 8.0, "redo_writes": 4.0}}
    rows = {**f.collectors, "oracle_redo": CollectorResult(Status.OK, rows=redo)}
    with_redo = Frame("p", START, 1, 1.0, rows, (), "primary")
    assert (remote_write(with_redo) is not None) is ships  # Table 7's formula only when shipping
