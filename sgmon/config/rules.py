"""The one schema: every key sgmon.toml may hold, and the rule its value must keep."""

from __future__ import annotations

import ipaddress
import math
import os
import re
from collections.abc import Callable
from typing import Any

from sgmon.archive import META
from sgmon.units import MAX_INTERVAL, MIN_INTERVAL, ZoneError, parse_duration, zone_named

ROLES = ("primary", "standby", "far_sync")
"""Configured roles.  A far sync instance receives redo like a standby (its sockets, its RFS),
so it is collected as one; ``HostConfig.far_sync`` keeps what it is for the topology."""

HOST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")
"""A host name names its directory in an archive and its state in the status line, so it is a
safe file name: letters, digits, ``.``, ``_``, ``-``, starting with a letter or a digit (never
``..`` or a path), at most 63 characters, as a DNS label."""
HOST_NAME_RULE = (
    "a host name is 1-63 letters, digits, '.', '_' or '-', starting with a letter or a digit"
)

_DSN_PASSWORD = re.compile(r"(?:^|[\s=(])[^@/()\s=]*/[^@\s]*@")
"""user/password@... anywhere in a connect string (after a blank, a non-breaking space, ``=`` or
``(``: a descriptor or a leading space must not hide it)."""
_SECRET_PARAMETER = re.compile(r"(?i)(?:password|passwd|pwd|secret|token)\w*\s*=")
"""An EZConnect Plus parameter or a descriptor clause carrying a password (wallet_password=)."""
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_SSH_PASSWORD = re.compile(r"^[^@\s]*:[^@\s]*@")
"""``user/password@host:port/service``: a password inside an easy-connect string."""


class Invalid(Exception):
    """One value that breaks the schema: the rule it breaks, without the file or the key."""


def shown(value: Any) -> str:
    """A value as a message quotes it: short, control characters escaped (the rules that may
    meet a password, the DSN's and the password's, never quote it)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list" if value else "[]"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


MAX_TEXT = 4096
"""The longest string value (PATH_MAX): no host, path, DSN or command of sgmon's is longer, and
every output that repeats a value stays short."""


def _string(value: Any, secret: bool = False) -> str:
    """A string of printable characters (no control character, C1 or not, no bidi override or
    other invisible one that makes a terminal or a reader see another value), at most MAX_TEXT
    long; a value that may carry a password (``secret``) is never quoted."""
    if not isinstance(value, str):
        raise Invalid(f"{shown(value)} should be a string")
    what = "it" if secret else shown(value[:40])
    if len(value) > MAX_TEXT:
        raise Invalid(f"{what} is over {MAX_TEXT} characters long")
    if not value.isprintable():
        raise Invalid(f"{what} holds a control or invisible character")
    return value


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise Invalid(f'{shown(value)} should be a list of strings, e.g. ["sdb"]')
    return tuple(_string(v) for v in value)


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise Invalid(f"{shown(value)} should be true or false")
    return value


def _table(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Invalid(f"{shown(value)} should be a table")
    return value


def _seconds(value: Any, low: float, high: float, inclusive: bool = True) -> float:
    """A duration (``"2s"``, ``500ms`` or a number) within [low, high] (or (low, high])."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise Invalid(f"{shown(value)} should be a duration such as 1s or 500ms")
    try:
        seconds = parse_duration(value)
    except ValueError as e:
        raise Invalid(str(e)) from None
    if (
        not math.isfinite(seconds)
        or seconds > high
        or seconds < low
        or (not inclusive and seconds == low)
    ):
        raise Invalid(f"{shown(value)} is out of range: use {low:g}s to {high:g}s")
    return seconds


def _interval(value: Any) -> float:
    return _seconds(value, MIN_INTERVAL, MAX_INTERVAL)


def _ports(value: Any) -> tuple[int, ...]:
    if not isinstance(value, list) or not value:
        raise Invalid(f"{shown(value)} should be a list of port numbers, e.g. [1521]")
    for p in value:
        if isinstance(p, bool) or not isinstance(p, int) or not 0 < p < 65536:
            raise Invalid(f"{shown(p)} is not a port number (1-65535)")
    return tuple(value)


def _peers(value: Any) -> tuple[str, ...]:
    peers = _strings(value)
    for p in peers:
        try:
            ipaddress.ip_network(p, strict=False)
        except ValueError:
            raise Invalid(f'{shown(p)} is not an IP address or network, e.g. "10.0.0.2"') from None
    return peers


def _label(value: Any) -> str:
    """A name every output shows and every metric carries as a label (the configuration's, a
    DB_UNIQUE_NAME): printable, and short enough for a header and a label."""
    text = _string(value)
    if len(text) > 64 or not text.isprintable():
        raise Invalid(f"{shown(text[:40])}: use at most 64 printable characters")
    return text


def _host_name(value: Any) -> str:
    if not isinstance(value, str) or not HOST_NAME.fullmatch(value):
        raise Invalid(f"{shown(value)}: {HOST_NAME_RULE}")
    if value.lower() == META:
        raise Invalid(
            f"{shown(value)}: the archive's own file is named so; name the host otherwise"
        )
    return value


def _role(value: Any) -> str:
    if value not in ("", *ROLES):
        raise Invalid(f'{shown(value)}: use "primary", "standby" or "far_sync"')
    return str(value)


