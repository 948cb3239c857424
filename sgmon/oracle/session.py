"""One long-lived database connection per database, shared by that host's oracle_* collectors.

The four collectors of a host each sample on their own engine thread; they share one ``Session``
whose lock serialises the calls, so each database sees one connection and a fixed handful of
statements per tick.  The session:

* connects lazily (python-oracledb, thin unless ``thick``; ``oracledb`` is imported only here, at
  connect), as SYSDG (``AUTH_MODE_SYSDGD``) or SYSDBA when the config says so, with a call timeout
  (default 2 s) so a slow database makes a collector stale instead of freezing anything;
* reads the version, instance and role at every (re)connect and picks each query's text for that
  version (``queries.py``); a view missing or unreadable is skipped with one note, never an error
  each tick;
* re-reads ``V$INSTANCE.STARTUP_TIME`` once per tick: a change (instance restart) bumps ``epoch``,
  and the collectors drop their previous sample instead of computing deltas across the restart;
* reconnects after a lost connection with exponential backoff (1 s doubling to 60 s), and stops
  for good on errors a retry cannot fix (wrong password: a retry loop would lock the account);
* gets the password from an environment variable, a prompt, or not at all (wallet: external
  authentication, thick mode); it lives only in this process's memory, and every message leaving
  the session is redacted.  Commands that start a full-screen UI call ``ask_passwords`` first, so
  the prompt happens on the terminal before the UI takes it.

A RAC database is collected instance by instance: each instance is a host of its own in the
config (local, or over ssh), with its own session reading its own ``V$`` views, and every row it
gives is of that instance (the ``db`` row names it: ``instance_name``, ``inst_id``, ``thread``).
Not one connection through ``GV$``: LGWR, NSS, their sockets, the redo device and the CPU that
starves LGWR are per node, so each node's OS collectors run there anyway; a ``GV$`` query is
served by parallel slaves on every instance, so one slow or hung node stalls every node's numbers
and the cost of a statement grows with the node count; and a node that is down would blind
sgmon to the survivors.  Measured on the stand-in (``rac-rto-stall``, 10 ticks): 8 statements
per tick per primary instance and 10 on the standby, the same as a single-instance pair; a
two-node primary costs 2 x 8, where one ``GV$`` connection would run 8 statements each fanned
out to both nodes.

For the SQLite stand-in (``sgmon.sim.standin``) and tests, ``connect`` is a zero-argument callable
returning a DB-API connection; the same SQL text runs on it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from sgmon.config import DbConfig
from sgmon.oracle import queries
from sgmon.oracle.connection import BACKOFF_MIN, Connection
from sgmon.oracle.errors import OracleError, Where
from sgmon.oracle.passwords import ask_passwords as ask_passwords  # where callers find it
from sgmon.oracle.passwords import password_of, secret_source
from sgmon.oracle.timeouts import bounded, timed_dsn

log = logging.getLogger("sgmon.oracle")

STANDIN = "standin:"
"""A ``dsn`` naming a V$ stand-in file (``sgmon.sim.standin``) instead of a database."""
CONNECT_TIMEOUT = 5.0
CONNECT_MAX = 20.0
"""A connect's bound whatever the call timeout (an AWR import's is 60 s or more): a listener that
accepts and never answers is reported in seconds, not after two call timeouts."""
_thick_ready = False


class Session(Connection):
    """A shared, lock-protected connection to one database (see the module docstring)."""

    def __init__(
        self,
        db: DbConfig | None = None,
        role: str = "",
        connect: Callable[[], Any] | None = None,
        clock: Callable[[], float] = time.monotonic,
        once: bool = False,
    ) -> None:
        """``once``: a one-shot caller (``config --check``), whose messages promise no retry."""
        if db is None and connect is None:
            raise ValueError("a Session needs a DbConfig or a connect callable")
        super().__init__(
            Where(
                dsn=db.dsn if db else "stand-in",
                user=db.user if db else "",
                mode=db.mode if db else "normal",
                secret_from=secret_source(db),
                call_timeout=db.call_timeout if db else 2.0,
                once=once,
            ),
            clock,
        )
        self.db = db
        self.expected_role = role
        self._connect = connect
        self._connecting = False
        self._connected = threading.Condition(self._lock)
        self._checked_at: float | None = None
        self._startup: Any = None
        self.epoch = 0
        """Bumped at every instance restart seen; samples of different epochs never subtract."""
        self.version: queries.Version = (0,)
        self.role = ""
        self.instance: tuple[str, int | None, int | None] = ("", None, None)
        """INSTANCE_NAME, INSTANCE_NUMBER and THREAD# of the connected instance (RAC: each
        instance is its own host in the config, collected over its own V$)."""
        self.connect_timeout = min(
            CONNECT_MAX, max(CONNECT_TIMEOUT, 2 * (db.call_timeout if db else 2.0))
        )
        """Seconds a connect may take before it counts as failed (and is retried with backoff)."""

    # -- public surface used by the collectors -------------------------------------------------

    def refresh(self) -> None:
        """Connect if needed and check the startup time, at most once per tick for all callers."""
        self._connect_unlocked()
        with self._lock:
            self._ensure()
            now = self._clock()
            if self._checked_at is not None and now - self._checked_at < 0.05:
                return
            rows = self._run("startup")
            self._checked_at = now
            if rows:
                self._see_startup(rows[0][0])

    def query(self, name: str) -> list[tuple] | None:
        """Rows of one named query; None when the query does not exist on this version or its
        view cannot be read (noted once)."""
        self._connect_unlocked()
        with self._lock:
            self._ensure()
            return self._run(name)

    def events(self) -> tuple[str, ...]:
        """The configured extra events."""
        return tuple(self.db.events) if self.db else ()

    # -- connection ----------------------------------------------------------------------------

    def _ensure(self) -> None:
        """Under the lock: a usable connection, or the error that says why there is none."""
        if self._fatal is not None:
            raise self._fatal
        if self._conn is not None:
            return
        now = self._clock()
        if self._connecting:
            raise OracleError(f"connecting to {self.where.dsn} (up to {self.connect_timeout:g}s)")
        if now < self._next_attempt and not self.where.once:
            raise OracleError(
                f"{self._last_error} (next attempt in {self._next_attempt - now:.0f}s)"
            )
        raise OracleError(self._last_error or f"not connected to {self.where.dsn}")

    def _connect_unlocked(self) -> None:
        """Connect when due, without holding the lock while the network is slow: the host's
        other collectors (and this database's other callers) answer "connecting" at once
        instead of queueing behind a standby that does not answer; and the connect itself is
        bounded by ``connect_timeout`` whatever the driver does (python-oracledb's
        tcp_connect_timeout covers the TCP handshake only, and thick mode may ignore it)."""
        with self._lock:
            if self._connecting:  # another caller connects: wait for it, as long as it may take
                self._connected.wait_for(lambda: not self._connecting, self.connect_timeout)
            due = self._conn is None and self._fatal is None and not self._connecting
            if not due or self._clock() < self._next_attempt:
                return
            self._connecting = True
        conn: Any = None
        try:
            conn = bounded(self._open, self.connect_timeout, self._close_late, self.where.once)
        except OracleError as e:
            with self._lock:
                self._done_connecting()
                if e.fatal:
                    self._fatal = e
                else:
                    self._retry_later(str(e))
            return
        except Exception as e:
            with self._lock:
                self._done_connecting()
                try:
                    self._failed(e)
                except OracleError:
                    return
        with self._lock:
            self._done_connecting()
            self._conn = conn
            try:
                self._identify()
            except OracleError as e:  # a half-identified connection is not used: retry later
                if e.fatal:
                    self._fatal = e
                self._retry_later(str(e))
                return
            except Exception as e:
                try:
                    self._failed(e)
                except OracleError:
                    return
            self._backoff = BACKOFF_MIN
            self._last_error = ""

    def _done_connecting(self) -> None:
        self._connecting = False
        self._connected.notify_all()

    @staticmethod
    def _close_late(conn: Any) -> None:
        """A connect that answered after its time was up: nobody waits for it any more."""
        try:
            conn.close()
        except Exception as e:  # a late, half-made connection may fail to close; nothing to do
            log.debug("late close: %s", type(e).__name__)

    def _open(self) -> Any:
        if self._connect is not None:
            return self._connect()
        assert self.db is not None
        db = self.db
        if db.dsn.startswith(STANDIN):  # the V$ stand-in file of the simulation and the tests
            from sgmon.sim.standin import login

            return login(db.dsn[len(STANDIN) :], db.user, self._password(), db.mode)
        import oracledb

        global _thick_ready
        if (db.thick or db.wallet_dir) and not _thick_ready:
            oracledb.init_oracle_client()
            _thick_ready = True
        thick = db.thick or bool(db.wallet_dir)
        kwargs: dict[str, Any] = {
            "dsn": timed_dsn(db.dsn, self.connect_timeout) if thick else db.dsn,
            "tcp_connect_timeout": max(2.0, db.call_timeout),
            "expire_time": 1,
        }
        if db.wallet_dir:  # secure external password store: no password passes through sgmon
            kwargs.update(externalauth=True, config_dir=db.wallet_dir)
        else:
            kwargs.update(user=db.user, password=self._password())
        if db.mode == "sysdg":
            kwargs["mode"] = oracledb.AUTH_MODE_SYSDGD
        elif db.mode == "sysdba":
            kwargs["mode"] = oracledb.AUTH_MODE_SYSDBA
        conn = oracledb.connect(**kwargs)
        conn.call_timeout = int(db.call_timeout * 1000)
        return conn

    def _password(self) -> str:
        """The user's password, found once (``passwords``) and kept for reconnects."""
        if self._secret is None:
            assert self.db is not None
            self._secret = password_of(self.db)
        return self._secret

    def _identify(self) -> None:
        """Version, role and startup time, read at every (re)connect; query texts chosen."""
        cur = self._conn.cursor()
        try:
            cur.execute(queries.QUERIES["instance"][(0,)])
            self.statements += 1
            row = cur.fetchone()
        finally:
            cur.close()
        if not row:
            raise OracleError("v$instance returned no row")
        name, version, _status, startup, number, thread = row
        self.instance = (str(name or ""), _int(number), _int(thread))
        self.version = queries.parse_version(version)
        self.version_text = str(version)
        extra = self.events()
        self._texts = {n: queries.render_all(n, self.version, extra) for n in queries.QUERIES}
        self._skipped.clear()
        if self.available("version_full"):
            rows = self._run("version_full")
            if rows and rows[0][0]:
                self.version_text = str(rows[0][0])
                self.version = queries.parse_version(self.version_text)
        self._check_container()
        rows = self._run("database")
        if rows:
            self.role = role_of(rows[0][0])
            if self.expected_role and self.role != self.expected_role:
                self._note(
                    f"configured as {self.expected_role} but V$DATABASE says {rows[0][0]} "
                    "(a switchover?): showing it as it is; fix the role in the config"
                )
        self._see_startup(startup)
        self._checked_at = self._clock()

    def _check_container(self) -> None:
        """Refuse a session inside a pluggable database: there the system statistics and wait
        histograms can be the PDB's own share, while LGWR's and NSS's waits are the root's, so
        the commit path would read short.  Retrying cannot fix it: it is fatal, with the fix."""
        rows = self._run("container") if self.available("container") else None
        if not rows:
            return
        con_id, name = rows[0]
        if con_id is not None and int(con_id) > 1:
            raise OracleError(
                f"{self.where.dsn} opens pluggable database {name}, where LGWR and NSS waits are "
                "not counted: connect to the CDB root's service (CDB$ROOT) with a common user "
                "such as C##SGMON",
                fatal=True,
            )

    def _see_startup(self, startup: Any) -> None:
        if self._startup is not None and startup != self._startup:
            self.epoch += 1
            self._note(f"instance restarted (startup time {startup}): counters re-based")
        self._startup = startup

    # -- statements ----------------------------------------------------------------------------

    def select(self, text: str, binds: Mapping[str, Any] | None = None) -> list[tuple]:
        """Rows of one statement outside the named queries (the AWR importer's, with binds).
        A view this user cannot read raises an OracleError with its code (ORA-00942...) for
        the caller to explain; it is not skipped as a named query's would be."""
        self._connect_unlocked()
        with self._lock:
            self._ensure()
            return self._execute(text, binds)


def _int(v: Any) -> int | None:
    """A NUMBER column as an int (None stays None)."""
    return None if v is None else int(v)


def role_of(database_role: str | None) -> str:
    r = (database_role or "").upper()
    if r == "PRIMARY":
        return "primary"
    if "STANDBY" in r or r == "FAR SYNC":
        return "standby"
    return r.lower()


# -- sharing: one session per database for all collectors of a host ---------------------------

_shared: dict[tuple, tuple[Session, int]] = {}
_shared_lock = threading.Lock()


def acquire(options: Mapping[str, Any]) -> Session:
    """The session a collector should use, from its options (see ``collectors.oracle``)."""
    given = options.get("session")
    if isinstance(given, Session):
        return given
    db = options.get("db")
    connect = options.get("connect")
    if db is None and connect is None:
        raise OracleError(
            "no database configured: add a [host.db] table with dsn = ...", fatal=True
        )
    key = (db, options.get("role", ""), connect)  # bound methods of one object compare equal
    with _shared_lock:
        s, n = _shared.get(key, (None, 0))
        if s is None:
            s = Session(db, options.get("role", ""), connect)
        _shared[key] = (s, n + 1)
        return s


def release(session: Session) -> None:
    """Drop one user of a shared session; the last one closes it."""
    with _shared_lock:
        for key, (s, n) in list(_shared.items()):
            if s is session:
                if n <= 1:
                    del _shared[key]
                    s.close()
                else:
                    _shared[key] = (s, n - 1)
                return
