"""The database items of ``sgmon check --symmetry``: the redo log layout (V$LOG, V$STANDBY_LOG,
V$LOGFILE; seed 000) and DB_LOST_WRITE_PROTECT (V$PARAMETER; seed 003), read once through a
session per database, the primary's beside the standby's."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sgmon.config import Config
from sgmon.oracle.errors import OracleError
from sgmon.oracle.session import Session
from sgmon.symmetry.line import Line, missing_or, ok, size_text


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
    logs = (p.online, s.online, p.standby, s.standby)
    for t in sorted({t for x in logs if x is not None for t in x}):
        lines += _thread_lines(t, p, s)
    if p.lwp is not None and s.lwp is not None:
        lines.append(_lwp_line(p.lwp, s.lwp))
    return lines


def _thread_lines(t: int, p: DbFacts, s: DbFacts) -> list[Line]:
    """One thread's items: its online logs on both sides, and its SRLs' count and size against
    the primary's online logs, and their members (each where both sides' views were read)."""
    out = []
    if p.online is not None and s.online is not None:
        out.append(_online_line(t, p.online.get(t, []), s.online.get(t, [])))
    if p.standby is None or s.standby is None:
        return out
    mine = [p.standby.get(t, []), s.standby.get(t, [])]
    base = p.online.get(t) if p.online is not None else None
    out.append(_srl_count(t, mine, len(base) if base else None))
    out.append(_srl_size(t, mine, _size_of(base) if base else None))
    if p.members is not None and s.members is not None:
        out.append(_srl_members(t, mine, (p.members, s.members)))
    return out


def _unread(f: DbFacts, what: str) -> str:
    if what in f.unread:
        return f"not readable: {f.unread[what]}"
    return "not read" if "database" in f.unread else "read"


def _online_line(t: int, p: list[tuple[int, int]], s: list[tuple[int, int]]) -> Line:
    verdict = missing_or(p, s, sorted(b for _, b in p) == sorted(b for _, b in s))
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
        missing_or(srl[0], srl[1], good),
        "000",
        rule,
    )


def _srl_size(t: int, srl: list[list[tuple[int, int]]], online: int | None) -> Line:
    sizes = [sorted({b for _, b in x}) for x in srl]
    good = sizes[0] == sizes[1] and (online is None or sizes[0] == [online])
    rule = f"the online log size, {size_text(online)}" if online else "equal on both"
    return Line(
        f"SRL size, thread {t}",
        ", ".join(map(size_text, sizes[0])) or "none",
        ", ".join(map(size_text, sizes[1])) or "none",
        missing_or(srl[0], srl[1], good),
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
        missing_or(srl[0], srl[1], good),
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
    return Line("DB_LOST_WRITE_PROTECT", p or "not set", s or "not set", ok(p == s), "003", rule)


def _groups(groups: list[tuple[int, int]]) -> str:
    if not groups:
        return "none"
    sizes = sorted({b for _, b in groups})
    return f"{len(groups)} x {', '.join(map(size_text, sizes))}"


def _size_of(groups: list[tuple[int, int]]) -> int | None:
    """The online log size of a thread (None when its groups differ: no single size to match)."""
    sizes = {b for _, b in groups}
    return sizes.pop() if len(sizes) == 1 else None


def _place(member: str) -> str:
    """Where a log member lives: its ASM disk group (``+RECO``) or its directory."""
    if member.startswith("+"):
        return member.split("/", 1)[0]
    return member.rsplit("/", 1)[0] or "/"
