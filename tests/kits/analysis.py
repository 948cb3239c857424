"""Stepping a simulated pair through one Analyzer, as the unit and the system tests of the
analysis do."""

from __future__ import annotations

from collections.abc import Iterator

from sgmon.analysis import Analyzer
from sgmon.sim import SimPair


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
