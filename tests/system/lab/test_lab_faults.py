"""Each seed incident reproduced on real kernels, and sgmon naming its cause on the right host."""

from __future__ import annotations

from statistics import median

import pytest
from importlab import lab_config, report_summary

from sgmon.analysis.rules.base import LAG_RISK
from sgmon.grading import RANK
from sgmon.lab.run import ASYNC_HOST
from sgmon.model import number

pytestmark = [pytest.mark.root, pytest.mark.slow]

WARM = 8  # seconds of healthy lab before the fault (the analysis's baseline)
WINDOW = 12  # seconds watched after the fault starts
DETECT = 10  # the fault must be named within this many seconds of its start
STALL_BUCKETS = (200.0, 300.0)  # log file sync histogram bounds of the 128-256 ms bucket
# Only the loss of a batch's last segment waits out the 200 ms timer (a lost segment followed by
# others is repaired within an RTT), so at the lab's default 0.5 % loss a 12 s window held no
# stall in about 1 of 5 runs (measured: 4-6 stalls per 30 s).  The loss test uses 2 %, and may
# watch up to EXTRA seconds more for its first stall.
LOSS_PERMILLE = 20
EXTRA = 10
ASYNC_STANDBY = {"async_standby": True}  # the lab's third namespace (issue 15)


@pytest.mark.parametrize(
    ("fault", "rule", "host"),
    [
        ("iops", "standby_io", "standby"),
        ("cpu", "cpu_starvation", "primary"),
        ("switches", "log_switches", "primary"),
    ],
)
def test_fault_is_named_on_the_right_host(run, fault, rule, host, tmp_path):
    assert_named(run, fault, rule, host)
    if fault == "iops":  # the recording's incident report opens with the capped device
        config = lab_config(run.lab, tmp_path)
        summary = report_summary(run.archive, config, tmp_path / "report.html")
        assert run.lab.standby_log.name in summary, summary


@pytest.mark.parametrize("lab", [ASYNC_STANDBY], indirect=True)
def test_sync_standby_cap_is_still_the_cause_beside_an_async_standby(run):
    """Issue 15: a standby off the commit path beside the SYNC one changes nothing when the
    SYNC one is capped: its disk is still named the cause of commit time."""
    assert_named(run, "iops", "standby_io", "standby")
    assert {f.host for f in run.frames} == {"primary", "standby", ASYNC_HOST}


def test_a_silent_standby_hangs_commits_and_the_socket_says_so(run):
    """Every packet toward the standby dropped, nothing reset: the primary's SYNC socket keeps
    its segments unacknowledged, acknowledges nothing for whole ticks and doubles its RTO,
    while the database counts no commit; the finding names it on the primary."""
    t_on = assert_named(run, "silent", "standby_silent", "primary")
    primary = [f for f in run.frames if f.host == "primary"]
    before = [number(f.value("oracle_redo", "db", "user_commits")) or 0.0 for f in primary]
    usual = median(before[: len([f for f in primary if f.time < t_on])] or [0.0])
    hung = [
        (f, row)
        for f in primary
        if f.time > t_on
        for inst, row in f.rows("tcp").items()
        if inst != "host" and row.get("unacked") and row.get("bytes_acked") == 0
    ]
    assert len(hung) >= 3, "the socket never showed a whole tick with nothing acknowledged"
    rtos = [number(row.get("rto")) or 0.0 for _, row in hung]
    assert max(rtos) >= 2 * min(rtos), f"no backoff: {rtos}"
    stuck = [number(f.value("oracle_redo", "db", "user_commits")) or 0.0 for f, _ in hung[1:]]
    assert usual > 10 and max(stuck) < 0.05 * usual, (usual, stuck)


def assert_named(run, fault: str, rule: str, host: str) -> float:
    """The fault, switched on after WARM seconds, is named as ``rule`` on ``host`` within
    DETECT seconds, ranks first of its rule there, and the recording says the same; returns
    when the fault was switched on."""
    run.collect(WARM)
    t_on = run.switch(fault)
    run.collect(WINDOW)
    seen = run.first(rule, host, t_on)
    assert seen is not None, f"{rule} on {host} never raised; findings: {run.above_info(t_on)}"
    assert seen - t_on <= DETECT
    blamed = run.blamed(rule, seen)
    assert max(blamed, key=blamed.get) == host, f"{rule} ranked first on: {blamed}"
    replay = run.replayed()  # what `sgmon record` wrote tells the same story
    again = replay.first(rule, host, t_on)
    assert again is not None and again - t_on <= DETECT, replay.above_info(t_on)
    return t_on


