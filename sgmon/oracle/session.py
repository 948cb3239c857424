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

import getpass
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NoReturn

from sgmon.config import DbConfig
from sgmon.oracle import queries
from sgmon.oracle.errors import (
    FATAL,
    LOST,
    MISSING,
    OracleError,
    Where,
    code_of,
    explain,
    redact,
)

log = logging.getLogger("sgmon.oracle")

STANDIN = "standin:"
"""A ``dsn`` naming a V$ stand-in file (``sgmon.sim.standin``) instead of a database."""
CONNECT_TIMEOUT = 5.0
BACKOFF_MIN = 1.0
BACKOFF_MAX = 60.0
_thick_ready = False


class Session:
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
        self.db = db
        self.expected_role = role
        self._connect = connect
        self._clock = clock
        self._lock = threading.RLock()
        self._conn: Any = None
        self._secret: str | None = None
        self._next_attempt = 0.0
        self._backoff = BACKOFF_MIN
        self._last_error = ""
        self._connecting = False
        self._connected = threading.Condition(self._lock)
        self._fatal: OracleError | None = None
        self._texts: dict[str, list[str]] = {}  # query -> its texts, the one in use first
        self._skipped: set[str] = set()
        self._notes: list[str] = []
        self._checked_at: float | None = None
        self._startup: Any = None
        self.epoch = 0
        """Bumped at every instance restart seen; samples of different epochs never subtract."""
        self.version: queries.Version = (0,)
        self.version_text = ""
        self.role = ""
        self.instance: tuple[str, int | None, int | None] = ("", None, None)
        """INSTANCE_NAME, INSTANCE_NUMBER and THREAD# of the connected instance (RAC: each
        instance is its own host in the config, collected over its own V$)."""
        self.statements = 0
        """Statements executed so far (the bench divides it by ticks)."""
        self.connect_timeout = max(CONNECT_TIMEOUT, 2 * (db.call_timeout if db else 2.0))
        """Seconds a connect may take before it counts as failed (and is retried with backoff)."""
        self.where = Where(
            dsn=db.dsn if db else "stand-in",
            user=db.user if db else "",
            mode=db.mode if db else "normal",
            secret_from=_secret_source(db),
            call_timeout=db.call_timeout if db else 2.0,
            once=once,
        )

    # -- public surface used by the collectors -------------------------------------------------

    @property
    def connected(self) -> bool:
        """Whether a connection is open now."""
        return self._conn is not None

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

    def available(self, name: str) -> bool:
        """Whether the query runs on this database (after connect)."""
        return bool(self._texts.get(name)) and name not in self._skipped

    def text(self, name: str) -> str | None:
        """The SQL text in use for a query (after connect)."""
        texts = self._texts.get(name)
        return texts[0] if texts and name not in self._skipped else None

    def take_notes(self) -> list[str]:
        """One-time notes (a view skipped, a restart) not yet shown."""
        with self._lock:
            notes, self._notes = self._notes, []
            return notes

    def events(self) -> tuple[str, ...]:
        """The configured extra events."""
        return tuple(self.db.events) if self.db else ()

    def close(self) -> None:
        """Close the connection; idempotent."""
        with self._lock:
            self._drop()

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
        if self._secret is not None:
            return self._secret
        db = self.db
        assert db is not None
        if db.password_env:
            value = os.environ.get(db.password_env)
            if not value:
                raise OracleError(
                    f"environment variable {db.password_env} is empty: export the password of "
                    f"{db.user}@{db.dsn} in it",
                    fatal=True,
                )
            self._secret = value
        elif db.password == "prompt":
            if (db.dsn, db.user) in _prompted:
                self._secret = _prompted[(db.dsn, db.user)]
                return self._secret
            if not sys.stdin.isatty():
                raise OracleError(
                    f"no terminal to prompt for the password of {db.user}@{db.dsn}: use "
                    "password_env or wallet_dir",
                    fatal=True,
                )
            self._secret = getpass.getpass(f"password for {db.user}@{db.dsn}: ")
        else:
            raise OracleError(
                f"{db.user}@{db.dsn} has no password source: set password_env, wallet_dir or "
                'password = "prompt"',
                fatal=True,
            )
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

    def _failed(self, exc: BaseException) -> NoReturn:
        """A connect or query failure: fatal ones stop, others schedule a reconnect."""
        code = code_of(exc)
        msg = redact(explain(exc, self.where), self._secret)
        if code in FATAL:
            self._drop()
            self._fatal = OracleError(msg, code, fatal=True)
            raise self._fatal from None
        self._retry_later(msg)
        raise OracleError(msg, code) from None

    def _retry_later(self, msg: str) -> None:
        self._drop()
        self._last_error = msg
        self._next_attempt = self._clock() + self._backoff
        self._backoff = min(self._backoff * 2, BACKOFF_MAX)

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception as e:  # closing a dead connection may fail; nothing to do
                log.debug("close: %s", type(e).__name__)

    # -- statements ----------------------------------------------------------------------------

    def select(self, text: str, binds: Mapping[str, Any] | None = None) -> list[tuple]:
        """Rows of one statement outside the named queries (the AWR importer's, with binds).
        A view this user cannot read raises an OracleError with its code (ORA-00942...) for
        the caller to explain; it is not skipped as a named query's would be."""
        self._connect_unlocked()
        with self._lock:
            self._ensure()
            return self._execute(text, binds)

    def _run(self, name: str) -> list[tuple] | None:
        text = self.text(name)
        if text is None:
            return None
        try:
            return self._execute(text)
        except OracleError as e:
            if e.code in MISSING:
                return self._missing(name, e.code, e)
            raise

    def _execute(self, text: str, binds: Mapping[str, Any] | None = None) -> list[tuple]:
        """Under the lock: run one statement, fetched in one round trip; errors as one line."""
        cur = self._conn.cursor()
        try:
            if hasattr(cur, "prefetchrows"):  # one round trip for every query of ours
                cur.prefetchrows = 1000
                cur.arraysize = 1000
            if binds:
                cur.execute(text, binds)
            else:
                cur.execute(text)
            self.statements += 1
            return [tuple(r) for r in cur.fetchall()]
        except Exception as e:
            code = code_of(e)
            if code not in MISSING and (
                code in LOST or (code not in _USABLE and not _healthy(self._conn))
            ):
                self._failed(e)
            raise OracleError(redact(explain(e, self.where), self._secret), code) from None
        finally:
            try:
                cur.close()
            except Exception as e:  # the connection may be gone already
                log.debug("cursor close: %s", type(e).__name__)

    def _missing(self, name: str, code: str, exc: BaseException) -> list[tuple] | None:
        """A view this database lacks or hides: fall back to an older one, else skip (noted)."""
        texts = self._texts[name]
        advice = redact(explain(exc, self.where), self._secret).split(": ", 1)[-1]
        view = _view_of(texts[0])
        if len(texts) > 1:
            texts.pop(0)
            self._note(
                f"{view} not readable on {self.version_text} ({code}): using {_view_of(texts[0])}"
                f" instead; if this version has it: {advice}"
            )
            return self._run(name)
        self._skipped.add(name)
        self._note(f"{view} not readable on {self.version_text} ({code}): {name} skipped; {advice}")
        return None

    def _note(self, text: str) -> None:
        log.warning("%s: %s", self.where.dsn, text)
        self._notes.append(text)


