"""`sgmon check --symmetry`: the primary beside each SYNC standby, item by item (issue 15).

Both root causes in the seeds were asymmetries between a primary and its SYNC standby: seed 003's
standby volume capped far below the primary's, seed 000's Table 8 standby redo logs with several
members on a slower disk group.  So this reads, once and changing nothing:

* the redo log layout (V$LOG, V$STANDBY_LOG, V$LOGFILE; seed 000): per thread, the online log
  groups + 1 standby redo log groups on both sides (the primary's serve after a role change), of
  the online log size, one member each; and the online logs themselves on both sides;
* DB_LOST_WRITE_PROTECT (V$PARAMETER; seed 003);
* the DG socket's buffers (the primary's send, the standby's receive) against 3 x BDP, from the
  measured RTT and the link speed, and the kernel's autotuning maxima (seed 000);
* the route's rto_min at both ends of the DG socket (seed 001);
* the redo device's write latency on both hosts (seed 000 Tables 8 and 9, seed 003).

The OS items come from the last ``WINDOW`` frames of each host (live, a recording or the
simulation), the database items from one session per database.  A verdict is ``ok``,
``differs`` (the sides differ, or one misses the seed's rule), ``missing`` (what the rule needs
is absent on a side: no SRLs for a thread) or ``unknown`` (a side could not be read, and the line
says why: a view, a privilege, a socket or a link speed not seen); ``exit_code`` is 1 when any
line differs or is missing, else 0.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

from sgmon import topology
from sgmon.config import Config
from sgmon.model import Frame, number
from sgmon.oracle.errors import OracleError
from sgmon.oracle.session import Session
from sgmon.units import bdp_bytes, fmt_num, mbit_bytes

WINDOW = 10
"""Frames per host the OS items are averaged over (the last ten ticks)."""
SLOWER = 2.0
"""A redo device this many times slower than the other side's differs (seed 000: Table 8's
2.89 ms RFS I/O beside 0.62 ms local writes was "an immediate red flag" on equal hardware,
Table 9's 0.89 ms after the fix was in line) ..."""
SLOWER_MS = 0.5
"""... and by at least this much, so two sub-millisecond devices never differ by noise."""
MATCH = (0.5, 4.0)
"""Disk writes per redo write that still name a disk the redo device: a write split in two, a
group of up to four members."""
CARRIES = 0.9
"""An interface carries the DG socket when it moved at least this share of the socket's bytes."""
DEFAULT_RTO_MIN = "default (200 ms)"
NO_SOCKET = "no DG socket in its frames"


class NoPair(Exception):
    """No primary, or no SYNC standby: nothing to compare (one line says which)."""


@dataclass(frozen=True, slots=True)
class Line:
    """One compared item: both sides' values, the verdict, the seed and the rule applied."""

    item: str
    primary: str
    standby: str
    verdict: str  # ok | differs | missing | unknown
    seed: str
    rule: str = ""


@dataclass(slots=True)
class Pair:
    """A primary (instance) and one SYNC standby, their DG socket ends and the lines."""

    primary: str
    standby: str
    sockets: tuple[str, str]
    lines: list[Line]


@dataclass(slots=True)
class Result:
    """Every pair compared, and the topology that named them."""

    pairs: list[Pair]
    topology: topology.Topology

    def counts(self) -> dict[str, int]:
        """Lines per verdict."""
        out = dict.fromkeys(("ok", "differs", "missing", "unknown"), 0)
        for p in self.pairs:
            for line in p.lines:
                out[line.verdict] += 1
        return out

    @property
    def exit_code(self) -> int:
        """1 when a line differs or is missing, else 0 (unknown lines do not count)."""
        c = self.counts()
        return 1 if c["differs"] or c["missing"] else 0

    def to_dict(self) -> dict[str, object]:
        """The JSON form."""
        return {
            "pairs": [
                {
                    "primary": p.primary,
                    "standby": p.standby,
                    "sockets": list(p.sockets),
                    "lines": [asdict(line) for line in p.lines],
                }
                for p in self.pairs
            ],
            "counts": self.counts(),
            "topology": self.topology.lines(),
            "exit": self.exit_code,
        }


