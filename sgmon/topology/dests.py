"""The destinations a host ships redo to, and the watched hosts each is mapped to.

A destination is a host's V$ARCHIVE_DEST / V$ARCHIVE_DEST_STATUS row (``oracle_dg``'s
``dest_<N>``: DB_UNIQUE_NAME, DESTINATION, TRANSMIT_MODE, STATUS, VALID_ROLE, TYPE,
ARCHIVED_SEQ#), mapped to a watched host by DB_UNIQUE_NAME, else by host name in the service
(``sgmon.topology`` says how).  Its mode and status say whether LGWR waits for it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from sgmon.config import HostConfig
from sgmon.contract import Row, Text
from sgmon.fields import ORACLE_DG
from sgmon.model import Frame, Value

SYNC_MODES = ("SYNC", "PARALLELSYNC", "SYNCHRONOUS")
OFF = ("DEFERRED", "DISABLED", "INACTIVE")
"""Destination STATUS values under which nothing is shipped (V$ARCHIVE_DEST)."""
BY_NAME, BY_SERVICE = "db_unique_name", "host in service"
"""How a destination was mapped to its hosts (``Dest.matched_by``), as the topology's lines
say it: by the DB_UNIQUE_NAME setting, or by a host name in its service."""
DB = ORACLE_DG.Rows.db.fixed
_HOST = re.compile(r"\(\s*HOST\s*=\s*([^)\s]+)\s*\)", re.IGNORECASE)
_OFF_PATH_SENDER = re.compile(r"^ora_(tt[0-9a-z]{2}|arc[0-9a-z])_", re.IGNORECASE)
"""Primary processes whose sockets no commit waits for: TTnn ship ASYNC redo (12.1 onward,
Database Concepts "LGWR"), ARCn archived logs and gaps.  NSSn (SYNC) and 11.2's LNSn, which
serves both modes, may be on the commit path."""


def is_sync(mode: object) -> bool:
    """Whether a TRANSMIT_MODE (or VALID_TYPE text) makes LGWR wait for the destination."""
    return str(mode or "").upper() in SYNC_MODES


def ships_sync(row: Row) -> bool:
    """Whether a destination row (oracle_dg ``dest_N``) is SYNC and shipping now: a STATUS under
    which nothing ships (OFF), or ERROR (after NET_TIMEOUT the primary stopped waiting for it),
    means no remote write is in a commit.  Its place in the configuration is Dest.commit_path,
    which an ERROR keeps: the standby is still the SYNC one, failing."""
    status = (ORACLE_DG.status.of(row) or "VALID").upper()
    return is_sync(ORACLE_DG.transmit_mode.of(row)) and status not in (*OFF, "ERROR")


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
    matched_by: str = ""  # BY_NAME | BY_SERVICE
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

    @property
    def far_sync(self) -> bool:
        """Whether its TYPE (V$ARCHIVE_DEST_STATUS) says it is a far sync instance."""
        return self.kind.upper() == "FAR SYNC"

    def ships(self) -> bool:
        """Whether it ships in its sender's role now: not switched off, and VALID_NOW unset or
        YES (a standby's destination valid only in the primary role does not)."""
        return self.valid_now.upper() in ("", "YES") and self.status.upper() not in OFF

    def mode_text(self) -> str:
        """``SYNC AFFIRM``, ``SYNC NOAFFIRM`` (Fast Sync), ``ASYNC``."""
        mode = self.mode or "?"
        if is_sync(mode) and self.affirm:
            return f"{mode} {'AFFIRM' if self.affirm.upper() == 'YES' else 'NOAFFIRM'}"
        return mode

    def behind(self) -> str:
        """``, 2 log(s) behind`` when the logs it has archived are known; else empty."""
        return "" if self.logs_behind is None else f", {self.logs_behind} log(s) behind"

    def describe(self) -> str:
        """``dest_2 B (svc_b): SYNC AFFIRM, VALID -> hostb, by db_unique_name``: the
        destination, its mode and state, and the hosts it was mapped to and how."""
        who = " + ".join(self.hosts) if self.hosts else "unmonitored"
        how = f", by {self.matched_by}" if self.matched_by else ""
        return (
            f"{self.inst} {self.target} ({self.service or '-'}): {self.mode_text()}, "
            f"{self.status or '?'}{self.behind()} -> {who}{how}"
        )


def dest_rows(frame: Frame | None) -> dict[str, Row]:
    """A host's destination rows (``dest_<N>``), by instance."""
    return ORACLE_DG.Rows.dest.of(frame.rows(ORACLE_DG.name)) if frame is not None else {}


def dests(
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
    rows = dest_rows(frame)
    if not rows:
        return []
    others = [n for n in names if n not in senders]
    uniq = {n: unique_name(hosts.get(n), frames.get(n)) for n in others}
    aliases = {n: _aliases(n, hosts.get(n)) for n in others}
    return [
        _dest(inst, rows[inst], uniq, aliases, pframe, source)
        for inst in sorted(rows, key=_dest_number)
    ]


def _dest_number(inst: str) -> int:
    """The N of ``dest_<N>`` (0 when it is not a number), for the destinations' order."""
    n = ORACLE_DG.Rows.dest.ident(inst)
    return int(n) if n.isdigit() else 0


def _dest(
    inst: str,
    r: Row,
    uniq: Mapping[str, str],
    aliases: Mapping[str, frozenset[str]],
    pframe: Frame | None,
    source: str,
) -> Dest:
    """One destination row, mapped to the hosts whose DB_UNIQUE_NAME (``uniq``) is its target,
    else to those one of whose names (``aliases``) its service holds."""
    target, service = _text(ORACLE_DG.target, r), _text(ORACLE_DG.service, r)
    by_name = [n for n in uniq if uniq[n] and uniq[n] == target.upper()]
    in_service = _service_hosts(service) if service and not by_name else frozenset()
    by_host = [n for n in aliases if aliases[n] & in_service]
    return Dest(
        inst,
        target,
        service,
        _text(ORACLE_DG.transmit_mode, r),
        _text(ORACLE_DG.affirm, r),
        _text(ORACLE_DG.status, r),
        _text(ORACLE_DG.valid_role, r),
        _text(ORACLE_DG.dest_type, r),
        tuple(by_name or by_host),
        BY_NAME if by_name else BY_SERVICE if by_host else "",
        _logs_behind(r, pframe),
        source,
        _text(ORACLE_DG.valid_now, r),
    )


def _text(field: Text, r: Row) -> str:
    """A destination's text field, empty where the row has none."""
    return field.of(r) or ""


def _logs_behind(r: Row, pframe: Frame | None) -> int | None:
    """How many logs the destination's last archived one is behind the primary's (``pframe``)
    last of the same thread (None when either is not known)."""
    archived = ORACLE_DG.archived_seq.of(r)
    current = _sequence(pframe, ORACLE_DG.archived_thread.raw(r))
    behind = int(current - archived) if current is not None and archived else None
    return max(0, behind) if behind is not None else None


def _sequence(frame: Frame | None, thread: Value = None) -> float | None:
    """The primary's last log sequence of ``thread`` (ARCHIVED_THREAD#: each RAC instance's
    thread has its own sequences), or the highest of any thread when it is not known."""
    rows = frame.rows(ORACLE_DG.name) if frame is not None else {}
    inst = ORACLE_DG.Rows.thread.instance(thread)
    if thread is not None and inst in rows:
        return ORACLE_DG.sequence.of(rows[inst])
    seqs = [ORACLE_DG.sequence.of(r) for r in ORACLE_DG.Rows.thread.of(rows).values()]
    return max((s for s in seqs if s is not None), default=None)


def unique_name(host: HostConfig | None, frame: Frame | None) -> str:
    """The host's DB_UNIQUE_NAME, upper case: its database's own, else the config's."""
    said = ORACLE_DG.db_unique_name.at(frame, DB)
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
