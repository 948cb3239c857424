"""The simulated pair: deterministic under a seed, consistent frames, and each scenario's
signature (from its seed) present after the onset and absent before it."""

from __future__ import annotations

import math
import random
import re
import threading
from statistics import median

import pytest
from paths import DATA

from sgmon.hosts.sim import SimSource
from sgmon.model import Frame
from sgmon.sim import SCENARIOS, SimPair
from sgmon.sim.standin import MICRO_BOUNDS, MILLI_BOUNDS, Buckets

START = 1_800_000_000.0
ONSET = 15.0
STEPS = 45


def _run(scenario: str, seed: int = 1, steps: int = STEPS) -> list[tuple[Frame, Frame]]:
    p = SimPair(scenario, seed=seed, start=START, onset=ONSET)
    try:
        return [p.step() for _ in range(steps)]
    finally:
        p.close()


@pytest.fixture(scope="module")
def runs() -> dict[str, list[tuple[Frame, Frame]]]:
    return {name: _run(name) for name in SCENARIOS}


def _before(frames):
    return [f for f in frames if f[0].time - START <= ONSET]


def _after(frames):
    return [f for f in frames if f[0].time - START > ONSET + 5]


def _bucket(frame: Frame, event: str, lo: float, hi: float) -> int:
    """Waits of the interval in buckets with lo < bound <= hi (ms)."""
    hist = frame.value("oracle_waits", event, "hist") or []
    return sum(n for b, n in hist if lo < b <= hi)


def _strip(frames):
    out = []
    for pair in frames:
        for f in pair:
            d = f.to_dict()
            for c in d["collectors"].values():
                c["duration_ms"] = None
            out.append(d)
    return out


def test_same_seed_same_frames_other_seed_other_frames():
    a, b, c = _run("rto-stall", 5, 20), _run("rto-stall", 5, 20), _run("rto-stall", 6, 20)
    assert _strip(a) == _strip(b)
    assert _strip(a) != _strip(c)


@pytest.mark.parametrize("scenario", ["rac-thread-slow", "far-sync-slow"])
def test_the_layouts_with_more_hosts_are_deterministic_too(scenario: str):
    """The per-thread reception of an off-path standby and the far sync's frames depend on the
    seed alone: the same frames twice, every host's."""
    a, b = _run(scenario, 5, 25), _run(scenario, 5, 25)
    assert len(a[0]) == 4 if scenario == "rac-thread-slow" else len(a[0]) == 3
    assert _strip(a) == _strip(b)


def test_frames_are_complete_and_declared(runs):
    p = SimPair(start=START)
    try:
        for host, frame in zip(("primary", "standby"), runs["healthy"][-1], strict=True):
            assert frame.host == host and frame.role == host
            schema = p.schema(host)
            assert set(frame.collectors) == set(schema)
            for name, res in frame.collectors.items():
                assert res.status == "ok", (name, res.error)
                declared = {f.name for f in schema[name]}
                for inst, row in res.rows.items():
                    assert set(row) <= declared, (name, inst, set(row) - declared)
            Frame.from_json(frame.to_json())  # serialisable as is
    finally:
        p.close()
    primary, standby = runs["healthy"][0]
    assert primary.seq == 1 and primary.time == START + 1.0
    assert primary.value("oracle_waits", "log file sync", "waits") > 100  # primed: rates at once
    assert standby.value("oracle_dg", "db", "role") == "standby"
    assert primary.value("oracle_dg", "dest_2", "transmit_mode") == "SYNC"


def test_healthy_stays_healthy(runs):
    for primary, standby in runs["healthy"]:
        assert primary.value("oracle_waits", "log file sync", "p99") <= 8
        assert primary.value("tcp", "host", "timeouts") == 0
        assert standby.value("disk", "sdb", "util") < 90


