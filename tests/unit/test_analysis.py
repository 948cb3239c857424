"""The analysis on frames built by hand: baseline, hysteresis, thresholds, budget, correlation,
findings book, and the rules the simulated pair has no scenario for (buffers, memory, NIC, DG).

Numbers come from the seeds where the seeds give them (MAA Table 8's budget, the 3 x BDP worked
example), so the assertions check the seeds' own arithmetic, not the code's output.
"""

from __future__ import annotations

import math
import random

import pytest
from kits.analysis import T0, frame

from sgmon.analysis import Analyzer
from sgmon.analysis.baseline import MIN_POINTS, Series
from sgmon.analysis.budget import commit_budget
from sgmon.analysis.correlate import best_lag, overlap, pearson
from sgmon.analysis.findings import AT_ONCE, FindingBook
from sgmon.analysis.latch import OFF_TICKS, Latch
from sgmon.config import Config
from sgmon.errors import ConfigError
from sgmon.model import CollectorResult, Event, Frame, Status
from sgmon.verdicts import Finding


def waits(**events: dict) -> dict:
    """oracle_waits rows from keyword names (underscores for spaces)."""
    return {k.replace("_", " "): v for k, v in events.items()}


# --- baseline -------------------------------------------------------------------------------


def test_baseline_flags_a_jump_not_noise_and_not_a_steady_high() -> None:
    s = Series(window=120)
    for t in range(60):
        s.push(t, 4.0 + (t % 3) * 0.5)  # a p99 wobbling between 4 and 5 ms
    assert s.median is not None
    assert s.departs(200.0, floor=2.0, ratio=3.0, z=5.0)  # seed 001: 4 ms -> 200 ms
    assert not s.departs(5.5, floor=2.0, ratio=3.0, z=5.0)  # noise
    steady = Series(window=120)
    for t in range(120):
        steady.push(t, 200.0 + (t % 5))
    assert not steady.departs(204.0, floor=2.0, ratio=3.0, z=5.0)  # high, but its normal


def test_baseline_needs_points_before_judging() -> None:
    s = Series()
    for t in range(MIN_POINTS - 1):
        s.push(t, 1.0)
    assert not s.departs(1000.0, floor=1.0, ratio=2.0, z=5.0)


def test_span_lines_up_ticks_with_gaps() -> None:
    s = Series()
    for t in (10, 11, 12, 15):
        s.push(t, float(t))
    assert s.span(9, 16) == [None, 10.0, 11.0, 12.0, None, None, 15.0, None]


# --- outliers: thresholds and hysteresis ----------------------------------------------------


def _sock(retransmits: int, rto: float = 204.0) -> dict:
    return {"10.0.0.1:40000>10.0.0.2:1521": {"retransmits": retransmits, "rto": rto, "rtt": 0.3}}


def test_flapping_series_stays_one_outlier_then_closes() -> None:
    a = Analyzer()
    key = ("p", "tcp", "10.0.0.1:40000>10.0.0.2:1521", "retransmits")
    open_ticks = []
    for t in range(40):
        a.feed(frame("p", t, tcp=_sock(1 if t % 2 else 0)))
        open_ticks.append(key in a.state().outliers)
    first = open_ticks.index(True)
    assert all(open_ticks[first:]), "a series flapping every other tick must not flicker"
    for t in range(40, 40 + OFF_TICKS):
        a.feed(frame("p", t, tcp=_sock(0)))
    assert key not in a.state().outliers


def test_a_field_that_joins_a_row_later_is_judged() -> None:
    """The tracker skips a row's unwatched fields by the names it came with last: a row whose
    names change (a field appears, another goes) is looked at anew."""
    a = Analyzer()
    sock = "10.0.0.1:40000>10.0.0.2:1521"
    for t in range(3):
        a.feed(frame("p", t, tcp={sock: {"state": "ESTAB", "rtt": 0.3}}))
    a.feed(frame("p", 3, tcp={sock: {"state": "ESTAB", "rtt": 0.3, "retransmits": 3}}))
    assert ("p", "tcp", sock, "retransmits") in a.state().outliers
    a.feed(frame("p", 4, tcp={sock: {"rtt": 0.3, "rto": 204.0, "retransmits": 2}}))
    assert a.state().outliers[("p", "tcp", sock, "rto")].severity == "warn"


