"""Database errors a DBA can cause, each turned into one line that says what to do.

The code is read from the driver's error object (``e.args[0].full_code``, as python-oracledb
sets it), else from an ``ORA-nnnnn``/``DPY-nnnn`` in the text; the SQLite stand-in's "no such
table/column" map to ORA-00942/ORA-00904 so the stand-in exercises the same paths.  The password
is never part of a message: every line goes through ``redact`` before it leaves the session.
"""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass

_CODE = re.compile(r"\b(ORA|DPY|DPI|TNS)-(\d{4,5})\b")

# connection is gone: drop it and reconnect with backoff
LOST = {
    "DPY-4011", "DPY-1001", "DPI-1080", "ORA-03113", "ORA-03114", "ORA-03135", "ORA-00028",
    "ORA-01012", "ORA-01089", "ORA-01092", "ORA-12537", "ORA-12547", "ORA-12570", "ORA-02396",
}  # fmt: skip
# the call took longer than call_timeout; the connection is still usable
TIMEOUT = {"DPY-4024", "DPI-1067", "ORA-03156"}
# retrying would only lock the account or repeat the refusal: stop until the config changes
FATAL = {"ORA-01017", "ORA-28000", "ORA-01031", "ORA-28009", "DPY-3010", "DPY-3001"}
# a view or column this version or this user cannot read
MISSING = {"ORA-00942", "ORA-00904", "ORA-01219"}


class OracleError(Exception):
    """A database problem as one line that says what to do; ``code`` is e.g. 'ORA-01017'."""

    def __init__(self, message: str, code: str = "", fatal: bool = False) -> None:
        super().__init__(message)
        self.code = code
        self.fatal = fatal


@dataclass(frozen=True, slots=True)
class Where:
    """What a message may name: the database, the user, the mode, the password's source."""

    dsn: str = ""
    user: str = ""
    mode: str = "normal"
    secret_from: str = ""
    call_timeout: float = 2.0
    once: bool = False
    """A one-shot caller (``config --check``): no message promises a retry."""

    def then(self, next_step: str) -> str:
        """``; next_step`` (what the session does next), or nothing for a one-shot caller."""
        return "" if self.once else f"; {next_step}"


def code_of(exc: BaseException) -> str:
    """'ORA-01017', 'DPY-4024', ... or '' when the error carries no Oracle code."""
    arg = exc.args[0] if exc.args else None
    full = getattr(arg, "full_code", None)
    if isinstance(full, str) and full:
        return full
    text = str(exc)
    m = _CODE.search(text)
    if m:
        return f"{m.group(1)}-{m.group(2)}"
    if "no such table" in text:
        return "ORA-00942"
    if "no such column" in text:
        return "ORA-00904"
    return ""


# thin mode's own codes for what thick mode reports as ORA-125xx
_THIN_EQUIVALENT = {"DPY-6001": "ORA-12514", "DPY-6003": "ORA-12514", "DPY-6005": "ORA-12541"}
_SIMILAR = re.compile(r"Similar to (ORA-\d{5})")
NOT_A_LISTENER = "DPY-4011"
"""Nested in thin mode's DPY-6005 ("cannot connect to database"): the far end closed the
connection at the first packet, as a port where something other than a listener answers does."""


def explain(exc: BaseException, where: Where) -> str:
    """One line: what went wrong and what to do about it."""
    shown = code_of(exc)
    code = _meaning(exc, shown)
    if code == NOT_A_LISTENER and shown == "DPY-6005":
        return (
            f"DPY-6005 ({code}) something answers at {where.dsn} but not as an Oracle listener: "
            "it closed the connection at the first packet; check the host and port (a TCPS "
            "port needs tcps:// in the dsn)"
        )
    if isinstance(exc, socket.gaierror):
        return f"cannot resolve the host name of {where.dsn} ({exc.strerror}): check the dsn"
    line = _advice(code, exc, where)
    if shown != code and line.startswith(code):
        line = f"{shown} ({code}){line[len(code) :]}"
    return line


def _meaning(exc: BaseException, shown: str) -> str:
    """The code whose advice fits: a listener's refusal by its ORA- equivalent ("Similar to"),
    else what thin mode's DPY-6005 wraps (DPY-6005 alone: nothing listens there), else the code
    itself."""
    text = str(exc)
    similar = _SIMILAR.search(text)
    if similar:
        return similar.group(1)
    if shown == "DPY-6005":
        nested = [f"{k}-{n}" for k, n in _CODE.findall(text.split("\n", 1)[-1])]
        if nested and nested[0] != shown:
            return nested[0]
    return _THIN_EQUIVALENT.get(shown, shown)


