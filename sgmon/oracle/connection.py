"""One database connection's statements, and what their failures do to it.

A ``Connection`` runs the named queries (``queries.py``) in the text its database's version
reads, each fetched in one round trip under the lock; a view this database lacks or hides falls
back to an older one, else its query is skipped with one note, never an error each tick.  A
failed statement on a lost connection drops it and schedules a reconnect with exponential
backoff (1 s doubling to 60 s); one a retry cannot fix (a wrong password: a retry loop would
lock the account) stops for good.  ``Session`` connects it, identifies the database and shares
it between a host's collectors.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

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

BACKOFF_MIN = 1.0
BACKOFF_MAX = 60.0


class Connection:
    """A lock-protected connection's statements and failures (see the module docstring)."""

    def __init__(self, where: Where, clock: Callable[[], float]) -> None:
        self.where = where
        self._clock = clock
        self._lock = threading.RLock()
        self._conn: Any = None
        self._secret: str | None = None
        self._next_attempt = 0.0
        self._backoff = BACKOFF_MIN
        self._last_error = ""
        self._fatal: OracleError | None = None
        self._texts: dict[str, list[str]] = {}  # query -> its texts, the one in use first
        self._skipped: set[str] = set()
        self._notes: list[str] = []
        self.version_text = ""
        self.statements = 0
        """Statements executed so far (the bench divides it by ticks)."""

    @property
    def connected(self) -> bool:
        """Whether a connection is open now."""
        return self._conn is not None

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

    def close(self) -> None:
        """Close the connection; idempotent."""
        with self._lock:
            self._drop()

    # -- failures ------------------------------------------------------------------------------

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