def test_rto_counts_only_with_retransmits() -> None:
    """Seed 001: rto 200 ms is every idle Linux socket; it costs time when a segment is resent."""
    a = Analyzer()
    a.feed(frame("p", 0, tcp=_sock(0, rto=204.0)))
    assert not any(k[3] == "rto" for k in a.state().outliers)
    a.feed(frame("p", 1, tcp=_sock(2, rto=204.0)))
    assert (
        a.state().outliers[("p", "tcp", "10.0.0.1:40000>10.0.0.2:1521", "rto")].severity == "warn"
    )


def test_os_level_must_hold_two_ticks() -> None:
    a = Analyzer()
    key = ("s", "disk", "sdb", "aqu_sz")
    a.feed(frame("s", 0, disk={"sdb": {"aqu_sz": 12.0}}))
    assert key not in a.state().outliers
    a.feed(frame("s", 1, disk={"sdb": {"aqu_sz": 12.0}}))
    assert a.state().outliers[key].severity == "crit"


def _edgy_frames(n: int) -> list[Frame]:
    """Frames whose values sit on the edges a calm band must draw exactly: a limit's warn and
    crit, the median, ratio x median, median + floor, zero; a CPU count that changes (load
    limits scale with it), an idle rto, a field that holds text then a number."""
    rng = random.Random(15)
    pick = rng.choices
    out = []
    for t in range(n):
        cpus = {str(i): {"idle": 50.0} for i in range(2 if t % 90 < 45 else 4)}
        cpus["all"] = {
            "idle": pick([90.0, 45.0, 80.0, 5.0, 1.0, 100.0], [20, 1, 1, 1, 1, 2])[0],
            "load1": pick([5.0, 0.5, 8.0, 16.0], [20, 2, 1, 1])[0],  # warn 4 on 2 CPUs, 8 on 4
        }
        disk = {
            "sdb": {
                "w_await": pick([2.0, 6.0, 4.0, 9.999, 10.0, 50.0, 0.0], [30, 2, 2, 1, 1, 1, 2])[0],
                "aqu_sz": pick([0.2, 0.4, 1.2, 1.0, 8.0, 0.0], [30, 2, 2, 1, 1, 3])[0],
                "util": pick([0.0, 89.99, 90.0, 99.0], [30, 1, 1, 1])[0],
            }
        }
        sock = {"retransmits": pick([0, 1], [15, 1])[0], "rto": pick([204.0, 200.0], [5, 1])[0]}
        dest = {"status": pick(["VALID", "ERROR", 0.0, 1], [20, 1, 2, 1])[0]}
        out.append(
            frame(
                "s",
                t,
                cpu=cpus,
                disk=disk,
                tcp={"10.0.0.1:40000>10.0.0.2:1521": sock},
                oracle_dg={"dest_2": dest},
            )
        )
    return out


def test_calm_band_judges_as_the_full_judgement(monkeypatch: pytest.MonkeyPatch) -> None:
    """A calm series' value inside its band is only added to its baseline: the outliers must be
    those of judging every value in full, tick by tick, on the band's very edges."""
    frames = _edgy_frames(400)

    def run() -> list[dict]:
        a = Analyzer()
        seen = []
        for f in frames:
            a.feed(f)
            seen.append({k: o.to_dict() for k, o in a.state().outliers.items()})
        return seen

    banded = run()
    with monkeypatch.context() as m:
        m.setattr(Latch, "settle", lambda self: setattr(self, "lo", math.inf))
        full = run()
    assert sum(map(len, full)) > 400, "the frames must open outliers for the bands to matter"
    assert banded == full


def test_config_thresholds_override_per_field_and_instance() -> None:
    rows = {"sdb": {"aqu_sz": 3.0}}
    default, relaxed = Analyzer(), Analyzer(Config(thresholds={"disk.aqu_sz": {"warn": 50}}))
    for t in range(3):
        default.feed(frame("s", t, disk=rows))
        relaxed.feed(frame("s", t, disk=rows))
    assert ("s", "disk", "sdb", "aqu_sz") in default.state().outliers
    assert ("s", "disk", "sdb", "aqu_sz") not in relaxed.state().outliers
    strict = Analyzer(Config(thresholds={"oracle_waits.log file sync.p99": {"warn": 8}}))
    strict.feed(frame("p", 0, oracle_waits=waits(log_file_sync={"p99": 16.0})))
    o = strict.state().outliers[("p", "oracle_waits", "log file sync", "p99")]
    assert o.severity == "warn" and "config" in o.reason


