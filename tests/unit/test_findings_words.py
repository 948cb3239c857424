"""A finding's words agree with the table beside it: a chain's title states the value now, or
says plainly that it is the peak of the last seconds."""

from __future__ import annotations

import re

from sgmon.analysis import Analyzer
from sgmon.sim import SimPair
from sgmon.verdicts import Outlier

START = 1_800_000_000.0


def _lfs(value: float) -> Outlier:
    return Outlier("p", "oracle_waits", "log file sync", "p99", "crit", value, 2.0, "", unit="ms")


def test_a_peak_is_said_to_be_one() -> None:
    from sgmon.analysis.context import chain_label

    assert chain_label(_lfs(2.0), 256.0, 10.0) == "log file sync p99 <256 ms (10 s peak)"
    assert chain_label(_lfs(256.0), 256.0, 10.0) == "log file sync p99 <256 ms"


def test_the_chain_title_is_the_table_value_now_or_its_peak_said_so() -> None:
    """rto-stall: a 200 ms retransmission puts log file sync's p99 in the 256 bucket for a tick
    or two; the title beside the table said ``p99 <256 ms`` while the row read 2.  The chain
    leads with log file sync or with the remote write, whichever the outliers rank first."""
    pair = SimPair("rto-stall", seed=1, start=START, onset=20.0)
    a = Analyzer()
    p99s: dict[str, list[float]] = {e: [] for e in ("log file sync", "SYNC Remote Write")}
    said = {"now": 0, "peak": 0}
    try:
        while pair.t < 80:
            frames = {f.host: f for f in pair.step()}
            for f in frames.values():
                a.feed(f)
            for event, seen in p99s.items():
                seen.append(frames["primary"].value("oracle_waits", event, "p99") or 0.0)
            top = next((f for f in a.state().findings if f.active), None)
            title = top.title if top is not None else ""
            m = re.match(
                r"(log file sync|SYNC Remote Write) p99 <(\d+) ms( \((\d+) s peak\))? <-", title
            )
            if m is None:
                continue
            shown, seen = float(m.group(2)), p99s[m.group(1)]
            if m.group(3):
                said["peak"] += 1
                assert shown == max(seen[-10:]) > seen[-1], (title, seen[-10:])
            else:
                said["now"] += 1
                assert shown == seen[-1], (title, seen[-1])
    finally:
        pair.close()
    assert said["now"] and said["peak"], said


def test_one_latency_is_one_colour() -> None:
    """``SYNC Remote Write 80.7`` was warn beside a plain ``Redo Transport MISC 80.7`` (the same
    remote write seen from NSS), and ``r_await 74.7`` warn beside ``w_await 74.7`` crit."""
    from sgmon.grading import Grader

    g = Grader()

    def grade(collector: str, inst: str, name: str, v: float) -> str:
        return g.grade("h", collector, inst, name, v, {}, 8)

    for v in (5.0, 12.0, 80.7):
        srw = grade("oracle_waits", "SYNC Remote Write", "avg", v)
        assert grade("oracle_waits", "Redo Transport MISC", "avg", v) == srw, v
        assert grade("oracle_waits", "LNS wait on SENDREQ", "avg", v) == srw, v
    for v in (5.0, 20.0, 74.7):
        assert grade("disk", "sdb", "r_await", v) == grade("disk", "sdb", "w_await", v), v
