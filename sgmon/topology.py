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
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache

from sgmon.config import Config, HostConfig
from sgmon.model import Frame, data_guard_role, number

SYNC_MODES = ("SYNC", "PARALLELSYNC", "SYNCHRONOUS")
OFF = ("DEFERRED", "DISABLED", "INACTIVE")
"""Destination STATUS values under which nothing is shipped (V$ARCHIVE_DEST)."""
_HOST = re.compile(r"\(\s*HOST\s*=\s*([^)\s]+)\s*\)", re.IGNORECASE)
_OFF_PATH_SENDER = re.compile(r"^ora_(tt[0-9a-z]{2}|arc[0-9a-z])_", re.IGNORECASE)
"""Primary processes whose sockets no commit waits for: TTnn ship ASYNC redo (12.1 onward,
Database Concepts "LGWR"), ARCn archived logs and gaps.  NSSn (SYNC) and 11.2's LNSn, which
serves both modes, may be on the commit path."""


def is_sync(mode: object) -> bool:
    """Whether a TRANSMIT_MODE (or VALID_TYPE text) makes LGWR wait for the destination."""
    return str(mode or "").upper() in SYNC_MODES


def ships_sync(row: Mapping[str, object]) -> bool:
    """Whether a destination row (oracle_dg ``dest_N``) is SYNC and shipping now: a STATUS under
    which nothing ships (OFF), or ERROR (after NET_TIMEOUT the primary stopped waiting for it),
    means no remote write is in a commit.  Its place in the configuration is Dest.commit_path,
    which an ERROR keeps: the standby is still the SYNC one, failing."""
    status = str(row.get("status") or "VALID").upper()
    return is_sync(row.get("transmit_mode")) and status not in (*OFF, "ERROR")


def off_path_sender(process: object) -> bool:
    """Whether a DG socket's owner ships redo no commit waits for (``ora_tt00_PROD``)."""
    return bool(_OFF_PATH_SENDER.match(str(process or "")))


@dataclass(frozen=True, slots=True)
class Dest:
    """One remote destination of the primary, mapped to the hosts that match it."""

    inst: str  # dest_2
    target: str  # DB_UNIQUE_NAME, else the service
    service: str
    mode: str  # SYNC, ASYNC, PARALLELSYNC
    affirm: str
    status: str
    valid_role: str
    kind: str  # PHYSICAL, FAR SYNC ...
    hosts: tuple[str, ...] = ()
    matched_by: str = ""  # "db_unique_name" | "host in service"
    logs_behind: int | None = None
    source: str = ""
    """The host whose destination this is (the primary instance's, or a cascading standby's)."""
    valid_now: str = ""

    @property
    def commit_path(self) -> bool:
        """Whether the destination is on the commit path by its configuration: SYNC, not switched
        off, valid in this role (LGWR waits for it unless it is in ERROR: ships_sync)."""
        return (
            is_sync(self.mode)
            and self.status.upper() not in OFF
            and self.valid_role.upper() != "STANDBY_ROLE"
        )

    def mode_text(self) -> str:
        """``SYNC AFFIRM``, ``SYNC NOAFFIRM`` (Fast Sync), ``ASYNC``."""
        mode = self.mode or "?"
        if is_sync(mode) and self.affirm:
            return f"{mode} {'AFFIRM' if self.affirm.upper() == 'YES' else 'NOAFFIRM'}"
        return mode


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
        return host in self.primaries or self.places.get(host, "commit path") == "commit path"

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
        return [h for h in self.standbys if self.places.get(h) == "commit path"]

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
            parts.append("unmonitored: " + ", ".join(_unmonitored(d) for d in lost))
        return "; ".join(parts)

    def lines(self) -> list[str]:
        """The topology in words, one line each (``config --check``)."""
        out = [f"primary: {self.named()} ({self.why})"]
        for d in self.dests:
            who = " + ".join(d.hosts) if d.hosts else "unmonitored"
            how = f", by {d.matched_by}" if d.matched_by else ""
            where = "commit path" if d.commit_path else "lag risk only"
            behind = "" if d.logs_behind is None else f", {d.logs_behind} log(s) behind"
            out.append(
                f"{d.inst} {d.target} ({d.service or '-'}): {d.mode_text()}, {d.status or '?'}"
                f"{behind} -> {who}{how}: {where}"
            )
        for d in self.onward:
            who = " + ".join(d.hosts) if d.hosts else "unmonitored"
            how = f", by {d.matched_by}" if d.matched_by else ""
            behind = "" if d.logs_behind is None else f", {d.logs_behind} log(s) behind"
            out.append(
                f"{d.source} {d.inst} {d.target} ({d.service or '-'}): {d.mode_text()}, "
                f"{d.status or '?'}{behind} -> {who}{how}: onward, off the commit path"
            )
        for h in self.standbys:
            kind = "far sync" if h in self.far_sync else "standby"
            dest = next((d.inst for d in self.dests if h in d.hosts), None)
            if dest is None and (up := self.upstream(h)):
                reason = up
            elif dest is None and self.mapped:
                reason = "cascaded or not receiving: no destination of the primary ships to it"
            elif dest is None and self.dests and not any(d.commit_path for d in self.dests):
                reason = "the primary has no SYNC destination"
            elif dest is None:
                reason = "assumed: no destination is mapped to a watched host yet"
            else:
                reason = dest
            out.append(f"{kind} {h}: {self.places.get(h, 'commit path')} ({reason})")
        return out + list(self.notes)