def test_rto_stall_signature(runs):
    frames = runs["rto-stall"]
    for primary, _ in _before(frames):
        assert _bucket(primary, "log file sync", 128, 300) == 0
    after = _after(frames)
    sock = "10.0.1.1:40312>10.0.1.2:1521"
    assert sum(_bucket(p, "log file sync", 128, 300) for p, _ in after) > 100
    assert sum(_bucket(p, "SYNC Remote Write", 128, 300) for p, _ in after) >= len(after)
    assert sum(p.value("tcp", sock, "retransmits") for p, _ in after) >= len(after)
    assert all(p.value("tcp", sock, "rto") >= 200 for p, _ in after)
    # the standby's SRL writes stay fast: the time is on the network (seed 001)
    assert all(s.value("oracle_waits", "RFS write", "p99") <= 4 for _, s in after)
    # the trace reader's msgid split puts the stall on the network, not on RFS
    nets = [p.value("oracle_trace", "remote", "max_network") for p, _ in after]
    rfs = [p.value("oracle_trace", "remote", "max_rfs") for p, _ in after]
    assert max(n for n in nets if n is not None) >= 190
    assert max(r for r in rfs if r is not None) < 10
    slow = [e for p, _ in after for e in p.events if e.kind == "lgwr_slow_write"]
    assert slow and all(e.value >= 100 for e in slow)


def test_rto_stall_fixed_signature(runs):
    after = _after(runs["rto-stall-fixed"])
    sock = "10.0.1.1:40312>10.0.1.2:1521"
    assert sum(p.value("tcp", sock, "retransmits") for p, _ in after) >= len(after) // 2
    assert all(p.value("tcp", sock, "rto") <= 20 for p, _ in after)
    # the 128-256 ms outliers are gone: a loss burst's worst, a doubled 10 ms RTO behind
    # another, holds a commit under 128 ms
    assert sum(_bucket(p, "log file sync", 131.072, 1e9) for p, _ in after) == 0
    # a resend after rto_min 10 ms on seed 001's ~2.7 ms remote write: the 16-32 ms bucket
    assert sum(_bucket(p, "SYNC Remote Write", 8, 33) for p, _ in after) >= len(after) // 2


def test_standby_iops_cap_signature(runs):
    frames = runs["standby-iops-cap"]
    for _, standby in _before(frames):
        assert standby.value("disk", "sdb", "aqu_sz") < 2
    bursts = 0
    for primary, standby in _after(frames):
        d = standby.rows("disk")["sdb"]
        if d["util"] == 100:  # a second that holds part of a burst
            assert 40 <= d["aqu_sz"] <= 90
            assert d["w_await"] > 20 * d["svctm"]  # await >> svctm: queueing (seed 003)
        lfs = primary.value("oracle_waits", "log file sync", "p99")
        bursts += (
            (standby.value("oracle_waits", "RFS write", "max_bucket") or 64) >= 64
            and (
                lfs is None or lfs >= 64  # None: every commit of the second still waits
            )
            and d["util"] == 100
        )
        assert primary.value("oracle_redo", "db", "redo_size_lwd") > 0
        lfpw = primary.value("oracle_waits", "log file parallel write", "p90")
        assert lfpw is None or lfpw <= 8  # None: LGWR held all second by one remote write
    # fast between the bursts of recovery's reads, slow in them (seed 003): bursts and the calm
    # between them last about a second each (its 470 ms average needs commits that wait through
    # two slow SRL writes in a row), so most seconds hold part of a burst, not every one
    assert bursts >= len(_after(frames)) // 2, bursts
    # the msgid split puts the long remote writes on RFS (trace timestamps have 1 ms resolution)
    split = [p.rows("oracle_trace")["remote"] for p, _ in _after(frames)]
    assert max(r["max_rfs"] or 0 for r in split) >= 32
    assert max(r["max_network"] or 0 for r in split) <= 3