def _stalls(frames, since: float) -> int:
    """log file sync waits in the 128-256 ms bucket on the primary after ``since``."""
    lo, hi = STALL_BUCKETS
    n = 0
    for f in frames:
        if f.host != "primary" or f.time < since:
            continue
        hist = f.value("oracle_waits", "log file sync", "hist") or []
        n += sum(c or 0 for b, c in hist if b is not None and lo <= b <= hi)
    return n


def _dg_rto(frames, since: float) -> list[float]:
    return [
        row["rto"]
        for f in frames
        if f.host == "primary" and f.time >= since
        for inst, row in f.rows("tcp").items()
        if inst != "host" and row.get("rto") is not None
    ]


@pytest.mark.parametrize("lab", [{"loss_permille": LOSS_PERMILLE}], indirect=True)
def test_loss_stalls_commits_for_the_rto_and_rto_min_removes_them(run):
    """Seed 001 before/after: 200 ms RTO stalls in log file sync, gone with rto_min 10ms."""
    run.collect(WARM)
    t_loss = run.switch("loss")
    run.collect(WINDOW)
    seen = run.first("rto_stall", "primary", t_loss)
    assert seen is not None, f"rto_stall never raised; findings: {run.above_info(t_loss)}"
    assert seen - t_loss <= DETECT
    for _ in range(EXTRA):
        if _stalls(run.frames, t_loss):
            break
        run.collect(1)
    before = _stalls(run.frames, t_loss)
    assert before > 0, "no log file sync waits in the 128-256 ms bucket under loss"
    assert min(_dg_rto(run.frames, t_loss)) >= 200

    t_fix = run.switch("rto_min")
    run.collect(2)  # the sockets pick up the route's rto_min at their next RTT sample
    t_after = t_fix + 2
    run.collect(10)
    rto = _dg_rto(run.frames, t_after)
    assert rto and max(rto) <= 30, f"DG socket rto after rto_min 10ms: {rto}"
    assert _stalls(run.frames, t_after) == 0
    replay = run.replayed()  # the recording shows the same before/after
    again = replay.first("rto_stall", "primary", t_loss)
    assert again is not None and again - t_loss <= DETECT
    assert _stalls(replay.frames, t_loss) > 0 and _stalls(replay.frames, t_after) == 0


@pytest.mark.parametrize("lab", [{"loss_permille": LOSS_PERMILLE}], indirect=True)
def test_loss_retransmissions_arrive_as_events_as_many_as_the_kernel_counts(run):
    """Issue 17: each retransmission of the DG socket is an event with its own time, as many as
    the kernel counts for that socket in the same ticks (tcp_info's total_retrans), and each
    falls inside the tick that carried it; the trace reader lost no record.

    The event fires once per resent packet and the kernel counts segments, and a resent packet
    may hold several: in 10 runs here the events were 90-100 % of the segments (63 of 70 at
    worst), so the bound is 85-110 %, not the issue's +-10 %.  (An earlier form summed the
    namespace's TCPRetransSegs rate times the nominal 1 s, which misweighs a late tick and the
    one that catches up: CI, loaded, read 50 events against 56.)"""
    run.collect(WARM)
    run.switch("loss")
    got = [f for f in run.collect(WINDOW) if f.host == "primary"]
    assert all(f.collectors["retrans"].status.value == "ok" for f in got), got[-1].collectors
    assert not sum(number(f.value("retrans", "host", "dropped")) or 0 for f in got)
    events = [(f, e) for f in got for e in f.events if e.kind == "retransmit"]
    kernel = sum(
        number(row.get("retransmits")) or 0.0
        for f in got
        for inst, row in f.rows("tcp").items()
        if inst != "host"
    )
    assert kernel >= 10, f"too few retransmissions to compare: {kernel}"
    assert 0.85 * kernel <= len(events) <= 1.1 * kernel, (len(events), kernel)
    for f, e in events:
        assert f.time - f.interval - 0.05 <= e.time <= f.time + 0.05, (f.time, e.time, e.text)