def _unmonitored(d: Dest) -> str:
    behind = "" if d.logs_behind is None else f", {d.logs_behind} log(s) behind"
    return f"{d.inst} {d.target} ({d.mode_text()}{behind})"


def build(config: Config, frames: Mapping[str, Frame | None]) -> Topology:
    """The topology from the configured hosts and the latest frame of each watched host."""
    hosts = {h.name: h for h in config.hosts}
    names = list(dict.fromkeys([*hosts, *frames]))
    roles = {n: _role(hosts.get(n), frames.get(n)) for n in names}
    primaries, why, notes = _primaries(names, roles, frames, hosts)
    primary = primaries[0] if primaries else None
    far = frozenset(n for n in names if hosts.get(n) is not None and hosts[n].far_sync)
    standbys = tuple(n for n in names if n not in primaries and (roles[n] == "standby" or n in far))
    pframe = frames.get(primary) if primary else None
    dests = _dests(pframe, pframe, names, hosts, frames, primaries, primary or "")
    # a far sync instance is one by the config, or by the primary's destination's TYPE
    far |= {n for d in dests if d.kind.upper() == "FAR SYNC" for n in d.hosts}
    onward = tuple(
        d
        for n in standbys
        for d in _dests(frames.get(n), pframe, names, hosts, frames, (*primaries, n), n)
        if d.valid_now.upper() in ("", "YES") and d.status.upper() not in OFF
    )
    places: dict[str, str] = {}
    if any(d.hosts for d in dests):
        for n in standbys:
            mine = [d for d in dests if n in d.hosts]
            places[n] = "commit path" if any(d.commit_path for d in mine) else "lag risk"
    elif dests and not any(d.commit_path for d in dests):  # nothing SYNC: no standby waits
        places = dict.fromkeys(standbys, "lag risk")
    else:
        places = dict.fromkeys(standbys, "commit path")
    for d in onward:  # fed by a standby's forwarding: nothing on the primary waits for it
        for n in d.hosts:
            if not any(n in p.hosts for p in dests):
                places[n] = "lag risk"
    threads: dict[object, list[str]] = {}
    for n in primaries:
        thread = _db_row(frames.get(n)).get("thread")
        if thread is not None:
            threads.setdefault(thread, []).append(n)
    for thread, owners in threads.items():
        if len(owners) > 1:
            notes.append(
                f"sgmon: {' and '.join(owners)} both report redo thread {thread}: two names for "
                "one instance, or a misread config; each RAC instance writes its own thread"
            )
    for d in dests:
        if len(d.hosts) > 1:
            notes.append(
                f"sgmon: {d.inst} {d.target}: claimed by {' and '.join(d.hosts)}; give each "
                "host its own db_unique_name"
            )
    return Topology(
        primaries,
        why,
        tuple(dests),
        standbys,
        far,
        tuple(notes),
        places,
        onward,
        {str(t): who[0] for t, who in threads.items()},
    )


