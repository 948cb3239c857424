"""The rto_stall finding with the retrans collector's events, on frames built by hand as
tests/unit/test_analysis.py builds them: it cites the last retransmission to the millisecond, says
whether a tail-loss probe or an RTO repaired it, lines it up with the traced write it stalled,
and says the counters are the source where the events are unavailable.  (The same finding on a
real recording: tests/system/kernel/test_retrans.py,
test_check_names_what_repaired_the_stall_end_to_end.)
"""

from __future__ import annotations

import time
from dataclasses import replace

import pytest
from kits.analysis import T0, frame
from test_analysis import _run

from sgmon.model import CollectorResult, Event, Status

SOCK = "10.0.0.1:40000>10.0.0.2:1522"


def _stalled(
    kind: str | None,
    status: Status = Status.OK,
    error: str | None = None,
    writes: tuple[Event, ...] = (),
    rtos: tuple[float, ...] = (204.0, 204.0, 204.0),
) -> list:
    """Three ticks of a DG socket retransmitting with rto 204 ms, and the retrans collector's
    row for it (its last event ``kind`` at T0 + 2.417), or its status without rows; the trace
    collector's ``writes`` come with the second tick; ``rtos``: the socket's rto at each tick."""
    ticks = []
    for t in range(3):
        f = frame(
            "p",
            t,
            role="primary",
            events=writes if t == 1 else (),
            tcp={SOCK: {"retransmits": 1, "rto": rtos[t]}},
        )
        row = {"last_at": T0 + 2.417, "last_kind": kind, "retransmits": 1, kind: 1}
        res = CollectorResult(status, rows={SOCK: row} if kind else {}, error=error)
        ticks.append([replace(f, collectors={**f.collectors, "retrans": res})])
    return ticks


@pytest.mark.parametrize(
    ("kind", "says"),
    [
        ("tlp", "a tail-loss probe: the congestion state never entered Loss"),
        ("rto", "an RTO expiry: the congestion state entered Loss"),
    ],
)
def test_rto_stall_cites_the_retransmit_and_what_it_was(kind: str, says: str) -> None:
    stall = next(f for f in _run(_stalled(kind)) if f.rule == "rto_stall")
    at = time.strftime("%H:%M:%S", time.localtime(T0 + 2)) + ".417"
    cited = [e for e in stall.evidence if e.startswith("retransmit at ")]
    assert len(cited) == 1 and cited[0].startswith(f"retransmit at {at}, RTO 204 ms: {says}")
    assert cited[0].endswith(f"(this tick: 1 {kind})")
    advice = next(e for e in stall.evidence if "fix: ip route change" in e)
    assert "rto_min shortens the tail-loss probe and the RTO alike" in advice
    assert ("a tail-loss probe, not an RTO" in advice) == (kind == "tlp")


@pytest.mark.parametrize(
    ("rtos", "cited"),
    [
        ((204.0, 204.0, 205.0), 205),  # it moves with the round trip: the pane's, now
        ((204.0, 204.0, 408.0), 204),  # backed off after an expiry: the rto a loss waits first
    ],
)
def test_rto_stall_cites_the_rto_the_pane_shows_unless_it_is_backed_off(
    rtos: tuple[float, ...], cited: int
) -> None:
    stall = next(f for f in _run(_stalled("rto", rtos=rtos)) if f.rule == "rto_stall")
    assert f"DG socket retransmits, rto {cited} ms" in stall.title


def test_rto_stall_says_the_counters_are_the_source_without_events() -> None:
    why = "no write access to /sys/kernel/tracing/instances (needs root); retransmissions ..."
    stall = next(f for f in _run(_stalled(None, Status.UNAVAILABLE, why)) if f.rule == "rto_stall")
    assert not any(e.startswith("retransmit at ") for e in stall.evidence)
    assert (
        "source: the tcp counters (no retransmission events: no write access to "
        "/sys/kernel/tracing/instances (needs root))" in stall.evidence
    )


def _clock(t: float) -> str:
    """T0 + x as the finding prints it (T0 is a whole second)."""
    whole, ms = divmod(round((t - T0) * 1000), 1000)
    return time.strftime("%H:%M:%S", time.localtime(T0 + whole)) + f".{ms:03d}"


@pytest.mark.parametrize(
    ("write", "cited"),
    [  # the LGWR warning is stamped at the write's end; a remote write split at NSS's send
        (Event(T0 + 2.623, "oracle_trace", "lgwr_slow_write", "lgwr", "log write 206 ms", 206.0),
         f", LGWR write 206 ms {_clock(T0 + 2.417)}-{_clock(T0 + 2.623)}: "),
        (Event(T0 + 2.211, "oracle_trace", "remote_write_split", "remote", "...", 412.0),
         f", remote write 412 ms {_clock(T0 + 2.211)}-{_clock(T0 + 2.623)}: "),
        (Event(T0 + 1.2, "oracle_trace", "lgwr_slow_write", "lgwr", "log write 150 ms", 150.0),
         ": "),  # ended a second before the retransmission: nothing to line up
    ],
)  # fmt: skip
def test_rto_stall_lines_the_retransmit_up_with_the_write_it_stalled(
    write: Event, cited: str
) -> None:
    stall = next(f for f in _run(_stalled("tlp", writes=(write,))) if f.rule == "rto_stall")
    line = next(e for e in stall.evidence if e.startswith("retransmit at "))
    assert line.startswith(f"retransmit at {_clock(T0 + 2.417)}, RTO 204 ms{cited}a tail-loss")
