"""What-if predictions against the lab rerun with the change made: real sockets, real disks.

Two cases, each in a lab of its own (root, network namespaces, cgroup v1 blkio):

* ``rto_min``: loss toward the standby (nftables), the route's default 200 ms minimum RTO.
  log file sync under ``rto_min 10ms`` is predicted from that window, then the route is changed
  (``ip route change ... rto_min 10ms``) with the same loss and the next window measured.
* ``cap``: the standby's log device under an IOPS cap with concurrent writers (blkio), 24
  sessions each thinking 150 ms between commits.  The standby's redo write at its calm level
  (from the seconds before the cap) is predicted from the capped window, then the cap and its
  writers removed and the next window measured.

The prediction is made as ``sgmon check`` makes it, from the frames only (``Window`` and
``measured``); the rerun's log file sync is read from the primary's waits the same way.  The
bounds are those of bench/what_if.py: average and p50 within 20 %, p99 within one bucket.

With ``--again`` the rerun lasts twice as long and its second window is held against its first
by the same bounds: how far the lab's own outcome moves between two windows of one
configuration, which no prediction can be nearer than.

    sudo .venv/bin/python bench/what_if_lab.py [--seconds 30] [--case rto_min --case cap]
        [--rounds N] [--again]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from what_if import BOUND, BUCKETS, Row, now_of, table

from sgmon.analysis.whatif import Change, Window, measured, predict, timeouts
from sgmon.lab.run import Lab, LabOptions

WARM = 20.0  # seconds of the lab as built: the calm level (the calmer half of them: 8 s gave
# a calm log file sync of 0.43-0.71 ms from one run to the next), and its first writes settled
SETTLE = 3.0  # seconds after the fault is switched on left out of its window
AGAIN = "the rerun, next window"  # ``--again``'s row: the first rerun window against the next
Counted = tuple[float, float]
"""The remote writes that waited out a retransmission timeout: in the fault's window, in the
rerun's (``timeouts``)."""


@dataclass(frozen=True)
class Case:
    """One change: the fault the first window runs under, what is switched for the rerun, the
    prediction that answers it, the lab's options and the seconds after that switch left out
    of the rerun's window."""

    fault: str
    change: Change
    rerun: tuple[str, bool]  # (fault, on): the change made
    opts: dict
    settle: float


CASES = {
    "rto_min": Case("loss", Change("rto_min", 10.0), ("rto_min", True), {"loss_permille": 20},
                    SETTLE),
    "cap": Case("iops", Change("standby_write"), ("iops", False),
                {"sessions": 24, "think": 0.15}, 15.0),
}  # fmt: skip
"""2 % loss, as the lab's loss test: at 0.5 % half a minute holds only a handful of timeouts.
The DG socket takes the route's rto_min at its next RTT sample, and keeps the lower RTO once
the route's rto_min is removed again (measured: 16 ms for the rest of the run), so the two
windows cannot alternate.  Each log is a disk of its own in memory (``Lab``): on this machine's
disk the cap's writers slowed the primary's writes too and left the disk flushing for 10-15 s
after they stopped; the 15 s left out after the cap is removed stays, as the lab's latency
still drifts from one window to the next with whatever else runs.  Under the cap the lab's 4
sessions commit in step (each waits one whole slow write), unlike a database's many; 24
sessions thinking 150 ms commit about as often (160 a second) and slow down under the cap enough
(to 100-120) for the closed loop to be told from the commit rate (96 thinking 0.6 s moved it by
10 %, within the calm seconds' own spread)."""


def case_run(case: Case, seconds: float, reruns: int = 1) -> tuple[Window, float, float]:
    """Run ``case``'s lab: warm (the calm level), the fault, ``seconds`` of it, the change,
    ``reruns`` times ``seconds`` with it; its intervals, when the fault's window began and
    when the change was made."""
    window = Window()
    span = WARM + 2 * SETTLE + (1 + reruns) * seconds + case.settle + 30
    opts = LabOptions(duration=span, **case.opts)
    with Lab(opts) as lab:
        source = lab.source()
        try:

            def collect(s: float) -> None:
                for f in source.frames(s):
                    window(f)

            collect(WARM)
            lab.fault(case.fault)
            collect(SETTLE)
            start = time.time()
            collect(seconds)
            lab.fault(*case.rerun)
            changed = time.time()
            collect(case.settle + reruns * seconds)
            lab.check()
        finally:
            source.close()
    return window, start, changed


def case_rows(case: Case, seconds: float, again: bool = False) -> tuple[list[Row], Counted]:
    """``case`` run: the prediction made from the fault's window against the rerun's; with
    ``again``, a second rerun window as long, after the first, and a row that holds the first
    rerun against it as if it were the prediction: how far the lab's own outcome moves between
    two windows of one configuration, by the same bounds.  Also the writes that waited out a
    timeout in the fault's window and in the rerun's."""
    window, start, changed = case_run(case, seconds, 2 if again else 1)
    p, s = window.ticks["primary"], window.ticks["standby"]
    first = changed + case.settle
    before = measured(p, s, start, changed)
    after = measured(p, s, first, first + seconds if again else math.inf)
    assert before is not None and after is not None, "no commits in a window"
    pred = predict(before, (case.change,))[0]
    got = [Row("lab: " + case.fault, pred.name, pred.now, pred.predicted, now_of(after))]
    if again:
        second = measured(p, s, first + seconds, math.inf)
        assert second is not None, "no commits in the second rerun"
        was = now_of(after)
        got.append(Row("lab: " + case.fault, AGAIN, was, was, now_of(second)))
    return got, (timeouts(before), timeouts(after))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=30.0, help="each window (default 30)")
    ap.add_argument("--case", action="append", choices=list(CASES))
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument(
        "--again",
        action="store_true",
        help="a second rerun window, held against the first: the lab's own spread",
    )
    args = ap.parse_args()
    got = []
    for _ in range(args.rounds):
        for name in args.case or CASES:
            rows, (was, now) = case_rows(CASES[name], args.seconds, args.again)
            got += rows
            print("\n".join(table(rows).splitlines()[2:]), flush=True)
            print(f"timeouts: {was:.0f} in the window, {now:.0f} in the rerun", flush=True)
    print(table(got))
    bounds = f"(avg, p50 +-{BOUND:.0%}; p99 +-{BUCKETS})"
    same = [r for r in got if r.change == AGAIN]
    predicted = [r for r in got if r.change != AGAIN]
    print(f"\n{sum(r.holds() for r in predicted)} of {len(predicted)} within the bounds {bounds}")
    if same:
        print(f"the lab's rerun against itself: {sum(r.holds() for r in same)} of {len(same)}")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average at the end: {load}")


if __name__ == "__main__":
    main()