def disagreements(config: Config, topo: Topology) -> list[str]:
    """Where the database's topology and the config differ, one line each."""
    out = [
        f"{d.inst} {d.target} ({d.mode_text()}) is on the commit path, but no configured host "
        "matches it: add its host, or its db_unique_name"
        for d in topo.dests
        if config.hosts and d.commit_path and not d.hosts
    ]
    for h in config.hosts:
        if h.role == "primary" and topo.primary and h.name not in topo.primaries:
            out.append(f"{h.name} is configured primary, but {topo.named()} is ({topo.why})")
        if h.role == "standby" and h.name == topo.primary:
            out.append(f"{h.name} is configured {_said(h)}, but is the primary ({topo.why})")
        mine = [d for d in topo.dests if h.name in d.hosts]
        if h.db_unique_name and mine and mine[0].matched_by != "db_unique_name":
            out.append(
                f"{h.name}: db_unique_name {h.db_unique_name} is not {mine[0].target} "
                f"({mine[0].inst} matched it by host in service)"
            )
        if h.far_sync and mine and all(d.kind and d.kind.upper() != "FAR SYNC" for d in mine):
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
    db = [n for n in names if _db_role(frames.get(n)) == "primary"]
    said = db or [n for n in names if roles[n] == "primary"]  # the database outranks the config
    notes = []
    if said:
        first = _unique_name(hosts.get(said[0]), frames.get(said[0]))
        mine = [n for n in said if _unique_name(hosts.get(n), frames.get(n)) == first]
        if len(mine) < len(said):
            notes.append(f"sgmon: {' and '.join(said)} all say primary; {said[0]} is taken")
        why = "its database says PRIMARY" if db else "configured role"
        return tuple(mine), why, notes
    # a standby ships too (cascade, far sync): only a host not known as one is assumed primary
    shipping = [n for n in names if _dest_rows(frames.get(n)) and roles[n] != "standby"]
    if shipping:
        return (shipping[0],), "assumed: no host is primary, it ships redo to destinations", notes
    if len(names) == 1 and not roles[names[0]]:
        return (names[0],), "assumed: the only host, no role known", notes
    return (), "none configured or reported: commit-path analysis is off", notes


def _db_row(frame: Frame | None) -> Mapping[str, object]:
    return frame.rows("oracle_dg").get("db", {}) if frame is not None else {}


def instance_text(frame: Frame | None) -> str:
    """``PROD1 (inst 1, thread 1)`` from a host's oracle_dg row; empty when not reported."""
    row = _db_row(frame)
    name, inst, thread = row.get("instance_name"), row.get("inst_id"), row.get("thread")
    if inst is None and thread is None:
        return str(name or "")
    return f"{name or 'instance'} (inst {inst}, thread {thread})"


def _db_role(frame: Frame | None) -> str:
    return str(frame.value("oracle_dg", "db", "role") or "") if frame is not None else ""


def _dest_rows(frame: Frame | None) -> dict[str, dict]:
    if frame is None:
        return {}
    return {i: r for i, r in frame.rows("oracle_dg").items() if i.startswith("dest_")}


