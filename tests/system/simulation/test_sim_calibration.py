"""The simulation speaks the seeds' numbers: each seed scenario's waits, after the onset, are
held within 25 % of every figure of its seed's AWR tables, for three seeds of the simulation.

Seed 001 ("A story about Data Guard and network latency"), its AWR tables of a 30 s interval:
log file sync 15,404 waits averaging 15.90 ms, 94.8 % of them under 32 ms and 3.7 % in
128-256 ms; SYNC Remote Write 6,335 waits averaging 4.34 ms, 99.1 % under 32 ms and 0.8 % in
128-256 ms; Redo Transport MISC averaging 4.59 ms; log file parallel write 6,297 waits averaging
0.54 ms; 0.2 % of its log file syncs in 512 ms-1 s: ~31 commits behind a remote write whose
resent segment was lost again, the RTO doubled (200 + 400 ms; its SYNC Remote Write shows 57
waits over 64 ms where its 0.8 % are ~51: a few remote writes outside 128-256 ms, each bucket
under 0.05 %, printed .0); and 0.2 % in 256-512 ms: the commits queued behind a stall whose
next redo write, sent in the same loss burst, is lost too (two RTOs).  Figures are the
primary's ``oracle_waits`` rows, summed.

Not held:
- 0.7 % in 32-64 ms and 0.5 % in 64-128 ms: a commit that arrives t ms into a ~205 ms stall
  waits 205 - t, so waits of 32-64 ms are arrivals 141-173 ms in and waits of 64-128 ms
  arrivals 77-141 ms in.  Sessions that are stuck commit no more, so arrivals thin out as a
  stall goes on: any such population gives at least twice as many waits in 64-128 ms as in
  32-64 ms, the seed fewer.  Its remote writes show none in 32-128 ms, so these waits have a
  cause the seed does not show (its local write histogram is not printed; its background
  waits, printed down to 0.56 % of their time, show no wait of LGWR for the other instance's
  SCN ack; the simulation gives under 0.001 % in each, for seeds 0-2).

Seed 003 ("Oracle Database Migrated to Cloud Starts Experiencing 'log file sync' Waits"), its
AWR tables after the switchover (a 15-minute interval): log file sync 348,922 waits averaging
470 ms; % of waits <2ms 6.0, <4ms 29.2, <8ms 5.5, <16ms 4.2, <32ms 5.8, <=1s 42.1, >1s 7.2, and
of the 23.5K over 1 s (its second table) 93.2 % under 2 s, 1.7 % 2-4 s (~400 waits) and 5.1 %
4-8 s (~1,200 waits: the capped volume's holds at a steady pace, each holding every session's
commit, which arrive within its first second: three of 4.8 s and one of 3 s in the 15 minutes,
as the allowance's deficit differs from one refill to the next); the primary had no relevant
load during the spikes; its 11.2 LGWR traced "log write elapsed time" from 505 ms up.  Its
5.5 % in 4-8 ms is read through the collector's microsecond buckets (4.096-8.192 ms), which the
calm SRL write of 1.03 ms is set for.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from sgmon.fields import ORACLE_WAITS
from sgmon.sim import SimPair

START = 1_800_000_000.0
NAMES = ("log file sync", "SYNC Remote Write", "Redo Transport MISC", "log file parallel write")
MICRO = 1.024
"""The collector reads V$EVENT_HISTOGRAM_MICRO: a bucket's upper bound is 2^k microseconds,
1.024 times the upper bound (ms) of the AWR's V$EVENT_HISTOGRAM bucket it falls in."""


@dataclass
class Waits:
    """One event's waits over a stretch as the collector reads them: count, average (ms), share
    (%) per AWR bucket (upper bound, ms; None: the open bucket)."""

    n: float
    avg_ms: float
    pct: dict[float | None, float]

    def share(self, lo_ms: float, hi_ms: float) -> float:
        """% of the waits in [lo, hi) ms (bucket b holds [b/2, b) ms)."""
        inf = float("inf")
        return sum(
            p
            for b, p in self.pct.items()
            if lo_ms <= (inf if b is None else b / 2) * 1.0001 and (b or inf) <= hi_ms * 1.0001
        )


def _after_onset(
    scenario: str, seconds: int, seed: int = 0, onset: float = 30.0
) -> tuple[dict[str, Waits], SimPair]:
    """The primary's ``oracle_waits`` rows of ``seconds`` ticks after the onset, summed."""
    pair = SimPair(scenario, seed=seed, start=START, onset=onset)
    while pair.t < onset:
        pair.step()
    n = dict.fromkeys(NAMES, 0.0)
    ms = dict.fromkeys(NAMES, 0.0)
    hist: dict[str, dict[float | None, float]] = {name: {} for name in NAMES}
    for _ in range(seconds):
        primary = next(f for f in pair.step() if f.host == "primary")
        rows = primary.collectors[ORACLE_WAITS.name].rows
        for name in NAMES:
            row = rows.get(name)
            n[name] += ORACLE_WAITS.waits.of(row) or 0.0
            ms[name] += ORACLE_WAITS.time_waited.of(row) or 0.0
            for bound, count in getattr(ORACLE_WAITS.hist.of(row), "pairs", ()):
                b = None if bound is None else bound / MICRO
                hist[name][b] = hist[name].get(b, 0.0) + count
    out = {
        name: Waits(n[name], ms[name] / n[name], {b: 100 * c / n[name] for b, c in h.items()})
        for name, h in hist.items()
    }
    return out, pair


Figure = tuple[str, float, Callable[[dict[str, Waits], float], float]]
"""(what the seed cites, its value, the same figure of the simulated waits over ``seconds``)."""

