"""Stepping a simulated pair through one Analyzer, and frames made by hand, as the unit and the
system tests of the analysis use them."""

from __future__ import annotations

from collections.abc import Iterator

from sgmon.analysis import Analyzer
from sgmon.model import CollectorResult, Event, Frame, Status
from sgmon.sim import SimPair

T0 = 1_800_000_000.0
"""The instant the hand-made frames count from."""


def stepped(pair: SimPair, seconds: float, a: Analyzer | None = None) -> Iterator[Analyzer]:
    """Feed the pair's frames to one Analyzer (``a``, else a new one) until the pair's clock
    reaches ``seconds``, yielding it after each tick; the pair is closed at the end, also on
    failure."""
    a = a or Analyzer()
    try:
        while pair.t < seconds:
            for f in pair.step():
                a.feed(f)
            yield a
    finally:
        pair.close()


def analysed(pair: SimPair, seconds: float) -> Analyzer:
    """The Analyzer after the pair's run to ``seconds``."""
    a = Analyzer()
    for _ in stepped(pair, seconds, a):
        pass
    return a


def frame(
    host: str, t: float, role: str = "", events: tuple[Event, ...] = (), **collectors: dict
) -> Frame:
    """A frame with the given collectors' rows (interval 1 s)."""
    return Frame(
        host=host,
        time=T0 + t,
        seq=int(t),
        interval=1.0,
        role=role,
        collectors={k: CollectorResult(Status.OK, rows=v) for k, v in collectors.items()},
        events=events,
    )
