"""Which host is the primary, which standbys are on the commit path, and which only lag.

Seed 003's primary shipped SYNC AFFIRM to one standby and ASYNC to others, with a cascaded
standby behind the SYNC one; the IOPS cap hit two standbys, but only the SYNC one slowed commits.
So the analysis must know the topology, and it comes from the database: the primary's
V$ARCHIVE_DEST / V$ARCHIVE_DEST_STATUS rows (``oracle_dg``'s ``dest_<N>``: DB_UNIQUE_NAME,
DESTINATION, TRANSMIT_MODE, STATUS, VALID_ROLE, TYPE, ARCHIVED_SEQ#).

A destination is mapped to a watched host

1. by DB_UNIQUE_NAME: the host's own database's (its ``oracle_dg`` ``db`` row), else the
   config's ``db_unique_name`` (case-insensitive; DB_UNIQUE_NAME ``NONE`` means unset);
2. else by host name in the service: DESTINATION is a TNS alias, an EZConnect string
   (``host:port/service``) or a descriptor (``(HOST=...)``); any of those names equal to the
   host's configured name, its ssh host or its dsn host (full or short) matches.

A SYNC or PARALLELSYNC destination that is not deferred, disabled or valid only in the standby
role puts its host (a standby, or a far sync instance) on the commit path; every other standby is
a lag risk only: its faults are never the cause of log file sync.  Until a destination has been
mapped to a watched host (no database, an OS-only config, an old recording), every standby is
taken to be on the commit path, as sgmon did before it read destinations, and ``lines`` says so
(unless the primary has destinations and none of them is SYNC: then no standby is).

A standby or far sync instance ships onward through its own destinations (its ``dest_<N>`` rows,
read every few ticks: ``collectors.oracle.dg``): seed 003's C was cascaded from B, and a far sync
instance forwards the primary's SYNC redo to its terminal standbys.  Those are mapped to the
watched hosts the same way, except to a primary and except where VALID_NOW says the destination
does not ship in the sender's role; a host fed only by one is off the commit path whatever its
mode (nothing on the primary waits for a standby's forwarding), and is said to be ``cascaded from
B (dest_2 ASYNC)`` or ``behind far sync fs1 (dest_3 ASYNC)``.  A host is a far sync instance
when the config says ``far_sync`` or the primary's destination mapped to it has the TYPE FAR SYNC
(V$ARCHIVE_DEST_STATUS), so an unconfigured one (the simulation's) is known as such too.

Headless and cheap: the analysis rebuilds it every evaluated tick, ``config --check`` prints it.
The destinations and their mapping to hosts are ``dests``'s, the ``Topology`` and its words
``places``'s, the database row and its threads ``threads``'s; this module puts them together.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sgmon.config import Config, HostConfig
from sgmon.fields import ORACLE_DG
from sgmon.model import Frame, Value, data_guard_role
from sgmon.topology.dests import (
    BY_NAME,
    OFF,
    SYNC_MODES,
    Dest,
    dest_rows,
    dests,
    is_sync,
    off_path_sender,
    ships_sync,
    unique_name,
)
from sgmon.topology.places import COMMIT_PATH, LAG_RISK, Topology
from sgmon.topology.threads import SPLIT_S, db_role, db_row, instance_text, thread_lags

__all__ = [
    "OFF",
    "SPLIT_S",
    "SYNC_MODES",
    "Dest",
    "Topology",
    "build",
    "disagreements",
    "instance_text",
    "is_sync",
    "off_path_sender",
    "ships_sync",
    "thread_lags",
]


def build(config: Config, frames: Mapping[str, Frame | None]) -> Topology:
    """The topology from the configured hosts and the latest frame of each watched host."""
    hosts = {h.name: h for h in config.hosts}
    names = list(dict.fromkeys([*hosts, *frames]))
    roles = {n: _role(hosts.get(n), frames.get(n)) for n in names}
    primaries, why, notes = _primaries(names, roles, frames, hosts)
    primary = primaries[0] if primaries else ""
    pframe = frames.get(primary) if primary else None
    standbys, far = _standbys(names, roles, hosts, primaries)
    mine = dests(pframe, pframe, names, hosts, frames, primaries, primary)
    onward = _onward(standbys, pframe, names, hosts, frames, primaries)
    threads = _threads(primaries, frames)
    return Topology(
        primaries,
        why,
        tuple(mine),
        standbys,
        # a far sync instance is one by the config, or by the primary's destination's TYPE
        far | {n for d in mine if d.far_sync for n in d.hosts},
        (*notes, *_doubles(threads, mine)),
        _places(standbys, mine, onward),
        onward,
        {str(t): who[0] for t, who in threads.items()},
    )


def _standbys(
    names: Sequence[str],
    roles: Mapping[str, str],
    hosts: Mapping[str, HostConfig],
    primaries: Sequence[str],
) -> tuple[tuple[str, ...], frozenset[str]]:
    """The hosts other than the primary's instances that are standbys by their role, or far
    sync instances by the config (the second item)."""
    far = frozenset(n for n in names if (h := hosts.get(n)) is not None and h.far_sync)
    standbys = tuple(n for n in names if n not in primaries and (roles[n] == "standby" or n in far))
    return standbys, far


def _onward(
    standbys: Sequence[str],
    pframe: Frame | None,
    names: Sequence[str],
    hosts: Mapping[str, HostConfig],
    frames: Mapping[str, Frame | None],
    primaries: Sequence[str],
) -> tuple[Dest, ...]:
    """The standbys' and far sync instances' own destinations that ship now (cascade, far
    sync), each mapped to the watched hosts other than the primary's instances and itself."""
    return tuple(
        d
        for n in standbys
        for d in dests(frames.get(n), pframe, names, hosts, frames, (*primaries, n), n)
        if d.ships()
    )