_USABLE = {"DPY-4024", "DPI-1067"}  # call timeout: the driver recovered the connection


def _view_of(text: str) -> str:
    """The first V$ view a statement reads."""
    m = re.search(r"\bFROM\s+(v\$\w+)", text, re.IGNORECASE)
    return m.group(1) if m else "a view"


def _healthy(conn: Any) -> bool:
    check = getattr(conn, "is_healthy", None)
    return bool(check()) if callable(check) else True


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


def _secret_source(db: DbConfig | None) -> str:
    if db is None:
        return ""
    if db.wallet_dir:
        return f"the wallet in {db.wallet_dir}"
    if db.password_env:
        return f"${db.password_env}"
    if db.password == "prompt":
        return "the prompt"
    return ""


_prompted: dict[tuple[str, str], str] = {}  # in memory only, for this process's life


def ask_passwords(dbs: Iterable[DbConfig | None]) -> None:
    """Prompt now, on the calling (main) thread, for every database whose password comes from
    the prompt; call before a full-screen UI owns the terminal.  Kept in memory only."""
    for db in dbs:
        if db is None or db.password != "prompt" or (db.dsn, db.user) in _prompted:
            continue
        if not sys.stdin.isatty():
            raise OracleError(
                f"no terminal to prompt for the password of {db.user}@{db.dsn}: use "
                "password_env or wallet_dir",
                fatal=True,
            )
        _prompted[(db.dsn, db.user)] = getpass.getpass(f"password for {db.user}@{db.dsn}: ")


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


def timed_dsn(dsn: str, seconds: float) -> str:
    """A DSN that carries its own connect timeouts, in the forms the Oracle Client libraries of
    thick mode honour: Easy Connect ``?connect_timeout=..&transport_connect_timeout=..`` (19c
    client and later), or CONNECT_TIMEOUT / TRANSPORT_CONNECT_TIMEOUT in a full descriptor.
    A DSN that already sets them, or a TNS alias (the timeouts belong in its tnsnames.ora), is
    left alone."""
    t = max(1, round(seconds))
    low = dsn.lower()
    if "connect_timeout" in low:
        return dsn
    if dsn.lstrip().startswith("("):
        return re.sub(
            r"\(\s*description\s*=",
            lambda m: f"{m.group(0)}(CONNECT_TIMEOUT={t})(TRANSPORT_CONNECT_TIMEOUT={t})",
            dsn,
            count=1,
            flags=re.IGNORECASE,
        )
    if "/" not in dsn and ":" not in dsn:
        return dsn  # a TNS alias
    joiner = "&" if "?" in dsn else "?"
    return f"{dsn}{joiner}connect_timeout={t}&transport_connect_timeout={t}"


def bounded(
    fn: Callable[[], Any], seconds: float, late: Callable[[Any], None], once: bool = False
) -> Any:
    """``fn()`` in a thread, waited for at most ``seconds``: past that, OracleError (retried
    later, unless ``once``) and the thread is left to finish; what it returns then goes to
    ``late``."""
    box: dict[str, Any] = {}
    done = threading.Event()
    gave_up = threading.Event()

    def work() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # handed to the caller below
            box["error"] = e
        finally:
            done.set()
            if gave_up.is_set() and "value" in box:
                late(box["value"])

    threading.Thread(target=work, name="sgmon-oracle-connect", daemon=True).start()
    if not done.wait(seconds):
        gave_up.set()
        if done.is_set() and "value" in box:  # finished in the instant we gave up
            return box["value"]
        again = "" if once else "; retrying with backoff"
        raise OracleError(f"no answer to the connect within {seconds:g}s{again}")
    if "error" in box:
        raise box["error"]
    return box["value"]
