"""The standby volume under an IOPS cap: its queue fills in bursts (seed 003's lost write
protection reads in front of the SRL writes), and an SRL write in a burst waits behind them.

The cap itself is a cloud volume's allowance (a token bucket): while recovery's reads ask for
more than the cap, they use up the allowance at a steady rate, and each time it runs out the
volume holds every I/O, the SRL writes among them, until it has refilled.  Seed 003: "the amount
of IOs was being capped artificially at approx. 250,000 blocks/s" (flat, on both capped
standbys alike) while the reads ran, and ~1,200 of its log file syncs in 4-8 s in a 15-minute
interval, and ~400 in 2-4 s: a few holds of a few seconds each, at the pace of a steady demand
over a steady cap, so at about the same interval each time, and of about the same length but
every ``SHORT_EVERY``-th, which refills a smaller deficit (three holds of 4-8 s to one of 2-4 s
in those 15 minutes)."""

from __future__ import annotations

import random

from sgmon.sim.scenarios import Conditions

SHORT_EVERY = 4
"""Every this many holds, one lasts ``Conditions.short_hold_ms`` (seed 003: ~400 waits of 2-4 s
beside ~1,200 of 4-8 s)."""


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
        self._holds_rng: random.Random | None = None
        """The holds' own generator (so that the phases' draws stay as they are)."""
        self._hold: tuple[float, float] | None = None
        """The allowance's hold now or next (start, end); None before the first I/O."""
        self._holds = 0
        """How many holds have begun (the current one included)."""

    def held_ms(self, at: float, ms: float, c: Conditions) -> float:
        """How long an I/O issued at ``at`` that takes ``ms`` on its own takes (ms): until the
        end of a hold it meets.  The first hold comes ``hold_every`` after the first I/O asked
        about (the cap's onset: the allowance is whole then), each next one ``hold_every``
        later, and each lasts ``hold_ms`` (every ``SHORT_EVERY``-th ``short_hold_ms``), each give
        or take 3 %."""
        if not c.hold_every:
            return ms
        draw = self._seeded()[1].random
        start, end = self._hold or (at, at)
        while end <= at:  # an I/O issued at ``at`` ends after the hold it meets
            self._holds += 1
            short = c.short_hold_ms > 0 and self._holds % SHORT_EVERY == 0
            start += c.hold_every * (0.97 + 0.06 * draw())
            length = c.short_hold_ms if short else c.hold_ms
            end = start + length / 1000.0 * (0.97 + 0.06 * draw())
        self._hold = (start, end)
        return max(ms, (end - at) * 1000.0) if start <= at + ms / 1000.0 else ms

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
        if not self._phases:
            self._phases = [(at, at, False, False)]
        draw, phases = self._seeded()[0].random, self._phases
        while phases[-1][1] <= at:
            _, start, was, _ = phases[-1]
            mean = c.cap_burst_s if not was else c.cap_burst_s * (1.0 - c.cap_duty) / c.cap_duty
            near = was and c.near_share > 0 and draw() < c.near_share
            phases.append((start, start + (0.75 + 0.5 * draw()) * mean, not was, near))
        return phases

    def _seeded(self) -> tuple[random.Random, random.Random]:
        """The phases' and the holds' generators, seeded by one draw of the commit model's at
        the first I/O asked about."""
        if self._rng is None or self._holds_rng is None:
            seed = self._seeder.random()
            self._rng, self._holds_rng = random.Random(seed), random.Random(f"{seed} holds")
        return self._rng, self._holds_rng