def test_log_switch_storm_signature(runs):
    frames = runs["log-switch-storm"]
    switches = lambda fs: sum(1 for p, _ in fs for e in p.events if e.kind == "log_switch")  # noqa: E731
    assert switches(_before(frames)) == 0
    after = _after(frames)
    assert switches(after) >= len(after) // 7
    assert sum(p.value("oracle_dg", "thread_1", "log_switches") or 0 for p, _ in after) >= 3
    assert max(p.value("oracle_waits", "SYNC Remote Write", "max_bucket") for p, _ in after) >= 16


def test_primary_cpu_starved_signature(runs):
    frames = runs["primary-cpu-starved"]
    for primary, _ in _after(frames):
        assert primary.value("cpu", "all", "idle") < 5
        assert primary.value("cpu", "all", "runq_sz") > 16
        assert primary.value("oracle_waits", "log file sync", "p90") >= 8
        assert primary.value("oracle_waits", "SYNC Remote Write", "p90") <= 4
        assert primary.value("oracle_waits", "log file parallel write", "p90") <= 4
    assert _before(frames)[-1][0].value("cpu", "all", "idle") > 30


def test_unknown_scenario_says_which_exist():
    with pytest.raises(ValueError, match="use one of healthy, rto-stall"):
        SimPair("nope")


def test_source_runs_faster_than_real_time_for_a_simulated_duration():
    src = SimSource("healthy", seed=2, interval=0.5, speed=200.0, duration=5.0)
    frames: list[Frame] = []
    try:
        src.run(frames.append, threading.Event())
    finally:
        src.close()
    assert [f.host for f in frames[:2]] == ["primary", "standby"]
    assert len(frames) == 2 * 10
    assert frames[-1].time - frames[0].time == pytest.approx(4.5)
    assert [h.name for h in src.hosts] == ["primary", "standby"]


def _far_ends(frames: tuple[Frame, ...]) -> dict[str, str]:
    """Each DG socket (``local>peer``) -> the host holding it the other way round."""
    held = {key: f.host for f in frames for key in f.rows("tcp") if ">" in key}
    out = {}
    for key, host in held.items():
        local, _, peer = key.partition(">")
        far = held.get(f"{peer}>{local}")
        if far is not None:
            out[f"{host} {key}"] = far
    return out


def test_every_socket_has_its_far_end_and_each_sender_its_own_rfs(runs):
    """One socket per real connection, seen from both ends (seed 003's primary ships SYNC to B
    and ASYNC to A over two 11.2 LNS sockets, B ships on to C), and on a RAC standby one RFS
    per primary instance, each with its own instance's writes."""
    frames = runs["cascade-iops-cap"][-1]
    ends = _far_ends(frames)
    by_host = {f.host: f for f in frames}
    owners = {k.split(" ", 1)[0]: [] for k in ends}
    for key, far in ends.items():
        host, sock = key.split(" ", 1)
        owners[host].append((by_host[host].rows("tcp")[sock]["process"], far))
    assert sorted(owners["primary"]) == [
        ("ora_lns1_PROD", "standby_b"),
        ("ora_lns2_PROD", "standby_a"),
    ]
    assert ("ora_arc2_STBY_B", "standby_c") in owners["standby_b"]
    assert all(
        len(f.rows("tcp")) - 1 == len([k for k in ends if k.startswith(f.host + " ")])
        for f in frames
    )
    node1, node2, standby = runs["rac-rto-stall"][-1]
    rfs = {k: r for k, r in standby.rows("procs").items() if k.startswith("RFS[")}
    assert len(rfs) == 2
    senders = {r["pid"]: r for r in standby.rows("tcp").values() if r.get("pid")}
    assert set(senders) == {r["pid"] for r in rfs.values()}
    nss = [f.rows("procs")["NSS2"]["vcsw"] for f in (node1, node2)]
    assert sorted(r["vcsw"] for r in rfs.values()) == sorted(nss)  # a wake per write received


