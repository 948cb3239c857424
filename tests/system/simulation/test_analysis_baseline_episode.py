"""A baseline never learns the fault: while a series is out of line its values do not train its
baseline, so the baseline an outlier and a finding quote minutes into an incident is the one from
before it began; a level out of line for an hour is adopted as the new normal, and said so."""

from __future__ import annotations

import pytest

from sgmon.analysis import Analyzer
from sgmon.analysis.baseline import MIN_POINTS, Series
from sgmon.analysis.context import now
from sgmon.model import CollectorResult, Frame, Status
from sgmon.sim import SimPair

START = 1_800_000_000.0
LFS = "log file sync"
NEW_NORMAL_S = 3600.0  # an hour out of line, and the level is the new normal


def test_values_out_of_line_do_not_move_the_fit() -> None:
    s = Series(window=40, every=5)
    for t in range(30):
        s.push(t, 1.0 + (t % 2) * 0.1)
    before = s.median
    for t in range(30, 100):
        s.push(t, 200.0, learn=False)
    assert s.median == before
    assert s.recent(3) == [200.0, 200.0, 200.0]  # correlation still sees every point
    s.adopt()
    assert s.median == 200.0


def test_no_fit_from_points_out_of_line_only() -> None:
    s = Series()
    for t in range(3 * MIN_POINTS):
        s.push(t, 5.0, learn=False)
    assert s.median is None


@pytest.mark.parametrize(
    ("scenario", "key"),
    [
        ("rto-stall", ("primary", "oracle_waits", LFS, "p99")),
        ("rto-stall", ("primary", "oracle_waits", LFS, "avg")),
        ("standby-iops-cap", ("primary", "oracle_waits", LFS, "avg")),
        ("standby-iops-cap", ("standby", "disk", "sdb", "w_await")),
    ],
)
def test_evidence_minutes_into_the_fault_quotes_the_healthy_baseline(
    scenario: str, key: tuple[str, str, str, str]
) -> None:
    """Three simulated minutes after the onset the outlier, and every finding line that quotes
    it, still compare with the healthy level (the code before quoted the fault's own level:
    ``log file sync avg 22.0 ms (baseline 22.3)``)."""
    pair = SimPair(scenario, seed=3, start=START, onset=60.0)
    a = Analyzer()
    healthy = None
    try:
        # three minutes in, then to the next second the series is out of line (rto-stall's
        # stalls are seconds apart: a second without one reads at the healthy level)
        while pair.t < 60 + 180 or _quiet(a, key):
            assert pair.t < 60 + 240, "the series was never out of line in the fault's 4th minute"
            for f in pair.step():
                a.feed(f)
            if pair.t < 60:
                series = a.tracker.series(key)
                healthy = series.median if series else None
    finally:
        pair.close()
    st = a.state()
    o = st.outliers[key]
    assert healthy is not None and o.severity != "info"
    # the fault stands clear of the healthy level, and the baseline stays at the healthy
    # level, below that
    assert isinstance(o.value, float | int) and o.value > 1.5 * healthy
    assert o.baseline is not None and o.baseline <= 1.5 * healthy, (o.baseline, healthy)
    quoted = [e for f in st.findings if f.active for e in f.evidence if now(o) in e]
    assert all("new normal" not in e for e in quoted)


def _quiet(a: Analyzer, key: tuple[str, str, str, str]) -> bool:
    """Whether ``key`` is not out of line this second (no outlier, or one lingering quiet)."""
    o = a.state().outliers.get(key)
    return o is None or o.quiet > 0


def _frame(t: float, avg: float) -> Frame:
    return Frame(
        host="p",
        time=START + t,
        seq=int(t),
        interval=60.0,
        role="",
        collectors={
            "oracle_waits": CollectorResult(Status.OK, rows={LFS: {"avg": avg, "waits": 500}})
        },
    )


def test_a_level_held_for_an_hour_becomes_the_new_normal_and_says_so() -> None:
    """Minute samples (AWR, sar): log file sync at 1 ms, then at 20 ms for good.  For the first
    hour the outlier compares with 1 ms; after it, with the new level, since when it began."""
    a = Analyzer()
    key = ("p", "oracle_waits", LFS, "avg")
    step = 60.0
    onset = 20 * step
    t = 0.0
    while t < onset:
        a.feed(_frame(t, 1.0 + (t / step % 3) * 0.05))
        t += step
    seen = []
    while t < onset + NEW_NORMAL_S + 10 * step:
        a.feed(_frame(t, 20.0))
        o = a.state().outliers[key]
        seen.append((t - onset, o.baseline, o.normal_since))
        t += step
    first_hour = [(b, n) for since, b, n in seen if since < NEW_NORMAL_S]
    assert all(b is not None and b < 1.2 and n is None for b, n in first_hour), first_hour
    _, baseline, normal = seen[-1]
    assert baseline == 20.0 and normal == START + onset
    o = a.state().outliers[key]
    assert o.severity == "warn"  # 20 ms is still past seed 000's 8 ms whatever the baseline
    hhmm = f"{(int(START + onset) // 3600) % 24:02d}:{(int(START + onset) // 60) % 60:02d}"
    assert f"new normal since {hhmm}" in now(o)
