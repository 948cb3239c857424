"""The what-if's parts against what they stand for: Oracle's buckets read as Oracle counts them,
the replay against the renewal formula of a commit that waits out a write in flight and then
its own, a stall holding only the sessions there are, and a window of garbage rows giving no
prediction rather than a wrong one.  (Predictions against the runs they predict:
tests/system/simulation/test_what_if.py.)"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import replace

from sgmon.analysis.whatif import Change, predict, timeouts
from sgmon.analysis.whatif.chain import Path, Remote, replay, sessions
from sgmon.analysis.whatif.changes import rto_min, standby_write
from sgmon.analysis.whatif.dist import Dist, binned, bucket_of, counts_of
from sgmon.analysis.whatif.measure import Measured, Wait, Window, measured, tick
from sgmon.buckets import exponent
from sgmon.contract import Histogram
from sgmon.events import LOCAL_WRITE, LOG_FILE_SYNC
from sgmon.fields import ORACLE_WAITS, TCP
from sgmon.model import CollectorResult, Frame, Status


def test_a_bucket_is_read_from_its_lower_to_its_upper_bound_on_a_log_scale() -> None:
    d = Dist({exponent(1.024): 10})  # Oracle's "<1ms": 512 to 1024 us
    assert math.isclose(d.at(0.0), 0.512)
    assert math.isclose(d.at(0.5), math.sqrt(0.512 * 1.024))
    assert d.at(0.999) < 1.024
    assert math.isclose(d.mean(), 1.024 / (2 * math.log(2)))  # log-uniform on [b/2, b)


def test_the_micro_and_milli_views_give_the_same_buckets_and_the_open_one_is_above() -> None:
    micro = Histogram(((0.512, 3.0), (1.024, 5.0), (2.048, 0.0), (None, 1.0)))
    milli = Histogram(((1.0, 5.0), (2.0, 0.0)))
    assert counts_of(micro) == Counter({9: 3, 10: 5, 12: 1})
    assert counts_of(milli) == Counter({10: 5})
    assert bucket_of(0.7) == exponent(1.024) and bucket_of(200.0) == exponent(262.144)


def test_samples_binned_as_the_database_would_count_them() -> None:
    d = binned([0.3, 0.6, 0.9, 150.0])
    assert d.counts == {exponent(0.512): 1, exponent(1.024): 2, exponent(262.144): 1}


def _one(ms: float) -> Dist:
    """A write of about ``ms`` (one bucket)."""
    return Dist({bucket_of(ms): 1})


def test_a_busy_lgwr_makes_a_commit_wait_the_residual_then_its_own_write() -> None:
    # LGWR always busy (commits arrive far faster than writes end): a commit waits for the
    # write in flight to end (its residual life, E[W^2] / 2E[W] for writes drawn independently)
    # and then for the next write, its own: E[lfs] = E[W^2] / 2E[W] + E[W]
    local = Dist({bucket_of(0.6): 3, bucket_of(3.0): 1})
    lfs, _ = replay(Path(local, None, rate=200_000.0), commits=200_000)
    w = [local.at(i / 20000) for i in range(20000)]
    ew, ew2 = statistics.fmean(w), statistics.fmean(x * x for x in w)
    assert math.isclose(statistics.fmean(lfs), ew2 / (2 * ew) + ew, rel_tol=0.05)


def test_an_idle_lgwr_makes_a_commit_wait_its_own_write_only() -> None:
    local = _one(0.8)
    lfs, done = replay(Path(local, None, rate=5.0), commits=3000)
    assert math.isclose(statistics.fmean(lfs), local.mean(), rel_tol=0.05)
    assert math.isclose(done, 5.0, rel_tol=0.1)


def test_the_write_phase_is_the_slower_of_local_and_remote_not_their_sum() -> None:
    remote = Remote(base=2.0, ack=_one(0.4))
    lfs, _ = replay(Path(_one(0.8), remote, rate=5.0), commits=3000)
    slower = 2.0 + _one(0.4).mean()
    assert math.isclose(statistics.fmean(lfs), slower, rel_tol=0.05)


def test_a_stall_holds_only_the_sessions_there_are() -> None:
    # every write waits out a 200 ms timeout: with 10 sessions, at most 10 commits wait in each
    remote = Remote(base=0.3, ack=None, loss=1.0, penalty=200.0)
    lfs, done = replay(Path(_one(0.5), remote, rate=2000.0, sessions=10), commits=2_000)
    assert min(lfs) >= 200.0
    assert 10 * 1000.0 / 200.5 * 0.9 <= done <= 10 * 1000.0 / 200.0  # 10 commits a write
    # the same with a timeout on one write in a hundred: the arrivals it held never committed
    lfs, done = replay(Path(_one(0.5), replace(remote, loss=0.01), rate=2000.0, sessions=10))
    assert any(x >= 100.0 for x in lfs) and done < 2000.0 * 0.9


def test_timeouts_fall_on_a_share_of_the_writes_so_more_writes_bring_more() -> None:
    """A tail loss is a chance a write: the faster path writes more often and meets more
    timeouts a second, each write as often as before."""
    remote = Remote(base=0.3, ack=None, loss=0.01, penalty=20.0)
    stalls = []
    for local in (0.5, 2.0):
        lfs, done = replay(Path(_one(local), remote, rate=3000.0), commits=30_000)
        stalls.append(sum(1 for x in lfs if x >= 16.0) / (len(lfs) / done))  # slow a second
    assert stalls[0] > 1.5 * stalls[1], stalls


def test_a_closed_loop_of_sessions_commits_more_often_when_its_commits_are_faster() -> None:
    # 24 sessions thinking 150 ms: each commits once per commit time plus think time
    loop = Path(_one(0.8), None, sessions=24, think=150.0)
    for write in (0.8, 40.0):
        lfs, done = replay(replace(loop, local=_one(write)), commits=20_000)
        assert math.isclose(done, 24 * 1000.0 / (statistics.fmean(lfs) + 150.0), rel_tol=0.05)


def test_the_sessions_are_told_by_how_the_commit_rate_fell_as_the_commits_slowed() -> None:
    loop = Path(_one(0.8), None, sessions=24, think=150.0)
    (calm, calm_rate), (slow, slow_rate) = (
        replay(replace(loop, local=_one(w)), commits=20_000) for w in (0.8, 40.0)
    )
    got = sessions(slow_rate, statistics.fmean(slow), (calm_rate, statistics.fmean(calm)))
    assert 20 <= got <= 28
    # a rate that did not fall tells nothing of the sessions: an open stream
    assert sessions(slow_rate, statistics.fmean(slow), (slow_rate, 1.0)) == 0
    assert sessions(slow_rate, statistics.fmean(slow), None) == 0


def _frame(t: float, rows: dict) -> Frame:
    results = {ORACLE_WAITS.name: CollectorResult(Status.OK, rows=rows)}
    return Frame("db1", 1.7e9 + t, int(t), 1.0, results, (), "primary")


def _event(n: float, avg: float, hist: object) -> dict:
    return {ORACLE_WAITS.waits.name: n, ORACLE_WAITS.avg.name: avg, ORACLE_WAITS.hist.name: hist}


def test_garbage_rows_give_no_window_and_no_prediction() -> None:
    window = Window()
    for t in range(5):
        window(_frame(t, {LOG_FILE_SYNC: _event(None, "x", "not a histogram")}))  # type: ignore[arg-type]
        window(_frame(t + 0.5, {LOG_FILE_SYNC: {}, LOCAL_WRITE: _event(-3, 1.0, [[1, 2, 3]])}))
        window(_frame(t + 0.7, {LOG_FILE_SYNC: _event(math.inf, math.nan, [[1.024, -5]])}))
    assert measured(window.ticks["db1"], (), 0.0, 2e9) is None


def test_a_primary_without_remote_writes_is_predicted_only_where_it_can_be() -> None:
    window = Window()
    for t in range(30):
        window(
            _frame(
                t,
                {
                    LOG_FILE_SYNC: _event(800, 0.9, [[0.512, 200], [1.024, 500], [2.048, 100]]),
                    LOCAL_WRITE: _event(400, 0.5, [[0.512, 250], [1.024, 150]]),
                },
            )
        )
    m = measured(window.ticks["db1"], (), 1.7e9, 2e9)
    assert m is not None and math.isclose(m.commits, 800)
    got = {p.name: p for p in predict(m, (Change("async"), Change("primary_write", 0.25)))}
    assert got["ASYNC"].predicted is None and "no remote write" in got["ASYNC"].assumptions
    faster = got["primary redo write at 0.25 ms"].predicted
    assert faster is not None and faster.avg < m.parts["lfs"].avg  # type: ignore[operator]


def _waits(ms: float, n: float = 1000.0) -> Wait:
    """``n`` waits of ``ms`` each."""
    return Wait(Counter({bucket_of(ms): n}), n, n * ms)


def _capped(rfs_ms: float) -> Measured:
    """A window whose SRL writes average ``rfs_ms`` with the rest of each remote write 0.45 ms;
    calm before it: SRL writes 0.17 ms, the rest 0.21 ms (the lab's standby under a cap)."""
    parts = {
        "lfs": _waits(rfs_ms * 1.4),
        "local": _waits(0.2),
        "remote": _waits(rfs_ms + 0.45),
        "rfs": _waits(rfs_ms),
    }
    calm = {"local": _waits(0.12), "remote": _waits(0.38), "rfs": _waits(0.17)}
    return Measured(30.0, parts, calm, rtt=0.04, calm_rtt=0.03)


def test_with_the_srl_write_calm_again_the_rest_of_the_remote_write_is_calm_too() -> None:
    """A slow SRL write makes each redo write carry many commits' redo; with it calm again, the
    part of the remote write beyond it falls back to its calm level (plus the round trip's
    rise), not the window's.  A SRL write that was not slowed leaves that part as measured."""
    for rfs_ms, want in ((50.0, 0.21 + 0.01), (0.19, 0.45)):
        m = _capped(rfs_ms)
        path = Path(_one(0.2), Remote(0.45, Dist(m.parts["rfs"].counts)))
        _name, said, alt, _ = standby_write(m, path, None)
        assert alt is not None and alt.remote is not None
        assert math.isclose(alt.remote.base, want, rel_tol=1e-6), (rfs_ms, alt.remote.base)
        assert ("calm 0.22 ms instead of 0.45" in said) == (rfs_ms == 50.0), said
    # a median slower than the calm one keeps the window's part: the writes stay large
    _n, _s, alt, _ = standby_write(_capped(50.0), path, 5.0)
    assert alt is not None and alt.remote is not None and alt.remote.base == 0.45


def test_a_lower_rto_min_is_rounded_up_to_the_kernels_tick() -> None:
    """The lab's socket showed rto 204 ms under the default 200 ms floor (HZ=250: 4 ms ticks)
    and 16 ms under ``rto_min 10ms``: 10 rounded up to 12, plus the 4 ms above the floor."""
    window = Window()
    for t, rto in enumerate((204.0, 204.0, 208.0)):
        window(_frame(t, {LOG_FILE_SYNC: _event(800, 0.9, [[0.512, 200], [1.024, 500]])}))
        window.ticks["db1"][-1].rto = rto
    m = measured(window.ticks["db1"], (), 1.7e9, 2e9)
    assert m is not None and m.rto_tick == 4.0
    path = Path(_one(0.2), Remote(0.3, None, loss=0.01, penalty=204.0))
    _name, said, alt, _ = rto_min(replace(m, rto=204.0), path, 10.0)
    assert alt is not None and alt.remote is not None and alt.remote.penalty == 16.0, said
    # RTOs that are not whole ticks of anything coarser than 1 ms (HZ=1000: 201, or a
    # simulation's 206.4) leave 10 ms and what is above the floor
    window.ticks["db1"][-1].rto = 201.0
    m = measured(window.ticks["db1"], (), 1.7e9, 2e9)
    assert m is not None and m.rto_tick == 1.0
    path = replace(path, remote=Remote(0.3, None, loss=0.01, penalty=201.0))
    _name, said, alt, _ = rto_min(replace(m, rto=201.0), path, 10.0)
    assert alt is not None and alt.remote is not None and alt.remote.penalty == 11.0, said
    # a socket's times a recording mangled are no times: no RTO, no tick, no round trip
    sock = "10.0.0.1:40312>10.0.0.2:1521"
    for bad in (math.nan, math.inf, -204.0):
        f = _frame(9, {LOG_FILE_SYNC: _event(800, 0.9, [[0.512, 200], [1.024, 500]])})
        tcp = CollectorResult(Status.OK, rows={sock: {"rto": bad, "rtt": bad}})
        got = tick(replace(f, collectors={**f.collectors, TCP.name: tcp}))
        assert got.rto is None and got.rtt is None, bad


def test_what_the_replay_misses_in_the_calm_seconds_every_prediction_keeps() -> None:
    """The replay of the path at its calm level against log file sync in the calm seconds
    before the window: what it misses there is commit time the chain does not model (the lab:
    0.41 ms replayed, 0.54 measured), which no change on the path removes.  The SRL write calm
    again comes to the calm log file sync; every other change carries the same miss (as it was
    the stalled window's miss, scaled by the share the change leaves, they all but lost it)."""
    m = _capped(50.0)
    held = replace(m, calm={**m.calm, "lfs": _waits(0.9)})
    alone, calm = (predict(x, (Change("standby_write"),))[0] for x in (m, held))
    assert alone.predicted is not None and calm.predicted is not None
    assert alone.predicted.avg < 0.5 and math.isclose(calm.predicted.avg, 0.9, rel_tol=0.05)
    assert "calm seconds before (avg 0.9 ms)" in calm.assumptions
    miss = calm.predicted.avg - alone.predicted.avg
    for c in (Change("standby_write", 5.0), Change("noaffirm"), Change("async")):
        a, b = (predict(x, (c,))[0].predicted for x in (m, held))
        assert a is not None and b is not None
        assert math.isclose(b.avg - a.avg, miss, rel_tol=0.1), (c, a, b, miss)


def test_losses_repaired_short_of_a_timeout_stay_slow_writes() -> None:
    """The lab under 2 % loss: 3 % of the remote writes took 2-8 ms (a loss resent at the next
    ACK or the tail loss probe), the rest 0.2-0.5 ms.  Kept as those few slow writes, which
    hold the commits behind them, not spread over every write as the same average: log file
    sync's average comes out higher, its median lower."""
    from sgmon.analysis.whatif import _remote

    remote = Counter({bucket_of(0.3): 965, bucket_of(3.0): 12, bucket_of(6.0): 18})
    srl = Counter({bucket_of(0.15): 1000})
    parts = {
        "lfs": _waits(0.5),
        "local": _waits(0.12),
        "remote": Wait(remote + Counter({bucket_of(205.0): 5}), 1000.0, 1500.0),
        "rfs": Wait(srl, 1000.0, 150.0),
    }
    calm = {p: Wait() for p in ("local", "remote", "rfs")}
    r = _remote(Measured(30.0, parts, calm, rto=204.0))
    assert r is not None and r.repairs is not None and math.isclose(r.repairs.total, 0.03)
    assert math.isclose(r.loss, 0.005)
    r = replace(r, loss=0.0)  # the repairs alone: the timeouts' queues would swamp them
    spread = replace(r, repairs=None, base=r.base + r.repairs.total * r.repairs.mean())
    slow, even = (replay(Path(_one(0.12), x, rate=190.0), 30000)[0] for x in (r, spread))
    assert statistics.fmean(slow) > statistics.fmean(even) * 1.03
    assert statistics.median(slow) < statistics.median(even)
    # no timeouts: such writes are not taken for a lossy link's (a capped standby's queue)
    r = _remote(Measured(30.0, {**parts, "remote": Wait(remote, 995.0, 475.0)}, calm, rto=204.0))
    assert r is not None and r.repairs is None


def _lossy() -> Measured:
    """A window of 1000 remote writes, 10 of which waited out a 204 ms RTO."""
    remote = Counter({bucket_of(0.3): 990, bucket_of(206.0): 10})
    parts = {"lfs": _waits(0.5), "local": _waits(0.12), "remote": Wait(remote, 1000.0, 2400.0)}
    calm = {p: Wait() for p in ("local", "remote", "rfs")}
    return Measured(30.0, {**parts, "rfs": Wait()}, calm, rto=204.0, rto_min=200.0, rto_tick=4.0)


def test_a_timeout_waits_half_a_tick_past_the_rto() -> None:
    """The kernel's RTO timer fires on the tick after it is due: under 2 % loss with 4 ms
    ticks, timeouts took 206.1 ms on average at an RTO of 204 and 18.0 ms at 16 (one socket,
    2-4 KiB requests, 40 s each).  So the window's timeouts cost 206, and under ``rto_min
    10ms`` 12 + 4 + 2: a penalty of the RTO alone put the lab's timeouts a bucket low."""
    from sgmon.analysis.whatif import _remote

    m = _lossy()
    r = _remote(m)
    assert r is not None and r.penalty == 206.0 and math.isclose(r.loss, 0.01)
    _name, said, alt, _ = rto_min(m, Path(_one(0.12), r), 10.0)
    assert alt is not None and alt.remote is not None and alt.remote.penalty == 18.0, said
    r = _remote(replace(m, rto_tick=1.0))
    assert r is not None and r.penalty == 204.5


def test_a_window_counts_the_writes_that_waited_a_timeout() -> None:
    """The lab test tells the chance in its ``rto_min`` outcome from these counts: the writes
    at the RTO and above, none where no RTO was measured."""
    m = _lossy()
    assert math.isclose(timeouts(m), 10.0)
    assert timeouts(replace(m, rto=None)) == 0.0