def test_a_silent_link_hangs_commits_until_net_timeout_then_they_go_on() -> None:
    """standby-unreachable: no log file sync wait ends while LGWR waits out NET_TIMEOUT (30 s),
    then the hung ones end at once, up to 30 s long; after that commits run at their usual rate
    again, locally, with the destination in error."""
    p = SimPair("standby-unreachable", seed=2, start=START, onset=10.0)
    ticks = []
    try:
        while p.t < 55:
            primary, _standby = p.step()
            w = primary.rows("oracle_waits").get("log file sync", {})
            ticks.append(
                (
                    p.t,
                    w.get("waits") or 0,
                    w.get("avg"),
                    primary.value("oracle_dg", "dest_2", "status"),
                )
            )
    finally:
        p.close()
    before = [n for t, n, _, _ in ticks if t <= 10]
    hung = [n for t, n, _, _ in ticks if 12 <= t <= 39]
    end = next((t, n, avg) for t, n, avg, _ in ticks if t > 11 and n)
    after = [n for t, n, _, s in ticks if t >= end[0] + 2]
    assert min(before) > 500 and max(hung) == 0
    assert 39 <= end[0] <= 42 and end[1] >= 400 and end[2] >= 5000  # ms: the 30 s waits
    assert abs(median(after) - median(before)) < 0.2 * median(before)
    assert ticks[-1][3] == "ERROR"


def test_switchover_status_is_read_and_follows_a_failed_destination(runs):
    """V$DATABASE.SWITCHOVER_STATUS through the collector's own SQL on the stand-in: a healthy
    primary could switch over (TO STANDBY), its standby not by itself; once the destination
    errors, the primary says FAILED DESTINATION."""

    def status(frame: Frame) -> object:
        return frame.value("oracle_dg", "db", "switchover_status")

    frames = runs["transport-stopped"]
    primary, standby = _before(frames)[0]
    assert (status(primary), status(standby)) == ("TO STANDBY", "NOT ALLOWED")
    assert status(_after(frames)[-1][0]) == "FAILED DESTINATION"


@pytest.mark.parametrize("scenario", ["switchover", "failover"])
def test_the_traces_follow_the_primary_role(scenario: str, monkeypatch):
    """Every LGWR write traced as slow (and every remote write split): before the role change
    the old primary's LGWR and NSS write, after it the new primary's, read by its own
    oracle_trace collector."""
    from sgmon.sim import model

    monkeypatch.setattr(model, "SLOW_MS", 0.01)
    monkeypatch.setattr(model, "SPLIT_MS", 0.01)
    p = SimPair(scenario, seed=2, start=START, onset=10.0)
    try:
        slow: dict[str, list[float]] = {"site_a": [], "site_b": []}
        sizes = []
        while p.t < 45:
            for f in p.step():
                if f.host in slow and f.value("oracle_trace", "lgwr", "slow_writes"):
                    slow[f.host].append(p.t)
            sizes.append({h: w.paths["nss"].stat().st_size for h, w in p.writers.items()})
        opened = 10.0 + (20.0 if scenario == "failover" else 12.0)
        assert slow["site_a"] and max(slow["site_a"]) <= 11.0
        assert slow["site_b"] and min(slow["site_b"]) > opened
        assert sizes[5]["site_b"] == 0 and sizes[5]["site_a"] > 0
        assert sizes[-1]["site_a"] == sizes[11]["site_a"]  # the old primary's NSS is quiet
        # a failover's new primary has no standby left: its NSS has nothing to ship
        assert (sizes[-1]["site_b"] > 0) is (scenario == "switchover")
    finally:
        p.close()