def _advice(code: str, exc: BaseException, where: Where) -> str:
    """What to do about ``code``: a login refused, a database out of reach, a driver or a
    connection in trouble; else the error's own text."""
    db = f"{where.user or '(wallet)'}@{where.dsn}" if where.dsn else "the database"
    line = _refused(code, where, db) or _unreachable(code, where, db) or _driver(code, where)
    if line:
        return line
    text = " ".join(str(exc).split())
    return f"{code + ' ' if code and code not in text else ''}{text or type(exc).__name__}"


def _refused(code: str, where: Where, db: str) -> str | None:
    """A login or a read the database refuses: the credentials, the lock, the privileges."""
    if code == "ORA-01017":
        return (
            f"ORA-01017 wrong user name or password for {db}: check the user and the password "
            f"in {where.secret_from or 'the configured source'}"
            + where.then("not retrying (a retry loop would lock the account)")
        )
    if code == "ORA-28000":
        return f"ORA-28000 account of {db} is locked: ask the DBA to ALTER USER ... ACCOUNT UNLOCK"
    if code == "ORA-01031":
        if where.mode in ("sysdg", "sysdba"):
            return (
                f"ORA-01031 {where.user} may not connect as {where.mode.upper()}: "
                f"GRANT {where.mode.upper()} TO {where.user} on the primary (before 12.2 also copy "
                "the password file to the standby)"
            )
        return (
            f"ORA-01031 {where.user} lacks a privilege: GRANT SELECT_CATALOG_ROLE TO {where.user}"
        )
    if code == "ORA-00942":
        return (
            f"ORA-00942 a V$ view is not readable by {where.user or 'this user'}: "
            f"GRANT SELECT_CATALOG_ROLE TO {where.user or 'the user'} (or SELECT on the V_$ "
            'views); a mounted standby needs mode = "sysdg" or "sysdba"'
        )
    if code == "ORA-28009":
        return f'ORA-28009 SYS must connect with a privilege: set mode = "sysdba" for {db}'
    return None


def _unreachable(code: str, where: Where, db: str) -> str | None:
    """A database that cannot be logged on to now: not open, no listener, no such service,
    no instance (retried)."""
    again = where.then("retrying")
    if code == "ORA-01033":
        return (
            f"ORA-01033 {db} is mounted or starting, not open: ordinary users cannot log on; "
            f'set mode = "sysdg" (12.1+) or "sysdba" to read a mounted standby{again}'
        )
    if code == "ORA-12541":
        return (
            f"ORA-12541 no listener reachable at {where.dsn}: check host and port, and that the "
            f"listener runs there (lsnrctl status){again}"
        )
    if code == "ORA-12514":
        return (
            f"ORA-12514 the listener at {where.dsn} does not know that service: check the "
            "service name (lsnrctl services); a mounted standby needs a static entry such as "
            f"<db_unique_name>_DGMGRL{again}"
        )
    if code in ("ORA-12528", "ORA-01034"):
        return f"{code} the instance behind {where.dsn} is not up (or blocked){again}"
    return None


def _driver(code: str, where: Where) -> str | None:
    """What thin mode cannot reach, a call past its timeout, a connection lost."""
    if code == "DPY-3010":
        return (
            f"DPY-3010 {where.dsn} is older than 12.1, which thin mode cannot reach: set "
            "thick = true and install Oracle Instant Client 19"
        )
    if code == "DPY-3001":
        return (
            f"DPY-3001 {where.dsn} requires Native Network Encryption, which thin mode lacks: "
            "set thick = true (or use TLS)"
        )
    if code in TIMEOUT:
        return (
            f"{code} a query on {where.dsn or 'the database'} took longer than the call timeout "
            f"({where.call_timeout:g}s): the database is slow or hung; raise call_timeout if "
            "this is normal there"
        )
    if code in LOST:
        return (
            f"{code} connection to {where.dsn or 'the database'} lost{where.then('reconnecting')}"
        )
    return None


def redact(text: str, secret: str | None) -> str:
    """The text with every occurrence of the secret replaced (belt and braces)."""
    if secret:
        text = text.replace(secret, "***")
    return text
