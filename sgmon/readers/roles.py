"""The database's own Data Guard role per host, as V$DATABASE last said, for the collectors whose
behaviour follows the role.

After a switchover the configured role is wrong until someone edits the config, while the
database says at once which side it is on.  The ``oracle_dg`` collector records it here each tick
(``observe``); the ``tcp`` collector's ``direction = "auto"`` reads it (``of``) to take the
outbound connections on a primary and the inbound ones on a standby.  Process-local: a remote
host's agent runs both collectors in its own process.
"""

from __future__ import annotations

import threading

_roles: dict[str, str] = {}
_lock = threading.Lock()


def observe(host: str, role: str) -> None:
    """What the host's database says it is now ("primary" or "standby"); a collector that was
    not told its host (a test, a bare library use) records nothing."""
    if host and role in ("primary", "standby"):
        with _lock:
            _roles[host] = role


def of(host: str) -> str | None:
    """The host's database role as last observed, or None (no database, not read yet)."""
    if not host:
        return None
    with _lock:
        return _roles.get(host)