def test_cpu_fault_raises_lgwrs_own_run_queue_delay_and_the_finding_cites_it(run):
    """Seed 000 step 2 measured: the hog pinned to the primary's CPU keeps the log writer
    (a thread named ora_lgwr_PROD, as under threaded_execution) runnable but not running, and
    cpu_starvation rests on that delay, not on %idle."""
    run.collect(WARM)
    t_on = run.switch("cpu")
    run.collect(WINDOW)

    def delays(lo: float, hi: float) -> list[float]:
        return [
            v
            for f in run.frames
            if f.host == "primary" and lo <= f.time < hi
            and (v := f.value("procs", "LGWR", "runq")) is not None
        ]  # fmt: skip

    before, after = delays(0, t_on), delays(t_on + 2, float("inf"))
    assert before and after, "the procs collector did not follow the lab's log writer"
    b, a = sorted(before)[len(before) // 2], sorted(after)[len(after) // 2]
    assert a >= 5.0 and a > 10 * max(b, 0.5), f"LGWR run-queue delay {b} -> {a} ms/s"
    cited = [
        f
        for t, active in run.findings
        if t >= t_on
        for f in active
        if f.rule == "cpu_starvation" and ("primary", "procs", "LGWR", "runq") in f.series
    ]
    assert cited, f"no cpu_starvation citing LGWR's delay; findings: {run.above_info(t_on)}"
    assert "LGWR waits for a CPU" in cited[0].title


def _commit_ms(frames, lo: float, hi: float) -> float:
    """Median of the primary's per-tick average log file sync (ms) between ``lo`` and ``hi``."""
    avgs = [
        v
        for f in frames
        if f.host == "primary" and lo <= f.time < hi
        and (v := number(f.value("oracle_waits", "log file sync", "avg"))) is not None
    ]  # fmt: skip
    assert avgs, "no log file sync on the primary"
    return median(avgs)


@pytest.mark.parametrize("lab", [ASYNC_STANDBY], indirect=True)
def test_capped_async_standby_is_a_lag_risk_never_the_commit_cause(run):
    """Seed 003's ASYNC standby (issue 15): capped, it falls behind and sgmon says so as its
    lag risk, while commits keep their pace and no finding blames it for commit time."""
    run.collect(WARM)
    t_on = run.switch("iops_async")
    run.collect(WINDOW)
    lag = [
        v
        for f in run.frames
        if f.host == ASYNC_HOST and f.time >= t_on
        and (v := number(f.value("oracle_dg", "db", "transport_lag"))) is not None
    ]  # fmt: skip
    assert lag and max(lag) >= 3, f"the capped ASYNC standby did not fall behind: {lag}"
    seen = run.first(LAG_RISK, ASYNC_HOST, t_on)
    assert seen is not None, f"no lag risk on {ASYNC_HOST}; findings: {run.above_info(t_on)}"
    assert seen - t_on <= DETECT
    # a cause on the ASYNC standby, or citing its figures, would blame it for commit time
    blamed = {
        f"{f.severity} {f.host} {f.rule}: {f.title}"
        for t, active in run.findings
        if t >= t_on
        for f in active
        if f.rule != LAG_RISK
        and RANK[f.severity] > RANK["info"]
        and (f.host == ASYNC_HOST or any(k[0] == ASYNC_HOST for k in f.series))
    }
    assert not blamed, f"{ASYNC_HOST} blamed: {sorted(blamed)}\n{run.timeline()}"
    tops = [active[0] for t, active in run.findings if t >= t_on and active]
    wrong = {f.title for f in tops if f.host == ASYNC_HOST and f.rule != LAG_RISK}
    assert not wrong, f"top finding about {ASYNC_HOST} other than its lag risk: {wrong}"
    before = _commit_ms(run.frames, run.frames[0].time + 2, t_on)
    during = _commit_ms(run.frames, t_on + 2, float("inf"))
    assert during <= max(2 * before, before + 2.0), f"log file sync {before} -> {during} ms"