def _dests(
    frame: Frame | None,
    pframe: Frame | None,
    names: Sequence[str],
    hosts: Mapping[str, HostConfig],
    frames: Mapping[str, Frame | None],
    senders: Sequence[str],
    source: str,
) -> list[Dest]:
    """The destinations of ``source`` (``frame``): the first primary instance's (RAC instances
    share LOG_ARCHIVE_DEST_n), or a standby's own, mapped to the hosts other than ``senders``
    (the primary's instances, and the standby itself); logs behind the primary (``pframe``)."""
    rows = _dest_rows(frame)
    if not rows:
        return []
    others = [n for n in names if n not in senders]
    uniq = {n: _unique_name(hosts.get(n), frames.get(n)) for n in others}
    aliases = {n: _aliases(n, hosts.get(n)) for n in others}
    out = []
    for inst in sorted(rows, key=lambda i: int(i[5:]) if i[5:].isdigit() else 0):
        r = rows[inst]
        target, service = _text(r.get("target")), _text(r.get("service"))
        by_name = [n for n in others if uniq[n] and uniq[n] == target.upper()]
        in_service = _service_hosts(service) if service and not by_name else frozenset()
        by_host = [n for n in others if aliases[n] & in_service]
        archived = number(r.get("archived_seq"))
        current = _sequence(pframe, r.get("archived_thread"))
        behind = int(current - archived) if current is not None and archived else None
        out.append(
            Dest(
                inst,
                target,
                service,
                _text(r.get("transmit_mode")),
                _text(r.get("affirm")),
                _text(r.get("status")),
                _text(r.get("valid_role")),
                _text(r.get("dest_type")),
                tuple(by_name or by_host),
                "db_unique_name" if by_name else "host in service" if by_host else "",
                max(0, behind) if behind is not None else None,
                source,
                _text(r.get("valid_now")),
            )
        )
    return out


def _sequence(frame: Frame | None, thread: object = None) -> float | None:
    """The primary's last log sequence of ``thread`` (ARCHIVED_THREAD#: each RAC instance's
    thread has its own sequences), or the highest of any thread when it is not known."""
    rows = frame.rows("oracle_dg") if frame is not None else {}
    if thread is not None and f"thread_{thread}" in rows:
        return number(rows[f"thread_{thread}"].get("sequence"))
    seqs = [number(r.get("sequence")) for i, r in rows.items() if i.startswith("thread_")]
    return max((s for s in seqs if s is not None), default=None)


def _text(v: object) -> str:
    return "" if v is None else str(v)


def _unique_name(host: HostConfig | None, frame: Frame | None) -> str:
    """The host's DB_UNIQUE_NAME, upper case: its database's own, else the config's."""
    said = frame.value("oracle_dg", "db", "db_unique_name") if frame is not None else None
    name = str(said or (host.db_unique_name if host is not None else "") or "")
    return "" if name.upper() == "NONE" else name.upper()


@cache
def _aliases(name: str, host: HostConfig | None) -> frozenset[str]:
    """Names a service may use for the host: its name, ssh host and dsn host, full and short
    (from the config, so worked out once, not every tick the topology is rebuilt)."""
    found = {name}
    if host is not None:
        if host.ssh:
            found.add(host.ssh.rsplit("@", 1)[-1])
        if host.db is not None:
            found |= _service_hosts(host.db.dsn)
    return frozenset(n.lower() for f in found for n in (f, f.split(".")[0]) if n)


@cache
def _service_hosts(service: str) -> frozenset[str]:
    """Host names in a DESTINATION: a descriptor's HOST= values, EZConnect's host, an alias."""
    hosts = _HOST.findall(service)
    if not hosts and not service.lstrip().startswith("("):
        text = service.strip().removeprefix("//")
        hosts = [re.split(r"[:/]", text, maxsplit=1)[0]]
    return frozenset(n for h in hosts for n in (h.lower(), h.lower().split(".")[0]) if n)


SPLIT_S = 1.0
"""Seconds between the most and the least behind thread for their lags to be told apart."""


def thread_lags(frame: Frame | None) -> dict[str, float]:
    """A standby's per-thread lags (``thread_lag`` of its ``thread_<N>`` rows, thread -> s), only
    when they differ by ``SPLIT_S`` or more: one thread behind while another is current is what
    V$DATAGUARD_STATS' one transport lag hides; equal lags say nothing more than it does."""
    rows = frame.rows("oracle_dg") if frame is not None else {}
    lags = {
        i.removeprefix("thread_"): v
        for i, r in rows.items()
        if i.startswith("thread_") and (v := number(r.get("thread_lag"))) is not None
    }
    if len(lags) < 2 or max(lags.values()) - min(lags.values()) < SPLIT_S:
        return {}
    return dict(sorted(lags.items(), key=lambda kv: int(kv[0]) if kv[0].isdigit() else 0))