@pytest.mark.parametrize(("jump", "expect"), [(4.096, "info"), (16.384, "warn")])
def test_a_commit_wait_departure_warns_only_past_the_commit_bound(jump: float, expect: str) -> None:
    """A p90 moving from 1 ms to 4 ms for good (many waits in the tail) is worth seeing, but it
    is not an incident; the same move to 16 ms is (seed 000 Table 5: 8 ms)."""
    a = Analyzer()
    key = ("p", "oracle_waits", "SYNC Remote Write", "p90")
    for t in range(40):
        v = 1.024 if t < 30 else jump
        hist = [[1.024, 400], [jump, 100]] if t >= 30 else [[1.024, 500]]
        a.feed(frame("p", t, oracle_waits=waits(SYNC_Remote_Write={"p90": v, "hist": hist})))
    assert a.state().outliers[key].severity == expect


@pytest.mark.parametrize(
    "bad", [{"disk.aqu_sz": 5}, {"disk.aqu_sz": {"warm": 5}}, {"disk.aqu_sz": {"warn": "x"}}]
)
def test_bad_threshold_config_is_one_line_error(bad: dict) -> None:
    with pytest.raises(ConfigError, match=r"^\[thresholds\] 'disk\.aqu_sz'"):
        Analyzer(Config(thresholds=bad))


# --- budget -----------------------------------------------------------------------------------


def test_budget_splits_as_maa_table_8() -> None:
    """12c, 1 ms RTT: lfs 4.60, lfpw 0.62, SYNC remote write 3.45, RFS random I/O 2.89."""
    p = frame(
        "p",
        0,
        oracle_waits=waits(
            log_file_sync={"avg": 4.60},
            log_file_parallel_write={"avg": 0.62},
            SYNC_Remote_Write={"avg": 3.45, "waits": 100.0},
        ),
    )
    s = frame("s", 0, oracle_waits={"RFS random i/o": {"avg": 2.89}})
    b = commit_budget(p, s)
    assert b is not None
    assert b.remote_write_ms == pytest.approx(3.45)
    assert b.standby_io_ms == pytest.approx(2.89)
    assert b.network_ms == pytest.approx(3.45 - 2.89)
    assert b.overhead_ms == pytest.approx(4.60 - max(0.62, 3.45))  # the writes overlap


def _hist(*buckets: tuple[float | None, int]) -> list[list]:
    return [[b, c] for b, c in buckets]


@pytest.mark.parametrize("remote", ["SYNC_Remote_Write", "LNS_wait_on_SENDREQ"])
def test_budget_puts_the_wait_behind_a_stalled_write_on_that_write(remote: str) -> None:
    """Seed 001's signature: one remote write stalls for an RTO (200-256 ms bucket) among 449
    fast ones; commits queue behind it, so log file sync averages 43 ms while the write's own
    average is 1.7 ms.  The residual life of the remote write (E[D^2]/2E[D] from its buckets:
    (449 x 1.5^2 + 196.6^2) / 2(449 x 1.5 + 196.6) = 22 ms) is queueing behind the network,
    not LGWR overhead; on 11.2 the remote write is "LNS wait on SENDREQ" (Table 3)."""
    srw = _hist((1.024, 0), (2.048, 449), (4.096, 0), (262.144, 1))
    p = frame(
        "p",
        0,
        oracle_waits=waits(
            log_file_sync={"avg": 43.0},
            log_file_parallel_write={"avg": 0.46, "hist": _hist((0.512, 300), (1.024, 150))},
            **{remote: {"avg": 1.7, "waits": 450.0, "hist": srw}},
        ),
    )
    s = frame("s", 0, oracle_waits={"RFS write": {"avg": 0.4, "hist": _hist((0.512, 450))}})
    b = commit_budget(p, s)
    assert b is not None and b.queue_on == "network"
    expect = (449 * 1.536**2 + 196.608**2) / (2 * (449 * 1.536 + 196.608))
    assert b.queue_ms == pytest.approx(expect)
    assert b.overhead_ms == pytest.approx(43.0 - 1.7 - expect)
    assert b.overhead_ms < b.queue_ms