class Recent:
    """The last ``size`` frames of each host."""

    def __init__(self, size: int = WINDOW) -> None:
        self.size = size
        self.frames: dict[str, deque[Frame]] = {}

    def add(self, frame: Frame) -> None:
        """Keep a frame (the oldest of its host drops out)."""
        self.frames.setdefault(frame.host, deque(maxlen=self.size)).append(frame)


# -- the databases ---------------------------------------------------------------------------


@dataclass(slots=True)
class DbFacts:
    """What one database says about its redo logs and lost-write protection; None where the
    view could not be read (``unread`` says why, by view, or by "database" for all of them)."""

    online: dict[int, list[tuple[int, int]]] | None = None  # thread -> [(group, bytes)]
    standby: dict[int, list[tuple[int, int]]] | None = None  # thread -> [(group, bytes)]
    members: dict[int, list[str]] | None = None  # SRL group -> member paths
    lwp: str | None = None  # DB_LOST_WRITE_PROTECT, "" when the row is absent
    unread: dict[str, str] = field(default_factory=dict)


def unreadable(why: str) -> DbFacts:
    """The facts of a database that could not be read at all."""
    return DbFacts(unread={"database": why})


def read_db(session: Session) -> DbFacts:
    """The redo log layout and DB_LOST_WRITE_PROTECT through a session (four single-view
    SELECTs, once); a view this database lacks or hides is noted in ``unread``."""
    facts = DbFacts()
    try:
        rows = _query(session, "online_logs", "V$LOG", facts)
        if rows is not None:
            facts.online = _by_thread((int(t), int(g), int(b)) for g, t, b, _m in rows)
        rows = _query(session, "standby_logs", "V$STANDBY_LOG", facts)
        if rows is not None:
            facts.standby = _by_thread((int(t), int(g), int(b)) for g, t, b in rows)
        rows = _query(session, "standby_log_members", "V$LOGFILE", facts)
        if rows is not None:
            facts.members = {}
            for g, member in rows:
                facts.members.setdefault(int(g), []).append(str(member))
        rows = _query(session, "lost_write_protect", "V$PARAMETER", facts)
        if rows is not None:
            facts.lwp = str(rows[0][0] or "").upper() if rows else ""
    except OracleError as e:
        return unreadable(str(e))
    return facts


def _query(session: Session, name: str, view: str, facts: DbFacts) -> list[tuple] | None:
    rows = session.query(name)
    if rows is None:
        notes = session.take_notes()
        facts.unread[view] = notes[-1] if notes else f"no {view} on this version"
    return rows


def _by_thread(rows: Iterable[tuple[int, int, int]]) -> dict[int, list[tuple[int, int]]]:
    out: dict[int, list[tuple[int, int]]] = {}
    for thread, group, size in rows:
        out.setdefault(thread, []).append((group, size))
    return out


def read_configured(config: Config, hosts: Sequence[str]) -> dict[str, DbFacts]:
    """Each named host's database, read through a session of its own from the config (a host
    reached over ssh has its database read by its agent, not from here)."""
    by_name = {h.name: h for h in config.hosts}
    out = {}
    for name in hosts:
        h = by_name.get(name)
        if h is None or h.db is None:
            out[name] = unreadable(f"no [host.db] for {name} in the config")
        elif h.ssh:
            out[name] = unreadable(
                f"{name} is reached over ssh, where its agent reads its database; run the "
                "check where its dsn is reachable"
            )
        else:
            session = Session(h.db, role=h.role)
            try:
                out[name] = read_db(session)
            finally:
                session.close()
    return out


def db_lines(p: DbFacts, s: DbFacts) -> list[Line]:
    """The redo log layout and DB_LOST_WRITE_PROTECT, primary against standby; one line per
    view that could not be read, and the items that need it left out."""
    lines = [
        Line(what, _unread(p, what), _unread(s, what), "unknown", "000/003", "not compared")
        for what in dict.fromkeys([*p.unread, *s.unread])
    ]
    sides = (p, s)
    online = [f.online for f in sides]
    srl = [f.standby for f in sides]
    members = [f.members for f in sides]
    threads = sorted({t for x in (*online, *srl) if x is not None for t in x})
    for t in threads:
        if online[0] is not None and online[1] is not None:
            lines.append(_online_line(t, online[0].get(t, []), online[1].get(t, [])))
        if srl[0] is None or srl[1] is None:
            continue
        mine = [srl[0].get(t, []), srl[1].get(t, [])]
        base = online[0].get(t) if online[0] is not None else None
        lines.append(_srl_count(t, mine, len(base) if base else None))
        lines.append(_srl_size(t, mine, _size_of(base) if base else None))
        if members[0] is not None and members[1] is not None:
            lines.append(_srl_members(t, mine, (members[0], members[1])))
    if p.lwp is not None and s.lwp is not None:
        lines.append(_lwp_line(p.lwp, s.lwp))
    return lines


