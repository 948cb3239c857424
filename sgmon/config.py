"""The configuration file, ``sgmon.toml``: hosts, their databases, Data Guard ports, devices.

Searched in ``./sgmon.toml``, then ``$XDG_CONFIG_HOME/sgmon/sgmon.toml`` (default
``~/.config/sgmon/sgmon.toml``), unless ``--config`` names one.  Without any file sgmon watches
the local host alone.  Passwords are never config values: a database names where its password
comes from (an environment variable, a wallet directory, or a prompt).

Example::

    name = "PROD"                  # shown in the dashboard header
    interval = "1s"

    [dataguard]
    ports = [1521]                 # the redo transport port(s)
    peers = ["10.0.0.2"]           # optional: only sockets to/from these addresses

    [[host]]
    name = "prim1"
    role = "primary"               # local by default
    devices = ["sdb"]              # the redo log devices, pinned in the disk panel
    [host.db]
    dsn = "prim1:1521/PROD"
    user = "c##sgmon"
    password_env = "SGMON_PRIM_PW" # or wallet_dir = "...", or password = "prompt"

    [[host]]
    name = "stby1"
    role = "standby"               # any number of standbys; "far_sync" for a far sync instance
    db_unique_name = "PRODSTBY"    # optional: matches the primary's V$ARCHIVE_DEST row to this host
    ssh = "oracle@stby1"           # watched over the user's own ssh; nothing installed there
    [host.db]                      # read from this machine (db_from = "agent": by the far side)
    dsn = "stby1:1521/PRODSTBY"
    user = "sys"
    mode = "sysdg"                 # a mounted standby needs SYSDG or SYSDBA

    [collectors.disk]
    exclude = ["loop*"]

    [thresholds]
    "disk.aqu_sz" = { warn = 1, crit = 4 }
"""

from __future__ import annotations

import ipaddress
import math
import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sgmon.archive import META
from sgmon.errors import ConfigError
from sgmon.units import MAX_INTERVAL, MIN_INTERVAL, parse_duration


@dataclass(frozen=True, slots=True)
class DbConfig:
    """How to reach one host's database (never the password itself)."""

    dsn: str
    user: str = ""
    mode: str = "normal"  # normal | sysdba | sysdg
    password_env: str = ""
    wallet_dir: str = ""
    password: str = ""  # only the word "prompt" is accepted here
    thick: bool = False
    events: tuple[str, ...] = ()  # extra wait events beyond the built-in list
    call_timeout: float = 2.0


@dataclass(frozen=True, slots=True)
class HostConfig:
    """One monitored host."""

    name: str
    role: str = ""
    ssh: str = ""  # user@host: reached through ssh, the pump sent over the connection
    sgmon_path: str = ""  # sgmon installed on the far side: run `sgmon agent` there instead
    db_from: str = "local"  # "local": the database is read from here; "agent": by sgmon_path
    ssh_options: tuple[str, ...] = ()  # extra ssh arguments, e.g. ["-p", "2222"]
    ssh_command: tuple[str, ...] = ("ssh",)  # the ssh program (or a wrapper) to run
    devices: tuple[str, ...] = ()  # redo / standby redo log devices, pinned and watched
    db: DbConfig | None = None
    root: str = ""  # where this host's proc/ and sys/ are mounted ("" = /), for every collector
    db_unique_name: str = ""  # its database's DB_UNIQUE_NAME: maps a destination to this host
    far_sync: bool = False  # role = "far_sync": collected as a standby, forwards SYNC redo


@dataclass(frozen=True, slots=True)
class Config:
    """The whole configuration, with the file it came from (None for defaults)."""

    name: str = "sgmon"
    interval: float = 1.0
    hosts: tuple[HostConfig, ...] = ()
    ports: tuple[int, ...] = (1521,)
    peers: tuple[str, ...] = ()
    collectors: dict[str, dict[str, Any]] = field(default_factory=dict)
    thresholds: dict[str, dict[str, float]] = field(default_factory=dict)
    path: Path | None = None

    def collector_options(self, name: str) -> dict[str, Any]:
        """Options for one collector: its [collectors.NAME] table plus the shared DG settings."""
        opts: dict[str, Any] = {"ports": list(self.ports), "peers": list(self.peers)}
        opts.update(self.collectors.get(name, {}))
        return opts


def config_dir() -> Path:
    """sgmon's per-user directory: ``$XDG_CONFIG_HOME/sgmon`` (default ``~/.config/sgmon``)."""
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "sgmon"


