"""Logins to a stand-in file as a database grants them (``dsn = "standin:PATH"``): its users,
their administrative privileges and grants, and the errors Oracle answers a refused one with."""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Iterable
from typing import Any

from sgmon.sim.standin.views import Tables, open_session, quoted

USERS = "sgmon$users"
"""The stand-in's users (``StandIn.add_user``): what its ``login`` checks."""
_VIEW = re.compile(r"\bv\$(\w+)", re.IGNORECASE)


class LoginRefused(sqlite3.OperationalError):
    """A login the stand-in refuses, with Oracle's code and text (``sgmon.oracle.errors`` reads
    the code from the text, as from the driver's message)."""


class _Login:
    """A logged-on session: its statements fail as a lost connection's (ORA-03113) once the
    stand-in's file is gone (the database taken away), and an ordinary user's read only the
    views granted (ORA-00942 for another, as Oracle answers for a view the user may not see)."""

    def __init__(self, conn: sqlite3.Connection, path: str, views: frozenset[str] | None) -> None:
        self._conn = conn
        self._path = path
        self._views = views

    def cursor(self) -> _LoginCursor:
        return _LoginCursor(self._conn.cursor(), self._path, self._views)

    def __getattr__(self, name: str) -> object:
        return getattr(self._conn, name)


class _LoginCursor:
    def __init__(self, cur: sqlite3.Cursor, path: str, views: frozenset[str] | None) -> None:
        self._cur = cur
        self._path = path
        self._views = views

    def execute(self, sql: str, *args: Any) -> _LoginCursor:
        if not os.path.exists(self._path):
            raise sqlite3.OperationalError("ORA-03113: end-of-file on communication channel")
        granted = self._views
        if granted is not None and any(
            f"V_${v.upper()}" not in granted for v in _VIEW.findall(sql)
        ):
            raise sqlite3.OperationalError("ORA-00942: table or view does not exist")
        self._cur.execute(sql, *args)
        return self

    def __getattr__(self, name: str) -> object:
        return getattr(self._cur, name)


def login(path: str, user: str, password: str, mode: str = "normal") -> Any:
    """A session on the stand-in file at ``path`` as a database would grant it: ORA-01017 for an
    unknown user or a wrong password, ORA-01031 for an administrative login (``sysdg``,
    ``sysdba``) the user does not hold, ORA-01033 for an ordinary login while the database is
    not open (mounted, or starting), ORA-12541 when there is no file (no database there); then
    see ``_Login``.  For ``dsn = "standin:PATH"``."""
    if not os.path.exists(path):
        raise LoginRefused("ORA-12541: TNS:no listener")
    conn = open_session(f"file:{path}?mode=ro")
    try:
        row = conn.execute(
            f"SELECT pw, admin, grants FROM {quoted(USERS)} WHERE name = ?", (user.upper(),)
        ).fetchone()
        if row is None or row[0] != password:
            raise LoginRefused("ORA-01017: invalid username/password; logon denied")
        admin, grants = row[1].split(","), set(row[2].split(","))
        if mode != "normal":
            if mode not in admin:
                raise LoginRefused("ORA-01031: insufficient privileges")
            return _Login(conn, path, None)
        state = conn.execute(f"SELECT open_mode FROM {quoted('v$database')}").fetchone()
        if state is None or not str(state[0]).startswith("READ"):
            raise LoginRefused("ORA-01033: ORACLE initialization or shutdown in progress")
    except sqlite3.OperationalError:
        conn.close()
        raise
    return _Login(conn, path, None if "SELECT_CATALOG_ROLE" in grants else frozenset(grants))


class Users(Tables):
    """The users a stand-in's ``login`` accepts (``StandIn``'s)."""

    def add_user(
        self,
        name: str,
        password: str,
        admin: Iterable[str] = (),
        grants: Iterable[str] = ("SELECT_CATALOG_ROLE",),
    ) -> None:
        """A user the stand-in's ``login`` accepts: its administrative privileges (``sysdg``,
        ``sysdba``) and its grants (``SELECT_CATALOG_ROLE``, or views as ``V_$SYSTEM_EVENT``)."""
        with self._lock:
            self._db.execute(
                f"CREATE TABLE IF NOT EXISTS {quoted(USERS)} (name PRIMARY KEY, pw, admin, grants)"
            )
            self._db.execute(
                f"INSERT OR REPLACE INTO {quoted(USERS)} VALUES (?, ?, ?, ?)",
                (
                    name.upper(),
                    password,
                    ",".join(a.lower() for a in admin),
                    ",".join(g.upper() for g in grants),
                ),
            )
