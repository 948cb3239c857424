"""The topology itself: the primary's instances, their destinations and each standby's place
(on the commit path, or a lag risk only), and how it reads in words."""

from __future__ import annotations

from dataclasses import dataclass, field

from sgmon.topology.dests import Dest

COMMIT_PATH, LAG_RISK = "commit path", "lag risk"
"""A standby's or far sync instance's place (``Topology.places``)."""


@dataclass(frozen=True, slots=True)
class Topology:
    """The primary's instances (and why they were taken as such), its destinations, each host's
    place."""

    primaries: tuple[str, ...]
    """The primary's instances (RAC: one host per instance, each with its own LGWR, thread and
    NSS socket); empty when there is no primary."""
    why: str
    dests: tuple[Dest, ...] = ()
    standbys: tuple[str, ...] = ()
    far_sync: frozenset[str] = frozenset()
    notes: tuple[str, ...] = ()
    places: dict[str, str] = field(default_factory=dict)
    """host -> "commit path" or "lag risk" (standbys and far sync instances only)."""
    onward: tuple[Dest, ...] = ()
    """The standbys' and far sync instances' own destinations that ship (cascade, far sync)."""
    owners: dict[str, str] = field(default_factory=dict)
    """Redo thread (as text) -> the primary instance that writes it (the first, if two say so)."""

    def thread_name(self, thread: object) -> str:
        """``thread 1 (node1)``: a thread and the primary instance writing it, when known."""
        who = self.owners.get(str(thread))
        return f"thread {thread} ({who})" if who else f"thread {thread}"

    @property
    def primary(self) -> str | None:
        """The (first) primary instance, whose destinations are read; None without one."""
        return self.primaries[0] if self.primaries else None

    @property
    def mapped(self) -> bool:
        """Whether any destination was mapped to a watched host (else every standby is assumed
        on the commit path)."""
        return any(d.hosts for d in self.dests)

    def on_commit_path(self, host: str) -> bool:
        """Whether a fault on ``host`` can slow commits: the primary, a SYNC destination's host,
        or any standby while the destinations are not mapped."""
        return host in self.primaries or self.places.get(host, COMMIT_PATH) == COMMIT_PATH

    def fast_sync(self, host: str) -> bool:
        """Whether ``host`` is a Fast Sync destination (SYNC NOAFFIRM, 12.1 on): it acknowledges
        redo on receipt, so its SRL writes, and the disk under them, are off the commit path
        (seed 000: Fast Sync "eliminates slow I/O on a standby from impacting production")."""
        mine = [d for d in self.dests if host in d.hosts and d.commit_path]
        return bool(mine) and all(d.affirm.upper() == "NO" for d in mine)

    def cascaded(self, host: str) -> bool:
        """Whether a watched standby receives from somewhere else than the primary (no
        destination of the primary ships to it, while others are mapped or a standby's does)."""
        return (
            host in self.standbys
            and not any(host in d.hosts for d in self.dests)
            and (self.mapped or self.feeder(host) is not None)
        )

    def feeder(self, host: str) -> Dest | None:
        """The standby's or far sync instance's destination that ships to ``host``."""
        return next((d for d in self.onward if host in d.hosts), None)

    def upstream(self, host: str) -> str:
        """``cascaded from B (dest_2 ASYNC)``, ``behind far sync fs1 (dest_3 ASYNC)`` for a
        host no destination of the primary ships to but another watched host's does; else
        empty."""
        d = self.feeder(host)
        if d is None or any(host in p.hosts for p in self.dests):
            return ""
        how = "behind far sync" if d.source in self.far_sync else "cascaded from"
        return f"{how} {d.source} ({d.inst} {d.mode_text()})"

    def sync_standbys(self) -> list[str]:
        """The standbys (and far sync instances) on the commit path, in destination order."""
        return [h for h in self.standbys if self.places.get(h) == COMMIT_PATH]

    def named(self) -> str:
        """``node1 + node2 (RAC)``, or the one primary's name, or ``none``."""
        if len(self.primaries) > 1:
            return f"{' + '.join(self.primaries)} (RAC)"
        return self.primary or "none"

    def summary(self) -> str:
        """One line: the primary and why, the commit path, the lag risks, the unmonitored."""
        parts = [f"primary {self.named()} ({self.why})"]
        if self.standbys:
            path = self.sync_standbys()
            parts.append(f"commit path: {', '.join(path) or 'none'}")
            risk = [h for h in self.standbys if h not in path]
            if risk:
                parts.append(f"lag risk only: {', '.join(risk)}")
        lost = [d for d in self.dests if not d.hosts]
        if lost:
            parts.append(
                "unmonitored: "
                + ", ".join(f"{d.inst} {d.target} ({d.mode_text()}{d.behind()})" for d in lost)
            )
        return "; ".join(parts)

    def lines(self) -> list[str]:
        """The topology in words, one line each (``config --check``)."""
        out = [f"primary: {self.named()} ({self.why})"]
        for d in self.dests:
            out.append(f"{d.describe()}: {COMMIT_PATH if d.commit_path else 'lag risk only'}")
        for d in self.onward:
            out.append(f"{d.source} {d.describe()}: onward, off the commit path")
        for h in self.standbys:
            kind = "far sync" if h in self.far_sync else "standby"
            out.append(f"{kind} {h}: {self.places.get(h, COMMIT_PATH)} ({self._reason(h)})")
        return out + list(self.notes)

    def _reason(self, host: str) -> str:
        """Why a standby has its place: the primary's destination that ships to it, what feeds
        it instead, or why none is known."""
        dest = next((d.inst for d in self.dests if host in d.hosts), None)
        if dest is not None:
            return dest
        if up := self.upstream(host):
            return up
        if self.mapped:
            return "cascaded or not receiving: no destination of the primary ships to it"
        if self.dests and not any(d.commit_path for d in self.dests):
            return "the primary has no SYNC destination"
        return "assumed: no destination is mapped to a watched host yet"