def test_budget_keeps_cpu_starvation_as_overhead() -> None:
    """Fast writes cannot explain a 15 ms log file sync: what is left is LGWR waiting for CPU."""
    fast = _hist((0.512, 200), (1.024, 250))
    p = frame(
        "p",
        0,
        oracle_waits=waits(
            log_file_sync={"avg": 15.0},
            log_file_parallel_write={"avg": 0.5, "hist": fast},
            SYNC_Remote_Write={"avg": 0.76, "waits": 450.0, "hist": fast},
        ),
    )
    b = commit_budget(p, None)
    assert b is not None and b.queue_ms is not None and b.queue_ms < 1.0
    assert b.share(b.overhead_ms) > 0.9


def test_budget_11g_uses_overall_write_latency() -> None:
    """Table 7: overall write latency = redo write time / redo writes, with a SYNC destination."""
    p = frame(
        "p",
        0,
        oracle_waits=waits(log_file_sync={"avg": 2.45}, log_file_parallel_write={"avg": 0.30}),
        oracle_redo={"db": {"redo_write_time": 187.0, "redo_writes": 100.0}},
        oracle_dg={"dest_2": {"transmit_mode": "SYNC", "affirm": "YES"}},
    )
    b = commit_budget(p, None)
    assert b is not None and b.remote_write_ms == pytest.approx(1.87)
    assert b.standby_io_ms is None and b.network_ms is None


def test_budget_uses_traced_msgid_split_for_long_writes() -> None:
    """Seed 000's traced write: 163 ms, of which RFS write 162 ms; 9 short writes of 1 ms."""
    split = Event(
        T0,
        "oracle_trace",
        "remote_write_split",
        "thread_1",
        "msgid 117468 thrd 1 seq 1584: 163 ms = 1 ms network + 162 ms RFS",
        163.0,
    )
    p = frame(
        "p",
        0,
        events=(split,),
        oracle_waits=waits(
            log_file_sync={"avg": 20.0},
            SYNC_Remote_Write={"avg": (163.0 + 9 * 1.0) / 10, "waits": 10.0},
        ),
    )
    s = frame("s", 0, oracle_waits={"RFS write": {"avg": 0.5}})
    b = commit_budget(p, s)
    assert b is not None and b.standby_io_ms is not None
    expected = (162.0 + 9 * 1.0 * (0.5 / b.remote_write_ms)) / 10  # traced + short by the averages
    assert b.standby_io_ms == pytest.approx(expected)
    assert b.standby_io_ms > 0.9 * b.remote_write_ms  # the long write was the standby's


# --- correlation --------------------------------------------------------------------------


def test_pearson_and_lag_tolerance() -> None:
    spikes = [0.0] * 30
    for i in (5, 12, 20, 27):
        spikes[i] = 200.0
    assert pearson(spikes, spikes) == pytest.approx(1.0)
    assert pearson(spikes, [1.0] * 30) is None  # flat
    late = [None, *spikes[:-1]]  # the other host's tick lands one later
    padded = [None, *late, None]
    r0 = best_lag(spikes, late, 0)
    r1 = best_lag(spikes, padded, 1)
    assert r1 is not None and r1[0] == pytest.approx(1.0) and r1[1] == 1
    assert r0 is None or r0[0] < 0.5


def test_overlap_scores_events_answered_by_the_trigger() -> None:
    s = Series()
    for t in range(60):
        s.push(t, 64.0 if t in (30, 45) else 2.0)
    assert overlap(s, [T0 + 0, 30.0, 45.0], 1.0, 1) == pytest.approx(1.0)
    assert overlap(s, [10.0, 20.0], 1.0, 1) == 0.0


# --- findings book ----------------------------------------------------------------------------


def _f(key: str, sev: str = "warn") -> Finding:
    return Finding(key, sev, "p", key, [], [], "r", "000", 0.0)


