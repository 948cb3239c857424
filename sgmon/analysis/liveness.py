"""A host that stopped sending is news at once: a critical finding that names it and how long.

A host is silent when its last frame stands in for nothing heard (every collector stale: a
remote agent or its ssh link gone, a simulated host dead) or when no frame of it came for
``SILENT_INTERVALS`` intervals while the others' did.  What that means depends on the host's
place: a silent primary's commits cannot be seen (if its database is down, none completes); a
silent SYNC standby, if really gone, holds each commit for up to its destination's NET_TIMEOUT
(seed 000: "Signal commit success ... after NET_TIMEOUT threshold period expires"), then the
destination errors and commits go on unprotected.  Its numbers are last seen, not now: the
analysis drops its commit budget while it is silent.

Not a rule of ``sgmon.analysis.rules``: it is critical whatever the host's place (a rule's
finding about a host off the commit path becomes a lag risk, at most a warning), and it speaks
about a host that has no numbers for any rule to read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from sgmon.analysis.context import HostView
from sgmon.fields import ORACLE_DG
from sgmon.model import SILENT_INTERVALS, unheard
from sgmon.topology import Topology
from sgmon.units import fmt_num
from sgmon.verdicts import Finding

RULE = "host_silent"


def silent_since(view: HostView, now: float, interval: float) -> float | None:
    """When the host was last heard, if it is silent now (None: it is not)."""
    quiet = now - view.frame.time >= SILENT_INTERVALS * interval
    if not (quiet or unheard(view.frame)):
        return None
    return view.heard if view.heard is not None else view.frame.time


@dataclass(frozen=True, slots=True)
class Place:
    """A host's place on the commit path as last seen while it was heard: a silent host's
    frames no longer tell the topology which destination ships to it."""

    kind: str  # "primary", "SYNC standby", "far sync", or its role off the commit path
    dest: str = ""  # the primary's destination that ships to it (dest_2)


class Liveness:
    """The silent hosts' findings, from each host's place while it was last heard."""

    def __init__(self) -> None:
        self._places: dict[str, Place] = {}

    def findings(
        self, views: Mapping[str, HostView], topo: Topology, now: float, interval: float
    ) -> list[Finding]:
        """A critical finding per silent host; the places of the others are remembered."""
        primary = views.get(topo.primary or "")
        out = []
        for view in views.values():
            since = silent_since(view, now, interval)
            if since is None:
                self._places[view.name] = _place(view, topo)
                continue
            place = self._places.get(view.name) or Place(view.role or "host")
            out.append(_finding(view, since, now, place, topo, primary))
        return out


def _place(view: HostView, topo: Topology) -> Place:
    name = view.name
    if name in topo.primaries:
        return Place("primary")
    if view.role == "standby" and topo.on_commit_path(name):
        kind = "far sync" if name in topo.far_sync else "SYNC standby"
        dest = next((d.inst for d in topo.dests if name in d.hosts and d.commit_path), "")
        return Place(kind, dest)
    return Place(view.role or "host")


def _finding(
    view: HostView,
    since: float,
    now: float,
    place: Place,
    topo: Topology,
    primary: HostView | None,
) -> Finding:
    """The critical finding about one silent host: how long, why, and what it means here."""
    gone = fmt_num(max(0.0, now - since))
    kind, meaning = _meaning(view, place, topo, primary)
    reasons = {r.error for r in view.frame.collectors.values() if r.error}
    evidence = [
        (
            f"last frame with numbers {datetime.fromtimestamp(since, UTC):%H:%M:%S} UTC, {gone} s "
            "ago; the pane shows nothing of it as now"
        ),
        *sorted(reasons)[:1],
    ]
    return Finding(
        key=f"{RULE}:{view.name}:host",
        severity="crit",
        host=view.name,
        title=f"{view.name} ({kind}) sent nothing for {gone} s: {meaning}",
        evidence=evidence,
        series=[],
        rule=RULE,
        seed="000",
        start=now,
        score=40.0,  # above every cause: nothing else about this host can be known
    )


def _meaning(
    view: HostView, place: Place, topo: Topology, primary: HostView | None
) -> tuple[str, str]:
    """(its place, what its silence means for commits)."""
    check = "check the host, then its agent or ssh link"
    if place.kind == "primary" and topo.primary and topo.primary != view.name:
        return (
            "former primary",
            (
                f"{topo.primary} is the primary now, so no commit waits for it; it protects "
                "nothing until it is reinstated as a standby"
            ),
        )
    if place.kind == "primary":
        return (
            "primary",
            (
                "its commits cannot be seen; if its database is down no commit completes until it "
                f"is back or a standby is failed over to: {check}"
            ),
        )
    if place.kind in ("SYNC standby", "far sync"):
        timeout = (
            ORACLE_DG.net_timeout.at(primary.frame, place.dest)
            if place.dest and primary is not None
            else None
        )
        wait = f"NET_TIMEOUT {fmt_num(timeout)} s" if timeout else "its NET_TIMEOUT"
        which = f"{place.dest} " if place.dest else "its destination "
        return (
            place.kind,
            (
                f"if it is really down, each commit on the primary waits for it up to {wait}, then "
                f"{which}errors and commits go on unprotected; {check}"
            ),
        )
    return (place.kind, f"no commit waits for it, but its lag and apply cannot be seen: {check}")