def _places(
    standbys: Sequence[str], mine: Sequence[Dest], onward: Sequence[Dest]
) -> dict[str, str]:
    """Each standby's place: on the commit path when a SYNC destination of the primary ships to
    it; a lag risk when only an ASYNC one does, when nothing of the primary's is SYNC, or when
    it is fed by a standby's forwarding; every standby on it while no destination is mapped."""
    if any(d.hosts for d in mine):
        places = {
            n: COMMIT_PATH if any(d.commit_path for d in mine if n in d.hosts) else LAG_RISK
            for n in standbys
        }
    elif mine and not any(d.commit_path for d in mine):  # nothing SYNC: no standby waits
        places = dict.fromkeys(standbys, LAG_RISK)
    else:
        places = dict.fromkeys(standbys, COMMIT_PATH)
    for d in onward:  # fed by a standby's forwarding: nothing on the primary waits for it
        for n in d.hosts:
            if not any(n in p.hosts for p in mine):
                places[n] = LAG_RISK
    return places


def _threads(
    primaries: Sequence[str], frames: Mapping[str, Frame | None]
) -> dict[Value, list[str]]:
    """The redo thread each primary instance reports it writes -> the instances that do."""
    threads: dict[Value, list[str]] = {}
    for n in primaries:
        thread = ORACLE_DG.thread.raw(db_row(frames.get(n)))
        if thread is not None:
            threads.setdefault(thread, []).append(n)
    return threads


def _doubles(threads: Mapping[Value, list[str]], mine: Sequence[Dest]) -> list[str]:
    """The notes on what two hosts claim at once: a redo thread, a destination."""
    notes = [
        f"sgmon: {' and '.join(owners)} both report redo thread {thread}: two names for "
        "one instance, or a misread config; each RAC instance writes its own thread"
        for thread, owners in threads.items()
        if len(owners) > 1
    ]
    notes += [
        f"sgmon: {d.inst} {d.target}: claimed by {' and '.join(d.hosts)}; give each "
        "host its own db_unique_name"
        for d in mine
        if len(d.hosts) > 1
    ]
    return notes


