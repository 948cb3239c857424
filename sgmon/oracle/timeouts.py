"""Bounds on a connect's time, whatever the driver does: python-oracledb's tcp_connect_timeout
covers the TCP handshake only, and thick mode may ignore it, so the connect runs in a thread
waited for at most so long (``bounded``), and thick mode's DSN carries the Oracle Client's own
connect timeouts (``timed_dsn``)."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

from sgmon.oracle.errors import OracleError


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
    later) and the thread is left to finish; what it returns then goes to ``late``."""
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