def _unread(f: DbFacts, what: str) -> str:
    if what in f.unread:
        return f"not readable: {f.unread[what]}"
    return "not read" if "database" in f.unread else "read"


def _online_line(t: int, p: list[tuple[int, int]], s: list[tuple[int, int]]) -> Line:
    verdict = _missing_or(p, s, sorted(b for _, b in p) == sorted(b for _, b in s))
    return Line(
        f"online logs, thread {t}",
        _groups(p),
        _groups(s),
        verdict,
        "000",
        "equal: the standby's serve after a role change",
    )


def _srl_count(t: int, srl: list[list[tuple[int, int]]], online: int | None) -> Line:
    n = [len(x) for x in srl]
    need = online + 1 if online else None
    good = n[0] == n[1] and (need is None or n[0] >= need)
    rule = f"need {need} = {online} online groups + 1, on both" if need else "equal on both"
    return Line(
        f"SRL groups, thread {t}",
        str(n[0]),
        str(n[1]),
        _missing_or(srl[0], srl[1], good),
        "000",
        rule,
    )


def _srl_size(t: int, srl: list[list[tuple[int, int]]], online: int | None) -> Line:
    sizes = [sorted({b for _, b in x}) for x in srl]
    good = sizes[0] == sizes[1] and (online is None or sizes[0] == [online])
    rule = f"the online log size, {_bytes(online)}" if online else "equal on both"
    return Line(
        f"SRL size, thread {t}",
        ", ".join(map(_bytes, sizes[0])) or "none",
        ", ".join(map(_bytes, sizes[1])) or "none",
        _missing_or(srl[0], srl[1], good),
        "000",
        rule,
    )


def _srl_members(
    t: int, srl: list[list[tuple[int, int]]], members: tuple[dict[int, list[str]], ...]
) -> Line:
    shown = []
    good = True
    for groups, paths in zip(srl, members, strict=True):
        counts = [len(paths.get(g, ())) for g, _ in groups]
        many = [g for g, _ in groups if len(paths.get(g, ())) > 1]
        good = good and all(c == 1 for c in counts)
        if not groups:
            shown.append("none")
        elif all(c == 1 for c in counts):
            shown.append("1 each")
        else:
            where = sorted({_place(m) for g in many for m in paths[g]})
            shown.append(
                f"{max(counts)} in {len(many)} of {len(groups)} groups ({', '.join(where)})"
                if many
                else "0 (none in V$LOGFILE)"
            )
    return Line(
        f"SRL members, thread {t}",
        shown[0],
        shown[1],
        _missing_or(srl[0], srl[1], good),
        "000",
        "one each, on the fastest disk group (Table 8: more on a slower one)",
    )


def _lwp_line(p: str, s: str) -> Line:
    both = {p, s} <= {"TYPICAL", "FULL"}
    if p == s:
        rule = (
            "equal; the standby reads each block the primary logged a read of: its volume "
            "must keep up"
            if both
            else "equal on both"
        )
    elif p in ("TYPICAL", "FULL") and s not in ("TYPICAL", "FULL", "AUTO"):
        rule = "the primary logs its reads in redo this standby never checks"
    else:
        rule = "equal on both, so a role change keeps it"
    return Line("DB_LOST_WRITE_PROTECT", p or "not set", s or "not set", _ok(p == s), "003", rule)


def _missing_or(p: Sequence[object], s: Sequence[object], good: bool) -> str:
    """``missing`` when a side has none of it, else ok / differs."""
    return "missing" if not p or not s else _ok(good)


def _ok(good: bool) -> str:
    return "ok" if good else "differs"