def test_rac_lms_slow_traces_late_scn_acks_as_a_real_lgwr_does():
    """Node 2's late acks of node 1's commit SCNs: node 1's LGWR trace has the warning lines a
    12.2 RAC LG00 trace has (tests/data/traces), the collector counts them, and the finding cites
    them; node 2's own commits wait for no ack."""
    import re

    from sgmon.analysis import Analyzer

    shape = re.compile(r"Warning: log write broadcast wait time \d+ms \(SCN 0x[0-9a-f]+\)")
    real = DATA / "traces" / "XXXXXX_lg00_280164.trc"
    assert [ln for ln in real.read_text().splitlines() if "broadcast" in ln]
    assert all(shape.fullmatch(ln) for ln in real.read_text().splitlines() if "broadcast" in ln)
    p = SimPair("rac-lms-slow", seed=3, start=START, onset=10.0)
    a = Analyzer()
    waits = {"node1": 0, "node2": 0}
    cited = 0
    try:
        while p.t < 110:
            for f in p.step():
                a.feed(f)
                if f.host in waits:
                    waits[f.host] += f.value("oracle_trace", "lgwr", "broadcast_waits") or 0
            top = [x for x in a.state().findings if x.active and x.rule == "rac_broadcast"]
            cited += any(e.startswith("LGWR trace: ") for x in top for e in x.evidence)
        text = p.writers["node1"].paths["lgwr"].read_text().splitlines()
    finally:
        p.close()
    said = [ln for ln in text if "broadcast" in ln]
    assert said and all(shape.fullmatch(ln) for ln in said)
    assert waits["node1"] == len(said) and waits["node2"] == 0
    assert cited


def test_buckets_bin_kept_waits_as_one_by_one_and_refuse_bad_ones():
    """Buckets bins its kept waits in one go when read; that must give what binning each wait
    as it comes gives (the V$ rows of every simulated tick depend on it), at the bounds too."""
    rng = random.Random(7)
    bounds = [0.0, 0.5, 1.0, 511.99, 512.0, 999.9999999999999, 1000.0, 1023.999, 1024.0, 2048.0]
    waits = bounds + [rng.lognormvariate(6.0, 2.0) for _ in range(2000)]
    b, total, micro, milli = Buckets(), 0.0, {}, {}
    for n, us in enumerate(waits):
        b.add(us)
        if n % 700 == 0:
            assert b.waits == n + 1  # read midway: the rest is binned on the next read
        total += us
        for bins, x in ((micro, us), (milli, us / 1000.0)):
            bins[1 << int(x).bit_length()] = bins.get(1 << int(x).bit_length(), 0) + 1
    assert (b.waits, b.time_us, b.micro, b.milli) == (len(waits), total, micro, milli)
    for bounds, scale in ((MICRO_BOUNDS, 1.0), (MILLI_BOUNDS, 1000.0)):  # each bucket's first
        for k, least in enumerate(bounds[:-1]):
            assert int(least / scale).bit_length() == k + 1
            assert int(math.nextafter(least, 0.0) / scale).bit_length() == k
    for bad in (-1.0, float("nan"), float("inf")):
        refused = Buckets()
        refused.add_all([3.0, bad])
        with pytest.raises(ValueError, match="a wait of"):
            assert refused.micro is None


@pytest.mark.parametrize("scenario", ["healthy", "cascade-iops-cap"])
def test_no_wait_accumulator_keeps_its_waits_past_a_tick(scenario: str):
    """Waits are kept unbinned only until the tick's publish: an accumulator nobody publishes
    (an event of another version, LGWR-LNS on 19c) kept every wait it was given, about 16 kB a
    tick, for as long as the dashboard ran."""
    pair = SimPair(scenario, seed=1, start=1_800_000_000.0, onset=5)
    try:
        for _ in range(4):
            pair.step()
        models = [m for _, m in pair.nodes.values()] + list(pair.offpath.values())
        kept = {name: len(b._kept) for m in models for name, b in m.events.items() if b._kept}
        assert kept == {}
        assert any(b.waits for m in models for b in m.events.values())
    finally:
        pair.close()


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_scenario_descriptions_cite_sources_by_title(scenario: str):
    """`demo --list` is user text: a source is named by its public title, never by a label of
    ours ("the capped standby case", "seed 003", "issue 15")."""
    text = SCENARIOS[scenario]
    assert not re.search(r"\b\w+ case\b|\bseed \d|\bissue \d|\b00\d\b", text), text
