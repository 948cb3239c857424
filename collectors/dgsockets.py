"""Which sockets are the Data Guard ones: the options the ``tcp`` and ``retrans`` collectors
share (``ports``, ``peers``, ``direction``), validated once here, and how a socket is named.

``direction`` says which end's port counts: a primary's Data Guard sockets are the connections
it opened to the standby's listener (the remote port), a standby's the ones its listener
accepted (the local port); ``auto`` resolves by the host's role (collectors/tcp.py's docstring
says how it follows a switchover).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from sgmon.collector import ConfigError
from sgmon.readers.diag_filter import DIRECTIONS


def _ports(value: Any) -> tuple[int, ...]:
    """Validate the ``ports`` option: one port or a list of them."""
    items = value if isinstance(value, list | tuple) else [value]
    out = []
    for p in items:
        if isinstance(p, bool) or not isinstance(p, int | str) or not str(p).isdigit():
            raise ConfigError(f"tcp ports: {p!r} is not a port number; use e.g. ports = [1521]")
        if not 0 < int(p) < 65536:
            raise ConfigError(f"tcp ports: {p} is out of range; use 1-65535")
        out.append(int(p))
    if not out:
        raise ConfigError("tcp ports: empty; use e.g. ports = [1521]")
    return tuple(dict.fromkeys(out))


def _peers(value: Any) -> tuple[str, ...]:
    """Validate the ``peers`` option: addresses or CIDR networks."""
    items = value if isinstance(value, list | tuple) else [value] if value else []
    for p in items:
        try:
            ipaddress.ip_network(str(p), strict=False)
        except ValueError:
            raise ConfigError(
                f'tcp peers: {p!r} is not an IP address or network; use e.g. peers = ["10.0.0.2"]'
            ) from None
    return tuple(str(p) for p in items)


BY_ROLE = {"primary": "out", "standby": "in"}
"""The ``auto`` direction of a host in each role."""


def _direction(value: Any, role: Any, peers: tuple[str, ...]) -> str:
    """Validate the ``direction`` option and resolve ``auto``."""
    if value == "auto":
        return "both" if peers else BY_ROLE.get(role, "both")
    if not isinstance(value, str) or value not in DIRECTIONS:
        raise ConfigError(f'tcp direction: {value!r}; use "auto", "out", "in" or "both"')
    return value


def seconds(value: Any, option: str) -> float:
    """Validate a non-negative number of seconds."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ConfigError(f"tcp {option}: {value!r} is not a number of seconds >= 0")
    return float(value)


def dg_selection(options: Mapping[str, Any]) -> tuple[tuple[int, ...], tuple[str, ...], str]:
    """The DG ports, peers and direction an option set names: the keys `tcp` and `retrans`
    share, validated once here."""
    peers = _peers(options.get("peers", []))
    direction = _direction(options.get("direction", "auto"), options.get("role"), peers)
    return _ports(options.get("ports", [1521])), peers, direction


def endpoint(addr: str, port: int) -> str:
    """``addr:port``, an IPv6 address in brackets, as ss prints it."""
    return f"[{addr}]:{port}" if ":" in addr else f"{addr}:{port}"