def search_paths() -> list[Path]:
    """Where a config file is looked for, in order."""
    return [Path("sgmon.toml"), config_dir() / "sgmon.toml"]


def find_config(explicit: str | None) -> Path | None:
    """The config file to use (``--config``, else $SGMON_CONFIG, else the search path)."""
    explicit = explicit or os.environ.get("SGMON_CONFIG")
    if explicit:
        p = Path(explicit)
        if not p.is_file():
            raise ConfigError(f"config file {explicit} not found")
        return p
    return next((p for p in search_paths() if p.is_file()), None)


def load_config(explicit: str | None = None) -> Config:
    """Find and parse the config; raise ConfigError with a one-line message on any problem."""
    path = find_config(explicit)
    data = read_toml(path) if path is not None else {}
    return parse_config(_with_env(data), path)


def read_toml(path: Path) -> dict[str, Any]:
    """Parsed TOML, or ConfigError with one line."""
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        why = e.strerror if isinstance(e, OSError) else "not UTF-8 text"
        raise ConfigError(f"{path}: cannot read: {why}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None
    except RecursionError:  # tomllib recurses once per level of nested arrays or tables
        line, key = next(
            ((n, m[1]) for n, t in enumerate(text.splitlines(), 1) if (m := _NESTED.match(t))),
            (0, "a value"),
        )
        raise ConfigError(
            f"{path}: line {line}: {key}: arrays nested too deeply; use a flat list"
        ) from None
    deep = _too_deep(data)
    if deep is not None:
        raise ConfigError(
            f"{path}: {deep}: tables nested more than {MAX_DEPTH} deep; no key of sgmon's is"
        )
    return data


MAX_DEPTH = 16
"""Levels of tables or arrays a config may hold (sgmon's own go 3 deep): every reader of the
parsed file may then walk it recursively."""


def _too_deep(data: dict[str, Any]) -> str | None:
    """The top-level key under which ``data`` nests deeper than MAX_DEPTH, walked without
    recursion (a dotted key of 3,000 parts is 3,000 tables)."""
    for key, value in data.items():
        level = [value] if isinstance(value, dict | list) else []
        for _ in range(MAX_DEPTH):
            level = [
                v
                for item in level
                for v in (item.values() if isinstance(item, dict) else item)
                if isinstance(v, dict | list)
            ]
        if level:
            return str(key)
    return None


_NESTED = re.compile(r'^\s*("[^"]*"|[^=\s]+)\s*=\s*(?:\[\s*){8}')


ENV_OVERRIDES = {"SGMON_INTERVAL": "interval", "SGMON_NAME": "name"}
"""Environment variables that override top-level values (for systemd units and containers)."""


def _with_env(data: dict[str, Any]) -> dict[str, Any]:
    out = dict(data)
    for var, key in ENV_OVERRIDES.items():
        if os.environ.get(var):
            out[key] = os.environ[var]
    return out


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


class _Bad(Exception):
    """One value that breaks the schema: the rule it breaks, without the file or the key."""


def _show(value: Any) -> str:
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


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise _Bad(f"{_show(value)} should be a string")
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise _Bad(f"{_show(value)} holds a control character")
    return value


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise _Bad(f'{_show(value)} should be a list of strings, e.g. ["sdb"]')
    return tuple(_string(v) for v in value)


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _Bad(f"{_show(value)} should be true or false")
    return value


def _table(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Bad(f"{_show(value)} should be a table")
    return value


def _seconds(value: Any, low: float, high: float, inclusive: bool = True) -> float:
    """A duration (``"2s"``, ``500ms`` or a number) within [low, high] (or (low, high])."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise _Bad(f"{_show(value)} should be a duration such as 1s or 500ms")
    try:
        seconds = parse_duration(value)
    except ValueError as e:
        raise _Bad(str(e)) from None
    if (
        not math.isfinite(seconds)
        or seconds > high
        or seconds < low
        or (not inclusive and seconds == low)
    ):
        raise _Bad(f"{_show(value)} is out of range: use {low:g}s to {high:g}s")
    return seconds


def _interval(value: Any) -> float:
    return _seconds(value, MIN_INTERVAL, MAX_INTERVAL)


def _ports(value: Any) -> tuple[int, ...]:
    if not isinstance(value, list) or not value:
        raise _Bad(f"{_show(value)} should be a list of port numbers, e.g. [1521]")
    for p in value:
        if isinstance(p, bool) or not isinstance(p, int) or not 0 < p < 65536:
            raise _Bad(f"{_show(p)} is not a port number (1-65535)")
    return tuple(value)


def _peers(value: Any) -> tuple[str, ...]:
    peers = _strings(value)
    for p in peers:
        try:
            ipaddress.ip_network(p, strict=False)
        except ValueError:
            raise _Bad(f'{_show(p)} is not an IP address or network, e.g. "10.0.0.2"') from None
    return peers


def _label(value: Any) -> str:
    """A name every output shows and every metric carries as a label (the configuration's, a
    DB_UNIQUE_NAME): printable, and short enough for a header and a label."""
    text = _string(value)
    if len(text) > 64 or not text.isprintable():
        raise _Bad(f"{_show(text[:40])}: use at most 64 printable characters")
    return text


def _host_name(value: Any) -> str:
    if not isinstance(value, str) or not HOST_NAME.fullmatch(value):
        raise _Bad(f"{_show(value)}: {HOST_NAME_RULE}")
    if value.lower() == META:
        raise _Bad(f"{_show(value)}: the archive's own file is named so; name the host otherwise")
    return value


def _role(value: Any) -> str:
    if value not in ("", *ROLES):
        raise _Bad(f'{_show(value)}: use "primary", "standby" or "far_sync"')
    return str(value)


def _db_from(value: Any) -> str:
    if value not in ("local", "agent"):
        raise _Bad(
            f'{_show(value)}: use "local" (read from this machine) or "agent" (read by the sgmon '
            "installed there: needs sgmon_path)"
        )
    return str(value)


def _root(value: Any) -> str:
    root = _string(value)
    if root and not os.path.isdir(root):
        raise _Bad(f"{_show(root)} is not a directory; use the one that holds the host's proc/")
    return root


def _dsn(value: Any) -> str:
    dsn = _string(value)
    if not dsn:
        raise _Bad('empty: use dsn = "host:port/service"')
    if _DSN_PASSWORD.search(dsn) or _SECRET_PARAMETER.search(dsn):
        raise _Bad(
            "holds a password (user/password before an @, or a password parameter); give the "
            "user as user = and the password through password_env, wallet_dir or password = "
            '"prompt"'
        )
    if dsn != dsn.strip():
        raise _Bad("starts or ends with a blank; write the connect string alone")
    return dsn


def _user(value: Any) -> str:
    user = _string(value)
    if "/" in user or user != user.strip():
        raise _Bad(
            "holds a password or a blank (user/password); give the user alone and the password "
            'through password_env, wallet_dir or password = "prompt"'
        )
    return user


def _env_name(value: Any) -> str:
    name = _string(value)
    if name and not ENV_NAME.fullmatch(name):
        raise _Bad(  # never the value itself: it may be the password, put where its name goes
            "not an environment variable name (letters, digits and _); it names the variable "
            "that holds the password, never the password itself"
        )
    return name


def _ssh_target(value: Any) -> str:
    target = _string(value)
    if _SSH_PASSWORD.match(target):
        raise _Bad(
            "holds a password (user:password before the @); ssh logs on with your key: ssh-copy-id "
            'the key, then ssh = "user@host"'
        )
    return target


def _mode(value: Any) -> str:
    if value not in ("normal", "sysdba", "sysdg"):
        raise _Bad(f"{_show(value)}: use normal, sysdba or sysdg")
    return str(value)


def _password(value: Any) -> str:
    if value not in ("", "prompt"):
        raise _Bad('passwords are not config values; use password_env, wallet_dir or "prompt"')
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

COLLECTOR_OPTIONS: dict[str, Rule] = {
    "enabled": _bool,
    "root": _root,
    "include": _strings,
    "exclude": _strings,
    "lgwr": lambda v: _string(v) if not isinstance(v, list) else _strings(v),
    "nss": lambda v: _string(v) if not isinstance(v, list) else _strings(v),
    "rfs": lambda v: _string(v) if not isinstance(v, list) else _strings(v),
    "timezone": _string,
}
"""Options several built-in collectors share, by type; each collector then checks its own when
it is built (``Collector.__init__``), which the schema runs too."""


class _Reader:
    """Reads one parsed file through the schema, one line per problem, each naming the file and
    the key."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.env = {key: var for var, key in ENV_OVERRIDES.items() if os.environ.get(var)}
        self.problems: list[str] = []

    def bad(self, key: str, text: str) -> None:
        if key in self.env:  # the value came from the environment, not the file
            key = f"{key} (from ${self.env[key]})"
        self.problems.append(f"{self.where}: {key}: {text}")

    def table(self, data: dict[str, Any], kind: str, prefix: str) -> dict[str, Any]:
        """The table's keys checked by their rules: unknown keys and broken rules are problems;
        the values that pass, converted."""
        import difflib

        rules = SCHEMA[kind]
        out: dict[str, Any] = {}
        for key, value in data.items():
            name = f"{prefix}{key}"
            if key not in rules:
                near = difflib.get_close_matches(key, rules, n=1)
                hint = f'did you mean "{near[0]}"?' if near else f"known: {', '.join(rules)}"
                self.bad(f"{prefix}{_show(key)[1:-1]}", f"unknown key; {hint}")
                continue
            try:
                out[key] = rules[key](value)
            except _Bad as e:
                self.bad(name, str(e))
        return out

    def hosts(self, raw: Any) -> tuple[HostConfig, ...]:
        if not isinstance(raw, list):
            self.bad("host", f"{_show(raw)}: write each host as a [[host]] table")
            return ()
        if not raw:
            self.bad("host", "[]: add a [[host]] table, or leave host out to watch this machine")
        hosts: list[HostConfig] = []
        for i, h in enumerate(raw):
            name = h.get("name") if isinstance(h, dict) else None
            named = isinstance(name, str) and HOST_NAME.fullmatch(name) is not None
            label = f"host[{name}]" if named else f"host #{i + 1}"
            if not isinstance(h, dict):
                self.bad(label, f"{_show(h)}: write each host as a [[host]] table")
                continue
            before = len(self.problems)
            v = self.table(h, "host", f"{label}.")
            if "name" not in h:
                self.bad(f"{label}.name", "missing: every [[host]] needs a name")
            db = None
            if isinstance(v.get("db"), dict):
                db = self.db(v["db"], f"{label}.db.")
            if len(self.problems) > before:
                continue
            if v.get("db_from") == "agent" and not v.get("sgmon_path"):
                self.bad(
                    f"{label}.db_from",
                    '"agent" reads the database by the sgmon installed '
                    "there: set sgmon_path, or leave db_from out to read it from here",
                )
                continue
            if any(x.name == v["name"] for x in hosts):
                self.bad(f"{label}.name", f"{_show(v['name'])} is already another host's name")
                continue
            role = v.get("role", "")
            hosts.append(
                HostConfig(
                    name=v["name"],
                    role="standby" if role == "far_sync" else role,
                    ssh=v.get("ssh", ""),
                    sgmon_path=v.get("sgmon_path", ""),
                    db_from=v.get("db_from", "local"),
                    ssh_options=v.get("ssh_options", ()),
                    ssh_command=v.get("ssh_command", ("ssh",)),
                    devices=v.get("devices", ()),
                    db=db,
                    root=v.get("root", ""),
                    db_unique_name=v.get("db_unique_name", ""),
                    far_sync=role == "far_sync",
                )
            )
        return tuple(hosts)

    def db(self, d: dict[str, Any], prefix: str) -> DbConfig | None:
        before = len(self.problems)
        v = self.table(d, "db", prefix)
        if "dsn" not in d:
            self.bad(f"{prefix}dsn", 'missing: [host.db] needs dsn = "host:port/service"')
        if len(self.problems) > before:
            return None
        return DbConfig(
            dsn=v["dsn"],
            user=v.get("user", ""),
            mode=v.get("mode", "normal"),
            password_env=v.get("password_env", ""),
            wallet_dir=v.get("wallet_dir", ""),
            password=v.get("password", ""),
            thick=v.get("thick", False),
            events=v.get("events", ()),
            call_timeout=v.get("call_timeout", 2.0),
        )

    def collectors(self, tables: dict[str, Any], shared: dict[str, Any]) -> dict[str, dict]:
        """Each [collectors.NAME] table: an installed collector, its shared options by type, and
        whatever the collector itself refuses when it is built with them."""
        from sgmon import registry

        known = registry.names()
        out: dict[str, dict[str, Any]] = {}
        for name, opts in tables.items():
            key = f"collectors.{_show(name)[1:-1]}"
            if name not in known:
                self.bad(key, f"no such collector; installed: {', '.join(sorted(known))}")
                continue
            if not isinstance(opts, dict):
                self.bad(key, f"{_show(opts)} should be a table of options")
                continue
            before = len(self.problems)
            for opt, value in opts.items():
                if opt in COLLECTOR_OPTIONS:
                    try:
                        COLLECTOR_OPTIONS[opt](value)
                    except _Bad as e:
                        self.bad(f"{key}.{opt}", str(e))
            if len(self.problems) == before:
                out[name] = dict(opts)
        for name in known:  # every collector meets the [dataguard] values, configured or not
            opts = {**shared, **out.get(name, {})}
            if name not in out and not shared:
                continue
            try:
                cls = registry.load(name)
            except Exception:  # a plug-in that fails to import: `sgmon collectors` says why
                continue
            try:
                cls(opts)
            except Exception as e:  # a plug-in may refuse with anything: still one line
                text = str(e).splitlines()[0] if str(e) else type(e).__name__
                self.bad(f"collectors.{name}", text)
        return out

    def thresholds(self, table: dict[str, Any]) -> dict[str, dict[str, float]]:
        """``"collector.field"`` or ``"collector.instance.field"`` = { warn = N, crit = N }: a
        field the collector declares, numbers of 0 or more, warn before crit in the field's
        direction."""
        from sgmon import registry

        known = registry.names()
        out: dict[str, dict[str, float]] = {}
        for key, spec in table.items():
            name = f"thresholds.{_show(key)}"
            coll, _, rest = key.partition(".")
            fname = rest.rpartition(".")[2]
            if not fname:
                self.bad(name, 'use "collector.field" or "collector.instance.field"')
                continue
            if not isinstance(spec, dict) or not spec or set(spec) - {"warn", "crit"}:
                self.bad(name, f"{_show(spec)}: use {{ warn = N, crit = N }}")
                continue
            levels = {}
            for level, v in spec.items():
                if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                    self.bad(name, f"{level} = {_show(v)} should be a number")
                elif v < 0:
                    self.bad(name, f"{level} = {_show(v)} should be 0 or more")
                else:
                    levels[level] = v
            if len(levels) < len(spec):
                continue
            if coll not in known:
                self.bad(name, f"no collector {_show(coll)}; installed: {', '.join(known)}")
                continue
            higher_is_worse = True
            try:
                higher_is_worse = registry.load(coll).field(fname).higher_is_worse
            except KeyError:
                self.bad(name, f"{coll} has no field {_show(fname)}")
                continue
            except Exception:  # a plug-in that fails to import: `sgmon collectors` says why
                pass
            if (
                len(levels) == 2
                and (levels["warn"] > levels["crit"]) == higher_is_worse
                and (levels["warn"] != levels["crit"])
            ):
                order = "below" if higher_is_worse else "above"
                self.bad(name, f"warn {levels['warn']:g} should be {order} crit {levels['crit']:g}")
                continue
            out[key] = levels
        return out


def validate(data: dict[str, Any], path: Path | None = None) -> tuple[Config | None, list[str]]:
    """Read parsed TOML through the schema: the Config when there is no problem, and every
    problem as one line naming the file and the key."""
    r = _Reader(str(path or "config"))
    top = r.table(data, "", "")
    dg = r.table(top.get("dataguard", {}), "dataguard", "dataguard.")
    hosts = r.hosts(data["host"]) if "host" in data else ()
    shared = {k: list(v) for k, v in dg.items()}
    collectors = r.collectors(top.get("collectors", {}), shared)
    thresholds = r.thresholds(top.get("thresholds", {}))
    if r.problems:
        return None, list(dict.fromkeys(r.problems))
    config = Config(
        name=top.get("name", "sgmon"),
        interval=top.get("interval", 1.0),
        hosts=hosts,
        ports=dg.get("ports", (1521,)),
        peers=dg.get("peers", ()),
        collectors=collectors,
        thresholds=thresholds,
        path=path,
    )
    return config, []


def parse_config(data: dict[str, Any], path: Path | None = None) -> Config:
    """Build a Config from parsed TOML; the first problem as a ConfigError."""
    config, problems = validate(data, path)
    if config is None:
        raise ConfigError(problems[0])
    return config


def db_config(d: dict[str, Any], where: str) -> DbConfig:
    """A [host.db] table (or the same keys from a command line) through the schema."""
    r = _Reader(where)
    db = r.db({k: v for k, v in d.items() if v is not None}, "")
    if db is None:
        raise ConfigError(r.problems[0])
    return db


# --- `sgmon config --check` ---------------------------------------------------------------

_SECRET = ("password", "passwd", "pwd", "secret", "token")


@dataclass(frozen=True, slots=True)
class Checked:
    """What `sgmon config --check` found: values with their origin, and problems."""

    path: Path | None
    values: list[tuple[str, Any, str]]  # (key, value, "file PATH" | "default" | "env VAR")
    problems: list[str]


def _secrets(table: Any, prefix: str = "") -> list[str]:
    """Keys that hold something password-like (a name of an env var or "prompt" does not)."""
    found = []
    if isinstance(table, dict):
        for k, v in table.items():
            path = f"{prefix}{k}"
            if isinstance(v, dict | list):
                found += _secrets(v, path + ".")
            elif (
                any(w in k.lower() for w in _SECRET)
                and not k.lower().endswith("_env")
                and v not in ("", "prompt")
            ):
                found.append(path)
    elif isinstance(table, list):
        for i, v in enumerate(table):
            found += _secrets(v, f"{prefix[:-1]}[{i}].")
    return found


def check_config(explicit: str | None = None) -> Checked:
    """Validate the config through the schema every command uses, without stopping at the first
    problem; every problem is one line."""
    try:
        path = find_config(explicit)
        data = read_toml(path) if path is not None else {}
    except ConfigError as e:
        return Checked(None, [], [str(e)])
    problems: list[str] = []
    if path is not None:
        secrets = _secrets(data)
        if secrets and path.stat().st_mode & 0o004:
            problems.append(
                f"{path}: holds a password ({', '.join(secrets)}) and is world-readable: "
                f"chmod 600 {path}, better use password_env or wallet_dir"
            )
    env = {key: var for var, key in ENV_OVERRIDES.items() if os.environ.get(var)}
    config, found = validate(_with_env(data), path)
    values = _provenance(config, data, path, env) if config is not None else []
    return Checked(path, values, problems + found)


def _provenance(
    config: Config, data: dict[str, Any], path: Path | None, env: dict[str, str]
) -> list[tuple[str, Any, str]]:
    src_file = f"file {path}"
    out: list[tuple[str, Any, str]] = []

    def origin(table: dict[str, Any], key: str, top: bool = False) -> str:
        if top and key in env:
            return f"env {env[key]}"
        return src_file if key in table else "default"

    out.append(("name", config.name, origin(data, "name", True)))
    out.append(("interval", config.interval, origin(data, "interval", True)))
    dg = data.get("dataguard", {}) if isinstance(data.get("dataguard"), dict) else {}
    out.append(("dataguard.ports", list(config.ports), origin(dg, "ports")))
    out.append(("dataguard.peers", list(config.peers), origin(dg, "peers")))
    if not config.hosts:
        out.append(("host", "this machine, under its hostname", "default"))
    raw_hosts = data.get("host", []) if isinstance(data.get("host"), list) else []
    for h, raw in zip(config.hosts, raw_hosts, strict=False):
        pre = f"host[{h.name}]"
        role = "far_sync" if h.far_sync else h.role
        out.append((f"{pre}.role", role, origin(raw, "role")))
        how = f"{h.sgmon_path} agent" if h.sgmon_path else "nothing installed there (python3)"
        reached = f"ssh {h.ssh}, {how}" if h.ssh else "local"
        out.append((f"{pre}.reached", reached, origin(raw, "ssh")))
        out.append((f"{pre}.devices", list(h.devices), origin(raw, "devices")))
        if h.root:
            out.append((f"{pre}.root", h.root, origin(raw, "root")))
        if h.db_unique_name:
            out.append((f"{pre}.db_unique_name", h.db_unique_name, origin(raw, "db_unique_name")))
        if h.db is not None:
            rdb = raw.get("db", {})
            out.append((f"{pre}.db.dsn", h.db.dsn, origin(rdb, "dsn")))
            out.append((f"{pre}.db.mode", h.db.mode, origin(rdb, "mode")))
            where = "by the agent there" if h.ssh and h.db_from == "agent" else "from this machine"
            out.append((f"{pre}.db.read", where, origin(raw, "db_from")))
            if h.db.password_env:
                state = "set" if os.environ.get(h.db.password_env) else "NOT set"
                out.append((f"{pre}.db.password", f"from ${h.db.password_env} ({state})", "env"))
            elif h.db.wallet_dir:
                out.append((f"{pre}.db.password", f"wallet {h.db.wallet_dir}", src_file))
            else:
                out.append((f"{pre}.db.password", "asked at start", origin(rdb, "password")))
    for name, opts in config.collectors.items():
        out.append((f"collectors.{name}", opts, src_file))
    for key, spec in config.thresholds.items():
        out.append((f"thresholds.{key}", spec, src_file))
    return out
