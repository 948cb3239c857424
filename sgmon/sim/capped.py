"""The standby volume under an IOPS cap: its queue fills in bursts (seed 003's lost write
protection reads in front of the SRL writes), and an SRL write in a burst waits behind them."""

from __future__ import annotations

import random

from sgmon.sim.scenarios import Conditions


class CappedVolume:
    """The capped volume's phases (start, end, queue full), in simulated seconds: bursts of
    ``cap_burst_s`` on average, ``cap_duty`` of the time (each phase 0.75 to 1.25 times its
    mean, so that a second holds some of a burst)."""

    def __init__(self, rng: random.Random) -> None:
        """``rng``: the commit model's generator, drawn once, at the first phase asked for, for
        the seed of the phases' own (so that the other draws stay as in every other scenario)."""
        self._seeder = rng
        self._rng: random.Random | None = None
        self._phases: list[tuple[float, float, bool, bool]] = []
        """From the interval being simulated on: (start, end, full, near)."""

    def full_at(self, at: float, c: Conditions) -> bool:
        """Whether the queue is full at ``at``."""
        return next(p[2] for p in self._phases_to(at, c) if at < p[1])

    def near_at(self, at: float, c: Conditions) -> bool:
        """Whether the queue, not full at ``at``, is short and never empty (see
        ``Conditions.near_share``)."""
        return next(p[3] for p in self._phases_to(at, c) if at < p[1])

    def full_share(self, t0: float, t1: float, c: Conditions) -> float:
        """Share of [t0, t1) in a burst; the phases before t0 are dropped."""
        phases = self._phases_to(t1, c)
        full = sum(max(0.0, min(p[1], t1) - max(p[0], t0)) for p in phases if p[2])
        self._phases = [p for p in phases if p[1] > t1]
        return full / (t1 - t0)

    def _phases_to(self, at: float, c: Conditions) -> list[tuple[float, float, bool, bool]]:
        """The phases, drawn until one ends after ``at``."""
        if self._rng is None:
            self._rng = random.Random(self._seeder.random())
            self._phases = [(at, at, False, False)]
        draw, phases = self._rng.random, self._phases
        while phases[-1][1] <= at:
            _, start, was, _ = phases[-1]
            mean = c.cap_burst_s if not was else c.cap_burst_s * (1.0 - c.cap_duty) / c.cap_duty
            near = was and c.near_share > 0 and draw() < c.near_share
            phases.append((start, start + (0.75 + 0.5 * draw()) * mean, not was, near))
        return phases
