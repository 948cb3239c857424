"""The simulation speaks the seeds' numbers: each seed scenario's waits, after the onset, are
held within 25 % of every figure of its seed's AWR tables, for three seeds of the simulation.

Seed 001 ("A story about Data Guard and network latency"), its AWR tables of a 30 s interval:
log file sync 15,404 waits averaging 15.90 ms, 94.8 % of them under 32 ms and 3.7 % in
128-256 ms; SYNC Remote Write 6,335 waits averaging 4.34 ms, 99.1 % under 32 ms and 0.8 % in
128-256 ms; Redo Transport MISC averaging 4.59 ms; log file parallel write 6,297 waits averaging
0.54 ms.  Not held: its 0.7 % (32-64 ms), 0.5 % (64-128 ms), 0.2 % (256-512 ms) and 0.2 %
(512 ms-1 s) of log file syncs.  The first two are sessions that reach their commit 80-175 ms
into a 200 ms stall, while its 14 commits held per stall (801 waits over 64 ms for 57 stalled
remote writes) at 513 commits a second leave a session ~11 ms between commits: one population
of sessions cannot give both; the last two wait longer than any remote write it shows (none
over 256 ms), so their cause is outside the SYNC path the simulation models.  Held but low: the
average (12-13 ms for 15.90): its commits under 32 ms take ~6 ms, twice a remote write without a
loss, the simulation's ~4.5 ms; the rest (adaptive log file sync polling, likely) is not
modelled, as the what-if replay could not carry it (it fits LGWR overhead per write).

Seed 003 ("Oracle Database Migrated to Cloud Starts Experiencing 'log file sync' Waits"), its
AWR tables after the switchover (a 15-minute interval): log file sync 348,922 waits averaging
470 ms; % of waits <2ms 6.0, <4ms 29.2, <8ms 5.5, <16ms 4.2, <32ms 5.8, <=1s 42.1, >1s 7.2, and
of the 23.5K over 1 s (its second table) 93.2 % under 2 s, 1.7 % 2-4 s, 5.1 % 4-8 s; the primary
had no relevant load during the spikes; its 11.2 LGWR traced "log write elapsed time" from
505 ms up.  Not held: 2-4 s and 4-8 s (about 1,200 waits from a handful of stalls in 15
minutes, each holding every session's commit: a handful of random events does not repeat
within 25 % from seed to seed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from sgmon.sim import SimPair
from sgmon.sim.standin import Buckets

START = 1_800_000_000.0


@dataclass
class Waits:
    """One event's waits over a stretch: count, average (ms), share (%) per ms bucket."""

    n: int
    avg_ms: float
    pct: dict[int, float]

    def share(self, lo_ms: float, hi_ms: float) -> float:
        """% of the waits in [lo, hi) ms (bucket b holds [b/2, b) ms)."""
        return sum(p for b, p in self.pct.items() if lo_ms <= b / 2 and b <= hi_ms)


def _after_onset(
    scenario: str, seconds: int, seed: int = 0, onset: float = 30.0
) -> tuple[dict[str, Waits], SimPair]:
    pair = SimPair(scenario, seed=seed, start=START, onset=onset)
    node = next(iter(pair.nodes.values()))[1]
    names = ("log file sync", "SYNC Remote Write", "Redo Transport MISC", "log file parallel write")

    def snap(b: Buckets) -> tuple[int, float, dict[int, int]]:
        return b.waits, b.time_us, dict(b.milli)

    while pair.t < onset:
        pair.step()
    before = {n: snap(node.events[n]) for n in names}
    for _ in range(seconds):
        pair.step()
    out = {}
    for n in names:
        (w0, t0, h0), (w1, t1, h1) = before[n], snap(node.events[n])
        hist = {b: c - h0.get(b, 0) for b, c in h1.items()}
        out[n] = Waits(w1 - w0, (t1 - t0) / (w1 - w0) / 1000, {
            b: 100 * c / (w1 - w0) for b, c in hist.items()
        })  # fmt: skip
    return out, pair


Figure = tuple[str, float, Callable[[dict[str, Waits], float], float]]
"""(what the seed cites, its value, the same figure of the simulated waits over ``seconds``)."""

SEED001: tuple[Figure, ...] = (
    ("log file sync waits/s", 15404 / 30, lambda w, s: w["log file sync"].n / s),
    ("log file sync avg ms", 15.90, lambda w, s: w["log file sync"].avg_ms),
    ("log file sync % <32ms", 94.8, lambda w, s: w["log file sync"].share(0, 32)),
    ("log file sync % 128-256ms", 3.7, lambda w, s: w["log file sync"].share(128, 256)),
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
)  # fmt: skip


def measured(figures: tuple[Figure, ...], waits: dict[str, Waits], seconds: int) -> list:
    """(figure, cited, simulated) for each of ``figures``."""
    return [(name, cited, how(waits, seconds)) for name, cited, how in figures]


def _outside(rows: list) -> list:
    """The rows more than 25 % away from what the seed cites."""
    return [r for r in rows if abs(r[2] / r[1] - 1.0) > 0.25]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rto_stall_is_seed_001(seed: int) -> None:
    waits, pair = _after_onset("rto-stall", 300, seed)
    pair.close()
    assert not _outside(measured(SEED001, waits, 300)), measured(SEED001, waits, 300)
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
