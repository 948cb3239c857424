"""What the simulation itself knows an incident left unprotected, to hold the analysis' counts to.

The analysis reads only the frames; this reads the simulation's own state after each step: the
commits and redo of every interval an instance wrote while its SYNC destination did not ship
(``Conditions.transport_stopped``, or a silent link from its first second), or while the far sync
it ships to forwarded to no standby (``Conditions.onward_down``), and the redo an
off-path standby has not received (each thread's blocks generated and not received, or, for a
standby whose volume makes it fall behind, the redo of the last ``lag`` seconds).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from sgmon.sim.pair import SimPair

KEEP = 3600
"""Intervals of redo kept to weigh an off-path standby's lag against."""


@dataclass(slots=True)
class Truth:
    """Running totals of one simulated run, updated by ``step`` after each of the pair's."""

    pair: SimPair
    commits: float = 0.0
    redo_bytes: float = 0.0
    seconds: float = 0.0
    made: deque[tuple[float, float]] = field(default_factory=lambda: deque(maxlen=KEEP))
    """(simulated end time, redo bytes) of each interval, every instance's."""

    def step(self) -> None:
        """Count the interval the pair has just simulated."""
        tick = self.pair.last
        if tick is None:
            return
        self.made.append((self.pair.t, tick.st.redo_bytes + tick.st.lwd_bytes))
        exposed = [
            st
            for name, st in tick.shipped.items()
            if tick.conds[name].transport_stopped
            or tick.conds[name].link_down
            or tick.conds[name].onward_down  # acknowledged by the far sync, forwarded nowhere
        ]
        if exposed:
            self.seconds += self.pair.interval
        for st in exposed:
            self.commits += st.commits
            self.redo_bytes += st.redo_bytes + st.lwd_bytes

    def unreceived(self, host: str) -> float:
        """The redo bytes the off-path standby ``host`` has not received now."""
        standby = self.pair.offpath[host]
        backlog = sum((r.made - r.got) * 512 for r in standby.threads.values())
        since = self.pair.t - standby.lag
        behind = sum(b for t, b in self.made if t > since + 1e-9)
        return max(float(backlog), behind)