def test_book_keeps_a_finding_through_gaps_and_closes_after_hold() -> None:
    book = FindingBook(hold=10.0, persist={"r": AT_ONCE})  # opens at once: the hold is tested
    book.update(100.0, [_f("a", "crit")])
    assert [f.key for f in book.opened] == ["a"]
    book.update(105.0, [])  # not asserted for 5 s: still active
    book.update(106.0, [_f("a", "warn")])  # a lower severity within the hold keeps crit
    active = book.findings()[0]
    assert active.active and active.start == 100.0 and active.severity == "crit"
    book.update(117.0, [])
    assert [f.key for f in book.closed] == ["a"]
    closed = book.findings()[0]
    assert not closed.active and closed.start == 100.0 and closed.end == 106.0


# --- rules without a simulated scenario ---------------------------------------------------


def _run(frames_by_tick: list[list[Frame]]) -> list[Finding]:
    a = Analyzer()
    for frames in frames_by_tick:
        for f in frames:
            a.feed(f)
    return [f for f in a.state().findings if f.active]


def test_socket_buffers_below_3_bdp_seed_example() -> None:
    """Seed 000: 622 Mbit/s x 30 ms -> BDP 2,332,500 B, 3 x BDP 6,997,500 B."""

    def host(t: float, sndbuf: float) -> Frame:
        return frame(
            "p",
            t,
            role="primary",
            netdev={"eth1": {"speed": 622.0, "operstate": "up"}},
            tcp={"10.0.0.1:40000>10.0.0.2:1521": {"rtt": 30.0, "sndbuf": sndbuf, "send_q": 0}},
        )

    small = _run([[host(t, 4_000_000.0)] for t in range(3)])
    found = [f for f in small if f.rule == "socket_buffers"]
    assert found and "6998k" in found[0].evidence[0].replace(",", "")
    big = _run([[host(t, 8_000_000.0)] for t in range(3)])
    assert not [f for f in big if f.rule == "socket_buffers"]


def test_memory_shortage_and_swapping() -> None:
    rows = {"all": {"memused": 99.5, "pgscank": 800.0, "pgscand": 50.0, "pswpin": 0.0}}
    found = _run([[frame("p", t, paging=rows)] for t in range(3)])
    assert [f.rule for f in found] == ["memory"]
    swap = {"all": {"memused": 60.0, "pgscank": 0.0, "pswpout": 30.0}}
    assert [f.rule for f in _run([[frame("p", t, paging=swap)] for t in range(3)])] == ["memory"]


def test_nic_drops_and_overruns() -> None:
    rows = {"eth1": {"rx_drop": 12.0, "rx_overrun": 3.0, "util": 40.0}}
    found = _run([[frame("p", t, netdev=rows)] for t in range(3)])
    assert [f.rule for f in found] == ["nic"] and found[0].severity == "warn"


def test_failed_sync_destination_is_critical() -> None:
    dest = {"dest_2": {"status": "ERROR", "error": "ORA-16198: timeout", "target": "STBY"}}
    found = _run([[frame("p", t, role="primary", oracle_dg=dest)] for t in range(2)])
    assert [(f.rule, f.severity) for f in found] == [("dg_state", "crit")]
    assert "ORA-16198" in found[0].title


def test_standby_disk_saturation_chains_to_the_primary() -> None:
    """Seed 003 by hand: the standby's queue fills, SYNC Remote Write jumps on the primary."""
    ticks = []
    for t in range(60):
        bad = t >= 40
        p = frame(
            "p",
            t,
            role="primary",
            oracle_waits=waits(
                log_file_sync={"avg": 40.0 if bad else 1.0, "p99": 256.0 if bad else 2.0},
                SYNC_Remote_Write={"avg": 35.0 if bad else 0.8, "p99": 256.0 if bad else 1.0},
            ),
        )
        disk = (
            {"aqu_sz": 60.0, "w_await": 90.0, "svctm": 1.4, "util": 100.0}
            if bad
            else {"aqu_sz": 0.3, "w_await": 0.6, "svctm": 0.4, "util": 20.0}
        )
        s = frame("s", t, role="standby", disk={"sdb": disk})
        ticks.append([p, s])
    found = _run(ticks)
    assert found[0].rule == "standby_io" and found[0].host == "s"
    assert found[0].severity == "crit" and "<-" in found[0].title and "r=" not in found[0].title
    assert any("moved together over the last" in e for e in found[0].evidence)