def _groups(groups: list[tuple[int, int]]) -> str:
    if not groups:
        return "none"
    sizes = sorted({b for _, b in groups})
    return f"{len(groups)} x {', '.join(map(_bytes, sizes))}"


def _size_of(groups: list[tuple[int, int]]) -> int | None:
    """The online log size of a thread (None when its groups differ: no single size to match)."""
    sizes = {b for _, b in groups}
    return sizes.pop() if len(sizes) == 1 else None


def _place(member: str) -> str:
    """Where a log member lives: its ASM disk group (``+RECO``) or its directory."""
    if member.startswith("+"):
        return member.split("/", 1)[0]
    return member.rsplit("/", 1)[0] or "/"


def _bytes(n: float | None) -> str:
    if n is None:
        return "-"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} B"


# -- the hosts ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _End:
    """One end of the DG socket over a host's recent frames."""

    frames: Sequence[Frame]
    inst: str | None  # the socket's row, None when not seen

    def row(self) -> Mapping[str, object]:
        return self.frames[-1].rows("tcp").get(self.inst, {}) if self.inst else {}

    def mean(self, collector: str, inst: str, name: str) -> float | None:
        vals = [v for f in self.frames if (v := number(f.value(collector, inst, name))) is not None]
        return sum(vals) / len(vals) if vals else None


def os_lines(
    config: Config, ends: tuple[Sequence[Frame], Sequence[Frame]], alone: bool
) -> tuple[tuple[str | None, str | None], list[Line]]:
    """The socket, kernel, route and redo device items of a primary and a standby from their
    recent frames; ``alone``: the only SYNC standby (then the primary's one commit-path socket
    is its own even when the standby's frames show none)."""
    inst = dg_sockets(ends[0][-1], ends[1][-1], alone)
    p, s = _End(ends[0], inst[0]), _End(ends[1], inst[1])
    rtt = p.mean("tcp", inst[0], "rtt") if inst[0] else None
    links = [_link(p, "bytes_acked", "tx_kb"), _link(s, "bytes_received", "rx_kb")]
    speeds = [sp for _, sp in links if sp]
    need = 3 * bdp_bytes(mbit_bytes(min(speeds)), rtt) if speeds and rtt else None
    if need:
        basis = f">= 3 x BDP = 3 x {_speed(min(speeds))} x {fmt_num(rtt)} ms = {_bytes(need)}"
    else:
        basis = "3 x BDP unknown: " + ("no RTT, no DG socket" if not rtt else "link speed unknown")
    lines = [
        _threshold(
            "socket buffers (sndbuf, rcvbuf)",
            [number(p.row().get("sndbuf")), number(s.row().get("rcvbuf"))],
            [NO_SOCKET, NO_SOCKET],
            need,
            f"{basis} (links: {links[0][0]}; {links[1][0]})",
        )
    ]
    floor = "3 x BDP" if need else "equal, 3 x BDP unknown"
    for name in ("tcp_wmem_max", "tcp_rmem_max"):
        vals = [number(e.frames[-1].value("tcp", "host", name)) for e in (p, s)]
        lines.append(
            _threshold(
                f"net.ipv4.{name[:-4]} max",
                vals,
                ["not in the frames"] * 2,
                need,
                f"autotuning's ceiling, >= {floor}",
                alike=True,
            )
        )
    lines.append(_rto_min(p, s))
    lines.append(_redo_device(config, p, s))
    return inst, lines


def dg_sockets(pf: Frame, sf: Frame, alone: bool) -> tuple[str | None, str | None]:
    """The two ends of the DG socket: the primary's commit-path socket whose mirror (local
    and peer swapped) the standby has; else the one toward an address the standby listens on;
    else, for the only SYNC standby, the primary's one commit-path socket."""
    mine = sorted(
        i
        for i, r in pf.rows("tcp").items()
        if i != "host" and not topology.off_path_sender(r.get("process"))
    )
    theirs = sorted(i for i in sf.rows("tcp") if i != "host")
    for i in mine:
        local, _, peer = i.partition(">")
        if f"{peer}>{local}" in theirs:
            return i, f"{peer}>{local}"
    listening = {_host(t.partition(">")[0]) for t in theirs}
    for i in mine:
        local, _, peer = i.partition(">")
        if _host(peer) in listening:
            back = [t for t in theirs if _host(t.partition(">")[2]) == _host(local)]
            return i, back[0] if back else None
    if not alone:
        return None, None
    return (
        mine[0] if len(mine) == 1 else None,
        theirs[0] if len(theirs) == 1 else None,
    )