def _db_from(value: Any) -> str:
    if value not in ("local", "agent"):
        raise Invalid(
            f'{shown(value)}: use "local" (read from this machine) or "agent" (read by the sgmon '
            "installed there: needs sgmon_path)"
        )
    return str(value)


def _root(value: Any) -> str:
    root = _string(value)
    if root and not os.path.isdir(root):
        raise Invalid(f"{shown(root)} is not a directory; use the one that holds the host's proc/")
    return root


def _dsn(value: Any) -> str:
    dsn = _string(value, secret=True)
    if not dsn:
        raise Invalid('empty: use dsn = "host:port/service"')
    if _DSN_PASSWORD.search(dsn) or _SECRET_PARAMETER.search(dsn):
        raise Invalid(
            "holds a password (user/password before an @, or a password parameter); give the "
            "user as user = and the password through password_env, wallet_dir or password = "
            '"prompt"'
        )
    if dsn != dsn.strip():
        raise Invalid("starts or ends with a blank; write the connect string alone")
    return dsn


def _user(value: Any) -> str:
    user = _string(value, secret=True)
    if "/" in user or user != user.strip():
        raise Invalid(
            "holds a password or a blank (user/password); give the user alone and the password "
            'through password_env, wallet_dir or password = "prompt"'
        )
    return user


def _env_name(value: Any) -> str:
    name = _string(value, secret=True)
    if name and not ENV_NAME.fullmatch(name):
        raise Invalid(  # never the value itself: it may be the password, put where its name goes
            "not an environment variable name (letters, digits and _); it names the variable "
            "that holds the password, never the password itself"
        )
    return name


def _ssh_target(value: Any) -> str:
    target = _string(value, secret=True)
    if _SSH_PASSWORD.match(target):
        raise Invalid(
            "holds a password (user:password before the @); ssh logs on with your key: ssh-copy-id "
            'the key, then ssh = "user@host"'
        )
    return target


def _mode(value: Any) -> str:
    if value not in ("normal", "sysdba", "sysdg"):
        raise Invalid(f"{shown(value)}: use normal, sysdba or sysdg")
    return str(value)


def _password(value: Any) -> str:
    if value not in ("", "prompt"):
        raise Invalid('passwords are not config values; use password_env, wallet_dir or "prompt"')
    return str(value)


def _call_timeout(value: Any) -> float:
    return _seconds(value, 0.0, 3600.0, inclusive=False)


Rule = Callable[[Any], Any]
SCHEMA: dict[str, dict[str, Rule]] = {
    "": {
        "name": _label,
        "interval": _interval,
        "dataguard": _table,
        "host": lambda v: v,  # a list of [[host]] tables: checked one by one
        "collectors": _table,
        "thresholds": _table,
    },
    "dataguard": {"ports": _ports, "peers": _peers},
    "host": {
        "name": _host_name,
        "role": _role,
        "ssh": _ssh_target,
        "sgmon_path": _string,
        "db_from": _db_from,
        "ssh_options": _strings,
        "ssh_command": _strings,
        "devices": _strings,
        "db": _table,
        "root": _root,
        "db_unique_name": _label,
    },
    "db": {
        "dsn": _dsn,
        "user": _user,
        "mode": _mode,
        "password_env": _env_name,
        "wallet_dir": _string,
        "password": _password,
        "thick": _bool,
        "events": _strings,
        "call_timeout": _call_timeout,
    },
}
"""The one schema: every key sgmon.toml may hold and the rule its value must keep.  ``sgmon
config --check`` and every command read the file through it, so they cannot disagree."""

COLLECTOR_OPTIONS: dict[str, Rule] = {"enabled": _bool, "root": _root}
"""Options every collector's table takes; a collector declares its own (``Collector.option_rules``)
and the schema refuses any other, then builds the collector with them (``Collector.__init__``
checks what needs the host)."""


# The rules collectors declare their options with (``Collector.option_rules``).
boolean, text, texts, ports, peers = _bool, _string, _strings, _ports, _peers


def text_or_texts(value: Any) -> str | tuple[str, ...]:
    """One string or a list of them (a trace file, or several)."""
    return _strings(value) if isinstance(value, list) else _string(value)


def seconds_in(low: float, high: float) -> Rule:
    """A duration (``"10s"``, or a number of seconds) within [low, high]."""
    return lambda value: _seconds(value, low, high)


def number_in(low: float, high: float, whole: bool = False) -> Rule:
    """A number (a whole one with ``whole``) within [low, high]."""

    def rule(value: Any) -> float:
        kinds = int if whole else int | float
        if isinstance(value, bool) or not isinstance(value, kinds) or not math.isfinite(value):
            raise Invalid(f"{shown(value)} should be a {'whole ' if whole else ''}number")
        if not low <= value <= high:
            raise Invalid(f"{shown(value)} is out of range: use {low:g} to {high:g}")
        return value

    return rule


def one_of(*choices: str) -> Rule:
    """One of the words ``choices``."""

    def rule(value: Any) -> str:
        if value not in choices:
            raise Invalid(f"{shown(value)} should be one of {', '.join(choices)}")
        return str(value)

    return rule


def zone(value: Any) -> str:
    """A time zone by its IANA name or an offset (``zone_named``'s forms)."""
    try:
        zone_named(_string(value))
    except ZoneError:
        raise Invalid(
            f'{shown(value)} names no zone: use an IANA name ("Europe/Paris") or an offset '
            '("-06:00")'
        ) from None
    return str(value)