def test_standby_io_capped_above_the_device() -> None:
    """The lab's cgroup blkio throttle: RFS write slows, iostat sees no queue on the device."""
    ticks = []
    for t in range(60):
        bad = t >= 40
        rfs = 60.0 if bad else 0.4
        p = frame(
            "p",
            t,
            role="primary",
            oracle_waits=waits(
                log_file_sync={"avg": rfs + 2.0, "p99": 128.0 if bad else 2.0},
                log_file_parallel_write={"avg": 0.4},
                SYNC_Remote_Write={"avg": rfs + 0.3, "p99": 128.0 if bad else 1.0, "waits": 50.0},
            ),
        )
        s = frame(
            "s",
            t,
            role="standby",
            oracle_waits={"RFS write": {"avg": rfs, "p99": 128.0 if bad else 1.0}},
            disk={"loop7": {"aqu_sz": 0.2, "w_await": 0.5, "svctm": 0.4, "util": 15.0}},
        )
        ticks.append([p, s])
    found = _run(ticks)
    assert (found[0].rule, found[0].host) == ("standby_io", "s")
    assert "below iostat" in found[0].title and found[0].severity != "info"


def test_cpu_saturation_on_a_host_without_a_database() -> None:
    cpus = {f"cpu{i}": {"idle": 0.5} for i in range(4)}
    rows = {"all": {"idle": 0.5, "runq_sz": 30.0, "load1": 20.0}, **cpus}
    found = _run([[frame("local", t, cpu=rows)] for t in range(3)])
    assert [f.rule for f in found] == ["cpu_starvation"]
    assert "CPU saturated" in found[0].title and "LGWR" not in found[0].title


def test_shared_busy_kernel_blames_the_host_whose_commits_wait() -> None:
    """Both hosts see the same saturated CPUs (two namespaces, one kernel); the budget says the
    commit time is LGWR's overhead on the primary, so the primary's starvation ranks first."""
    cpus = {f"cpu{i}": {"idle": 0.0} for i in range(4)}
    ticks = []
    for t in range(40):
        bad = t >= 25
        cpu = {"all": {"idle": 0.3 if bad else 60.0, "runq_sz": 30.0 if bad else 1.0}, **cpus}
        p = frame(
            "prim",
            t,
            role="primary",
            cpu=cpu,
            oracle_waits=waits(
                log_file_sync={"avg": 20.0 if bad else 1.0, "p99": 64.0 if bad else 2.0},
                log_file_parallel_write={"avg": 0.5},
                SYNC_Remote_Write={"avg": 0.8, "p99": 1.0, "waits": 100.0},
            ),
        )
        s = frame("aux", t, role="standby", cpu=cpu, oracle_waits={"RFS write": {"avg": 0.4}})
        ticks.append([p, s])
    found = [f for f in _run(ticks) if f.rule == "cpu_starvation"]
    assert [f.host for f in found] == ["prim", "aux"]  # not the name order
    assert "LGWR" in found[0].title and found[0].severity != "info"


def test_lgwr_starvation_is_named_from_its_own_run_queue_delay() -> None:
    """Seed 000 step 2 measured: with the procs collector, LGWR kept waiting for a CPU names
    the cause even on a host with idle CPUs (a cgroup quota, affinity), and a host at %idle 0
    whose LGWR is never kept waiting is busy, not a starved commit path."""

    def ticks(idle: float, lgwr_runq: float) -> list[list[Frame]]:
        out = []
        for t in range(30):
            bad = t >= 20
            cpu = {"all": {"idle": idle if bad else 60.0, "runq_sz": 1.0}}
            procs = {
                "LGWR": {"runq": lgwr_runq if bad else 0.2, "cpu": 5.0, "state": "S"},
                "DBW0": {"runq": 80.0 if bad else 0.1, "cpu": 2.0, "state": "S"},  # not LGWR
            }
            waits_now = waits(
                log_file_sync={"avg": 20.0 if bad else 1.0, "p99": 64.0 if bad else 2.0}
            )
            out.append(
                [frame("p", t, role="primary", cpu=cpu, procs=procs, oracle_waits=waits_now)]
            )
        return out

    quota = [f for f in _run(ticks(idle=55.0, lgwr_runq=40.0)) if f.rule == "cpu_starvation"]
    assert quota and quota[0].severity != "info", quota
    assert "LGWR waits for a CPU 40 ms/s" in quota[0].title
    assert ("p", "procs", "LGWR", "runq") in quota[0].series
    busy = [f for f in _run(ticks(idle=0.5, lgwr_runq=0.3)) if f.rule == "cpu_starvation"]
    assert busy and all(f.severity == "info" for f in busy), busy
    assert "not kept waiting" in busy[0].title