def _host(endpoint: str) -> str:
    """``10.0.1.2:1521`` -> ``10.0.1.2``; ``[fe80::1]:1521`` -> ``fe80::1``."""
    return endpoint.rsplit(":", 1)[0].strip("[]")


def _link(end: _End, moved: str, counter: str) -> tuple[str, float | None]:
    """The interface that carries the socket and its speed (Mbit/s): of the interfaces up
    with a known speed, those that moved at least ``CARRIES`` of the socket's bytes; their
    speed when they agree, else unknown."""
    netdev = end.frames[-1].rows("netdev")
    up = {
        i: sp
        for i, r in netdev.items()
        if (sp := number(r.get("speed"))) and str(r.get("operstate", "up")).lower() == "up"
    }
    if not up:
        return "no interface reports a speed", None
    rate = end.mean("tcp", end.inst, moved) if end.inst else None
    carrying = [
        i for i in up if not rate or (end.mean("netdev", i, counter) or 0) * 1024 >= CARRIES * rate
    ] or list(up)
    speeds = {up[i] for i in carrying}
    named = "/".join(sorted(carrying))
    if len(speeds) == 1:
        return f"{named} {_speed(speeds.pop())}", up[carrying[0]]
    return f"one of {named}, speeds differ", None


def _speed(mbit: float) -> str:
    return f"{mbit / 1000:g} Gbit/s" if mbit >= 1000 else f"{mbit:g} Mbit/s"


def _threshold(
    item: str,
    vals: list[float | None],
    absent: list[str],
    need: float | None,
    rule: str,
    alike: bool = False,
) -> Line:
    """Both sides at or above a floor (``need``); without one, equal when ``alike`` (the same
    setting on both hosts), else unknown."""
    shown = [_bytes(v) if v is not None else a for v, a in zip(vals, absent, strict=True)]
    a, b = vals
    if a is None or b is None or (need is None and not alike):
        verdict = "unknown"
    else:
        verdict = _ok(min(a, b) >= need if need is not None else a == b)
    return Line(item, shown[0], shown[1], verdict, "000", rule)


def _rto_min(p: _End, s: _End) -> Line:
    vals: list[str | None] = []
    for end in (p, s):
        if end.inst is None:
            vals.append(None)
            continue
        v = number(end.row().get("rto_min"))
        vals.append(f"{fmt_num(v)} ms" if v is not None else DEFAULT_RTO_MIN)
    verdict = "unknown" if None in vals else _ok(vals[0] == vals[1])
    return Line(
        "route rto_min",
        vals[0] or NO_SOCKET,
        vals[1] or NO_SOCKET,
        verdict,
        "001",
        "equal on both ends: a lost segment waits the RTO, 200 ms at least by default",
    )


def _redo_device(config: Config, p: _End, s: _End) -> Line:
    found = [_device(config, p, "log file parallel write"), _device(config, s, "RFS write")]
    shown = [f"{d} {fmt_num(ms)} ms at {fmt_num(w)} w/s" if ms is not None else d
             for d, ms, w in found]  # fmt: skip
    a, b = found[0][1], found[1][1]
    if a is None or b is None:
        verdict = "unknown"
    else:
        lo, hi = sorted((a, b))
        verdict = _ok(not (hi > SLOWER * lo and hi - lo >= SLOWER_MS))
    return Line(
        "redo device w_await",
        shown[0],
        shown[1],
        verdict,
        "000/003",
        f"within {SLOWER:g}x (Table 8: 2.89 ms beside 0.62 ms on equal hardware); the config's "
        "devices, else the disk whose writes match the redo writes",
    )


