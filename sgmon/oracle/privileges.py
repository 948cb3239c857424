"""What a database login can read, and the statements that give it what it lacks.

``sgmon config --check`` logs on to each database as sgmon would, tries each V$ view sgmon reads
on that version (``SELECT COUNT(*) ... WHERE 1 = 0``: the privilege is checked when the statement
is parsed, and no row is read), and prints the missing ``CREATE USER`` / ``GRANT`` statements as
one block for whoever holds the keys.  The model (Oracle Database Reference, "About Dynamic
Performance Views"; Security Guide, "SYSDG Administrative Privilege for Oracle Data Guard
Operations"):

- a primary, or an open Active Data Guard standby: an ordinary user with ``CREATE SESSION`` and
  ``SELECT`` on the ``SYS.V_$`` views (or ``SELECT_CATALOG_ROLE``); users and grants are made on
  the primary and reach the standby with redo;
- a mounted standby accepts only administrative logins, checked against the password file:
  ``SYSDG`` from 12.1 (``mode = "sysdg"``), ``SYSDBA`` before (``mode = "sysdba"``).  From 12.2
  the standby's password file follows the primary's with redo; on 12.1 and 11.2 it is copied
  by hand after the grant.
- In a multitenant database the user is common (``C##`` prefix), created and granted with
  ``CONTAINER=ALL`` from the root.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sgmon.config import DbConfig
from sgmon.oracle import queries
from sgmon.oracle.errors import MISSING, OracleError, code_of
from sgmon.oracle.session import Session

_VIEW = re.compile(r"\bv\$\w+", re.IGNORECASE)
REFUSED = ("ORA-01017", "ORA-01031", "ORA-01033", "ORA-28000", "ORA-28009")
"""Refusals the statements or the config can mend."""
FAMILIES: tuple[tuple[str, queries.Version], ...] = (
    ("11.2", (11, 2)),
    ("12.1", (12, 1)),
    ("12.2 and later", (19, 0)),
)
"""The releases whose view sets differ, for a database whose version is not known yet."""


def views(version: queries.Version) -> list[str]:
    """The V$ views sgmon's queries read on this version, in lower case."""
    found: set[str] = set()
    for name in queries.QUERIES:
        for text in queries.render_all(name, version):
            found.update(v.lower() for v in _VIEW.findall(text))
    return sorted(found)


@dataclass
class Access:
    """What one login could do: its error when it could not log on, else the views it lacks."""

    host: str
    db: DbConfig
    version: queries.Version | None = None
    error: str = ""
    code: str = ""
    missing: list[str] = field(default_factory=list)
    readable: int = 0

    no_password: bool = False
    """The login's password source is empty or missing (nothing was sent)."""

    @property
    def refused(self) -> bool:
        """The login cannot work as configured: the database refused it, or there is no
        password to send (not: the database could not be reached)."""
        return self.code in REFUSED or self.no_password

    def summary(self) -> str:
        """One line for the check's listing."""
        who = f"{self.db.user or '(wallet)'}@{self.db.dsn} {self.db.mode}"
        if self.error:
            return f"{self.host}: {who}: {self.error}"
        if self.version is None:
            return f"{self.host}: {who}: logs on, cannot read v$instance (nor, likely, the rest)"
        version = ".".join(map(str, self.version))
        lacks = f"; cannot read {', '.join(self.missing)}" if self.missing else ""
        total = self.readable + len(self.missing)
        return (
            f"{self.host}: {who}, version {version}: reads {self.readable} of {total} views{lacks}"
        )


def probe(host: str, db: DbConfig, role: str = "", session: Session | None = None) -> Access:
    """Log on as sgmon would and try each view; never raises for a database's refusal.  With
    ``session`` (a one-shot one the caller reads more through and closes), through it."""
    access = Access(host, db)
    own = session is None
    if session is None:
        session = Session(db, role, once=True)
    try:
        session.refresh()
        access.version = session.version
        for view in views(session.version):
            try:
                session.select(f"SELECT COUNT(*) FROM {view} WHERE 1 = 0")
                access.readable += 1
            except OracleError as e:
                if e.code not in MISSING:
                    raise
                access.missing.append(view)
    except OracleError as e:
        code = e.code or code_of(e)  # a refusal to be retried carries its code in the text
        if code in MISSING:  # logged on, but V$INSTANCE (read first) is not granted
            access.missing = ["v$instance"]
        else:
            access.error, access.code = str(e), code
            access.no_password = e.fatal and not code  # the session's own refusal
    finally:
        if own:
            session.close()
    return access


def statements(access: Access) -> list[str]:
    """The statements that give this login what it lacks ([] when nothing is missing); SQL*Plus
    comments say where to run them."""
    db = access.db
    user = db.user.upper()
    if access.code not in REFUSED[:3] and not access.missing:
        return []
    if not user:  # a wallet login: its user is the wallet's
        return [f"-- {access.host}: grant the wallet's user as below"]
    cdb = access.version is None or access.version >= (12, 1)  # multitenant from 12.1
    scope = " CONTAINER=ALL" if user.startswith("C##") and cdb else ""
    out = [f"-- {access.host} ({db.dsn}, mode {db.mode}): run on the primary as SYSDBA"]
    if access.code == "ORA-01017":
        out += [
            f'CREATE USER {user} IDENTIFIED BY "<password>"{scope};',
            f'-- or, if {user} exists: ALTER USER {user} IDENTIFIED BY "<password>"{scope};',
        ]
    mode = db.mode
    if access.code == "ORA-01033":  # mounted: an ordinary login cannot read it
        mode = "sysdg"
        out.append(f'-- then set mode = "sysdg" in {access.host}\'s [host.db]')
    if mode in ("sysdg", "sysdba"):
        if access.code in ("ORA-01017", "ORA-01031", "ORA-01033"):
            out += _administrative(user, mode, scope, access.version)
        return out
    return out + _ordinary(access, user, scope)


def _ordinary(access: Access, user: str, scope: str) -> list[str]:
    """An ordinary login's grants: CREATE SESSION for a new user, then SELECT on the views it
    cannot read (on every view its version reads, or each version family's when the version
    is not known)."""
    out = []
    if access.code == "ORA-01017":
        out.append(f"GRANT CREATE SESSION TO {user}{scope};")
    if access.missing and access.version is not None:
        out += [f"GRANT SELECT ON SYS.{_v_(v)} TO {user}{scope};" for v in access.missing]
        return out
    families = FAMILIES if access.version is None else (("", access.version),)
    for name, version in families:
        if name:
            out.append(f"-- {name}:")
        where = scope if version >= (12, 1) else ""
        out += [f"GRANT SELECT ON SYS.{_v_(v)} TO {user}{where};" for v in views(version)]
    return out


def _administrative(user: str, mode: str, scope: str, version: queries.Version | None) -> list[str]:
    """The administrative grant a mounted standby needs, and the password file's way there."""
    out = []
    if mode == "sysdg":
        if version is not None and version < (12, 1):
            return ['-- SYSDG exists from 12.1: on 11.2 set mode = "sysdba", then', *_sysdba(user)]
        out.append(f"GRANT SYSDG TO {user}{scope};")
    else:
        out += _sysdba(user)
    if version is None or version < (12, 2):
        out.append(
            "-- before 12.2: copy the primary's password file (orapw<SID>) to the standby; "
            "from 12.2 it follows with redo"
        )
    return out


def _sysdba(user: str) -> list[str]:
    return [f"GRANT SYSDBA TO {user};"]


def _v_(view: str) -> str:
    """The view behind a public V$ synonym, which is what SELECT is granted on."""
    return "V_$" + view[2:].upper()