def disagreements(config: Config, topo: Topology) -> list[str]:
    """Where the database's topology and the config differ, one line each."""
    out = [
        f"{d.inst} {d.target} ({d.mode_text()}) is on the commit path, but no configured host "
        "matches it: add its host, or its db_unique_name"
        for d in topo.dests
        if config.hosts and d.commit_path and not d.hosts
    ]
    for h in config.hosts:
        out += _host_disagreements(h, topo)
    return out


def _host_disagreements(h: HostConfig, topo: Topology) -> list[str]:
    """Where one configured host's role, db_unique_name or far_sync differs from what its
    database and the primary's destinations say."""
    out = []
    if h.role == "primary" and topo.primary and h.name not in topo.primaries:
        out.append(f"{h.name} is configured primary, but {topo.named()} is ({topo.why})")
    if h.role == "standby" and h.name == topo.primary:
        out.append(f"{h.name} is configured {_said(h)}, but is the primary ({topo.why})")
    mine = [d for d in topo.dests if h.name in d.hosts]
    if mine:
        out += _dest_disagreements(h, mine)
    return out


def _dest_disagreements(h: HostConfig, mine: Sequence[Dest]) -> list[str]:
    """Where the primary's destinations that ship to a configured host (``mine``) say
    otherwise than its db_unique_name or its far_sync."""
    out = []
    if h.db_unique_name and mine[0].matched_by != BY_NAME:
        out.append(
            f"{h.name}: db_unique_name {h.db_unique_name} is not {mine[0].target} "
            f"({mine[0].inst} matched it by host in service)"
        )
    if h.far_sync and all(d.kind and not d.far_sync for d in mine):
        out.append(f"{h.name} is configured far_sync, but {mine[0].inst} is {mine[0].kind}")
    return out


def _said(h: HostConfig) -> str:
    return "far_sync" if h.far_sync else h.role


def _role(host: HostConfig | None, frame: Frame | None) -> str:
    """The database's role, else the frame's, else the configured one."""
    return data_guard_role(frame, host.role if host is not None else "")


def _primaries(
    names: Sequence[str],
    roles: Mapping[str, str],
    frames: Mapping[str, Frame | None],
    hosts: Mapping[str, HostConfig],
) -> tuple[tuple[str, ...], str, list[str]]:
    """The primary's instances and why they are taken as such (issue 15: a config without one
    still runs).  Hosts that say primary with one DB_UNIQUE_NAME are instances of one RAC
    database; a second name saying primary is a conflict, and the first database is taken."""
    db = [n for n in names if db_role(frames.get(n)) == "primary"]
    said = db or [n for n in names if roles[n] == "primary"]  # the database outranks the config
    if not said:
        return (*_assumed(names, roles, frames), [])
    first = unique_name(hosts.get(said[0]), frames.get(said[0]))
    mine = [n for n in said if unique_name(hosts.get(n), frames.get(n)) == first]
    notes = []
    if len(mine) < len(said):
        notes.append(f"sgmon: {' and '.join(said)} all say primary; {said[0]} is taken")
    why = "its database says PRIMARY" if db else "configured role"
    return tuple(mine), why, notes


def _assumed(
    names: Sequence[str], roles: Mapping[str, str], frames: Mapping[str, Frame | None]
) -> tuple[tuple[str, ...], str]:
    """The primary when no host says it is one: the first that ships redo and is not known as a
    standby (a standby ships too: cascade, far sync), else the only host of no known role."""
    shipping = [n for n in names if dest_rows(frames.get(n)) and roles[n] != "standby"]
    if shipping:
        return (shipping[0],), "assumed: no host is primary, it ships redo to destinations"
    if len(names) == 1 and not roles[names[0]]:
        return (names[0],), "assumed: the only host, no role known"
    return (), "none configured or reported: commit-path analysis is off"