def _device(config: Config, end: _End, event: str) -> tuple[str, float | None, float | None]:
    """The host's redo device and its write-weighted w_await and writes per second: the
    config's ``devices`` (the slowest of them); else the disk whose writes per second come
    closest to the database's redo writes (``event``'s waits: LGWR's on the primary, RFS's on
    the standby), within ``MATCH``; else the disk with the most writes."""
    frame = end.frames[-1]
    disks = frame.rows("disk")
    if not disks:
        return "no disk rows in its frames", None, None
    host = next((h for h in config.hosts if h.name == frame.host), None)
    named = [d for d in (host.devices if host else ()) if d in disks]
    writes = {d: end.mean("disk", d, "w_s") or 0.0 for d in (named or disks)}
    awaits = {d: _weighted(end, d) for d in writes}
    if named:
        known = [d for d in named if awaits[d] is not None]
        dev = max(known, key=lambda d: awaits[d] or 0.0) if known else named[0]
        return dev, awaits[dev], writes[dev]
    redo = end.mean("oracle_waits", event, "waits")
    near = {d: abs(math.log(w / redo)) for d, w in writes.items() if redo and w > 0}
    dev = min(near, key=lambda d: near[d]) if near else ""
    if dev and MATCH[0] <= writes[dev] / (redo or 1.0) <= MATCH[1]:
        return f"{dev} (redo writes)", awaits[dev], writes[dev]
    dev = max(writes, key=lambda d: writes[d])
    return f"{dev} (busiest)", awaits[dev], writes[dev]


def _weighted(end: _End, dev: str) -> float | None:
    """w_await over the window, each tick weighted by its writes."""
    pairs = [
        (a, number(f.value("disk", dev, "w_s")) or 0.0)
        for f in end.frames
        if (a := number(f.value("disk", dev, "w_await"))) is not None
    ]
    total = sum(w for _, w in pairs)
    if not pairs:
        return None
    if total <= 0:
        return sum(a for a, _ in pairs) / len(pairs)
    return sum(a * w for a, w in pairs) / total


# -- the whole check -------------------------------------------------------------------------


def compare(
    config: Config, recent: Recent, dbs: Callable[[Sequence[str]], Mapping[str, DbFacts]]
) -> Result:
    """Every primary instance beside every SYNC standby of the topology the latest frames
    give; ``dbs`` reads the named hosts' databases (once)."""
    latest = {h: fs[-1] for h, fs in recent.frames.items() if fs}
    topo = topology.build(config, latest)
    if topo.primary is None:
        raise NoPair(f"no primary to compare: {topo.why}")
    standbys = topo.sync_standbys()
    if not standbys:
        raise NoPair(f"no SYNC standby on the commit path to compare: {topo.summary()}")
    facts = dbs([topo.primary, *standbys])
    pairs = []
    for s in standbys:
        for p in topo.primaries:
            if p not in recent.frames or s not in recent.frames:
                continue
            ends = (recent.frames[p], recent.frames[s])
            sockets, lines = os_lines(config, ends, alone=len(standbys) == 1)
            if p == topo.primary:
                lines = db_lines(facts[p], facts[s]) + lines
            pairs.append(Pair(p, s, (sockets[0] or "-", sockets[1] or "-"), lines))
    if not pairs:
        raise NoPair(f"no frames from {topo.primary} and {', '.join(standbys)} to compare")
    return Result(pairs, topo)


def report(result: Result, span: float, window: int) -> str:
    """The text form: per pair a header, the socket, one aligned line per item, then the counts
    and the exit status."""
    out = []
    for pair in result.pairs:
        out.append(
            f"sgmon check --symmetry: {pair.primary} (primary) against {pair.standby} (SYNC "
            f"standby), OS items over the last {window} frame(s) of {fmt_num(span)} s"
        )
        out.append(f"  DG socket: {pair.sockets[0]} (primary), {pair.sockets[1]} (standby)")
        rows = [("item", "primary", "standby", "verdict", "seed", "rule")]
        rows += [(x.item, x.primary, x.standby, x.verdict, x.seed, x.rule) for x in pair.lines]
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        for r in rows:
            cells = [c.ljust(w) for c, w in zip(r[:5], widths, strict=True)]
            out.append("  " + "  ".join([*cells, r[5]]).rstrip())
    c = result.counts()
    out.append(f"topology: {result.topology.summary()}")
    out.append(
        f"symmetry: {c['ok']} ok, {c['differs']} differ, {c['missing']} missing, "
        f"{c['unknown']} unknown: exit {result.exit_code}"
    )
    return "\n".join(out)