SEED001: tuple[Figure, ...] = (
    ("log file sync waits/s", 15404 / 30, lambda w, s: w["log file sync"].n / s),
    ("log file sync avg ms", 15.90, lambda w, s: w["log file sync"].avg_ms),
    ("log file sync % <32ms", 94.8, lambda w, s: w["log file sync"].share(0, 32)),
    ("log file sync % 128-256ms", 3.7, lambda w, s: w["log file sync"].share(128, 256)),
    ("log file sync % 256-512ms", 0.2, lambda w, s: w["log file sync"].share(256, 512)),
    ("log file sync % 512ms-1s", 0.2, lambda w, s: w["log file sync"].share(512, 1024)),
    ("SYNC Remote Write waits/s", 6335 / 30, lambda w, s: w["SYNC Remote Write"].n / s),
    ("SYNC Remote Write avg ms", 4.34, lambda w, s: w["SYNC Remote Write"].avg_ms),
    ("SYNC Remote Write % <32ms", 99.1, lambda w, s: w["SYNC Remote Write"].share(0, 32)),
    ("SYNC Remote Write % 128-256ms", 0.8, lambda w, s: w["SYNC Remote Write"].share(128, 256)),
    ("Redo Transport MISC avg ms", 4.59, lambda w, s: w["Redo Transport MISC"].avg_ms),
    ("log file parallel write waits/s", 6297 / 30,
     lambda w, s: w["log file parallel write"].n / s),
    ("log file parallel write avg ms", 0.54, lambda w, s: w["log file parallel write"].avg_ms),
)  # fmt: skip
OVER_1S = 7.2  # % of seed 003's log file syncs over 1 s, which its second table splits
SEED003: tuple[Figure, ...] = (
    ("log file sync waits/s", 348922 / 900, lambda w, s: w["log file sync"].n / s),
    ("log file sync avg ms", 470.0, lambda w, s: w["log file sync"].avg_ms),
    ("log file sync % <2ms", 6.0, lambda w, s: w["log file sync"].share(0, 2)),
    ("log file sync % 2-4ms", 29.2, lambda w, s: w["log file sync"].share(2, 4)),
    ("log file sync % 4-8ms", 5.5, lambda w, s: w["log file sync"].share(4, 8)),
    ("log file sync % 8-16ms", 4.2, lambda w, s: w["log file sync"].share(8, 16)),
    ("log file sync % 16-32ms", 5.8, lambda w, s: w["log file sync"].share(16, 32)),
    ("log file sync % 32ms-1s", 42.1, lambda w, s: w["log file sync"].share(32, 1024)),
    ("log file sync % >1s", OVER_1S, lambda w, s: w["log file sync"].share(1024, 1e9)),
    ("of those >1s, % <2s", 93.2,
     lambda w, s: 100 * w["log file sync"].share(1024, 2048) / w["log file sync"].share(1024, 1e9)),
    ("of those >1s, % 2-4s", 1.7,
     lambda w, s: 100 * w["log file sync"].share(2048, 4096) / w["log file sync"].share(1024, 1e9)),
    ("of those >1s, % 4-8s", 5.1,
     lambda w, s: 100 * w["log file sync"].share(4096, 8192) / w["log file sync"].share(1024, 1e9)),
)  # fmt: skip


def measured(figures: tuple[Figure, ...], waits: dict[str, Waits], seconds: int) -> list:
    """(figure, cited, simulated) for each of ``figures``."""
    return [(name, cited, how(waits, seconds)) for name, cited, how in figures]


def _outside(rows: list) -> list:
    """The rows more than 25 % away from what the seed cites."""
    return [r for r in rows if abs(r[2] / r[1] - 1.0) > 0.25]


RTO_STALL_S = 1800
"""Seed 001's 0.2 % in 512 ms-1 s and 0.2 % in 256-512 ms are ~31 waits each in its 30 s: two
or three loss bursts.  The simulation's are as few per 30 s, so its run is half an hour long:
its shares are then their expectations within ~10 %, not the draw of a few bursts."""


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rto_stall_is_seed_001(seed: int) -> None:
    waits, pair = _after_onset("rto-stall", RTO_STALL_S, seed)
    pair.close()
    rows = measured(SEED001, waits, RTO_STALL_S)
    assert not _outside(rows), rows
    # the stalls are retransmission timeouts: nothing between the round trip and the RTO
    assert waits["SYNC Remote Write"].share(32, 128) < 0.05


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_standby_iops_cap_is_seed_003(seed: int) -> None:
    waits, pair = _after_onset("standby-iops-cap", 900, seed)  # the AWR interval: 15 minutes
    try:
        rows = measured(SEED003, waits, 900)
        assert not _outside(rows), rows
        # the primary's data disk carries the cache reads without a queue (no relevant load)
        os_rows = next(f for f in pair.step() if f.host == "primary").collectors["disk"].rows
        assert max(r["util"] for r in os_rows.values()) < 60
    finally:
        pair.close()


def test_11g_lgwr_warns_only_from_500ms() -> None:
    """Seed 003's primary is 11.2.0.4 (the cascade layout): its LGWR writes a 'log write
    elapsed time' warning only for a write of 500 ms or more."""
    pair = SimPair("cascade-iops-cap", seed=0, start=START, onset=10.0)
    try:
        while pair.t < 200:
            pair.step()
        text = pair.writers["primary"].paths["lgwr"].read_text()
    finally:
        pair.close()
    ms = [int(w.split("time ")[1].split("ms")[0]) for w in text.splitlines() if "elapsed" in w]
    assert ms and min(ms) >= 500, ms[:5]