def test_series_that_stop_reporting_are_forgotten() -> None:
    """A DG socket that reconnects comes back on a new port: the old series must not pile up."""
    a = Analyzer()
    for t in range(5):
        a.feed(frame("p", t, tcp=_sock(0)))
    old = ("p", "tcp", "10.0.0.1:40000>10.0.0.2:1521", "rtt")
    assert a.tracker.series(old) is not None
    moved = {"10.0.0.1:40002>10.0.0.2:1521": {"retransmits": 0, "rto": 204.0, "rtt": 0.3}}
    for t in range(5, 5 + 2 * a.tracker.window + 100):
        a.feed(frame("p", t, tcp=moved))
    assert a.tracker.series(old) is None
    assert a.tracker.series(("p", "tcp", "10.0.0.1:40002>10.0.0.2:1521", "rtt")) is not None
    assert {k[2] for k in a.tracker._rows if k[1] == "tcp"} == {"10.0.0.1:40002>10.0.0.2:1521"}
    cached = {k[2] for k in a.grader._limits if k[1] == "tcp"}
    assert cached == {"10.0.0.1:40002>10.0.0.2:1521"}  # nor their cached limits


def test_one_log_switch_is_not_an_outlier_and_table2_sized_logs_are_fine() -> None:
    """Seed 000 Table 2: at <= 5 MB/s, 4 GB logs; at 4 MB/s they switch every ~17 min."""
    a = Analyzer()
    for t in range(0, 2400, 10):  # 10 s ticks
        switches = 1 if t in (600, 1640) else 0
        a.feed(
            Frame(
                "p",
                T0 + t,
                t,
                10.0,
                {
                    "oracle_redo": CollectorResult(Status.OK, {"db": {"redo_size": 4.2e6}}),
                    "oracle_dg": CollectorResult(
                        Status.OK, {"thread_1": {"log_switches": switches, "sequence": 5}}
                    ),
                },
                role="primary",
            )
        )
        st = a.state()
        assert all(o.severity == "info" for o in st.outliers.values()), st.outliers
        assert not [f for f in st.findings if f.rule == "log_switches"]


def test_dg_round_trip_above_5ms() -> None:
    """Seed 000 "Network": SYNC does best below 5 ms RTT (the tcp collector's declared limit)."""
    far = {"10.0.0.1:40000>10.0.0.2:1521": {"rtt": 12.0, "retransmits": 0, "rto": 220.0}}
    found = _run([[frame("p", t, role="primary", tcp=far)] for t in range(12)])
    assert [(f.rule, f.severity) for f in found] == [("network_latency", "warn")]
    near = {"10.0.0.1:40000>10.0.0.2:1521": {"rtt": 0.4, "retransmits": 0, "rto": 204.0}}
    assert not _run([[frame("p", t, role="primary", tcp=near)] for t in range(12)])


def test_a_row_that_comes_with_no_field_after_one_with_fields_is_judged_as_empty() -> None:
    """An imported paging row whose vmstat columns were missing in one sample comes empty: its
    fields judged the tick before are not looked for in it (the analysis stopped on a KeyError:
    an empty row's names, (), were also the mark for "match the fields again")."""
    a = Analyzer()
    for t in range(12):
        paging = {"all": {"pswpin": 0.0, "pswpout": 0.0}} if t % 2 else {"all": {}}
        a.feed(frame("h", float(t), paging=paging))
        assert a.state() is not None
