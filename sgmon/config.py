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

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sgmon.errors import ConfigError
from sgmon.units import parse_duration


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
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror}") from None


ENV_OVERRIDES = {"SGMON_INTERVAL": "interval", "SGMON_NAME": "name"}
"""Environment variables that override top-level values (for systemd units and containers)."""


def _with_env(data: dict[str, Any]) -> dict[str, Any]:
    out = dict(data)
    for var, key in ENV_OVERRIDES.items():
        if os.environ.get(var):
            out[key] = os.environ[var]
    return out


def db_config(d: dict[str, Any], where: str) -> DbConfig:
    """A [host.db] table (or the same keys from a command line) as a DbConfig."""
    if "dsn" not in d:
        raise ConfigError(f'{where}: [host.db] needs dsn = "host:port/service"')
    if d.get("password") not in (None, "", "prompt"):
        raise ConfigError(
            f"{where}: passwords are not config values; use password_env, wallet_dir "
            'or password = "prompt"'
        )
    mode = d.get("mode", "normal")
    if mode not in ("normal", "sysdba", "sysdg"):
        raise ConfigError(f"{where}: db mode {mode!r}: use normal, sysdba or sysdg")
    return DbConfig(
        dsn=d["dsn"],
        user=d.get("user", ""),
        mode=mode,
        password_env=d.get("password_env", ""),
        wallet_dir=d.get("wallet_dir", ""),
        password=d.get("password", ""),
        thick=bool(d.get("thick", False)),
        events=tuple(d.get("events", ())),
        call_timeout=parse_duration(d.get("call_timeout", 2.0)),
    )


ROLES = ("primary", "standby", "far_sync")
"""Configured roles.  A far sync instance receives redo like a standby (its sockets, its RFS),
so it is collected as one; ``HostConfig.far_sync`` keeps what it is for the topology."""


def _role_problem(role: Any, where: str) -> str | None:
    """What is wrong with a host's role (it picks the DG sockets and goes on an ssh command
    line), or None."""
    if role == "" or role in ROLES:
        return None
    return f'{where}: role = {role!r}: use "primary", "standby" or "far_sync"'


def parse_config(data: dict[str, Any], path: Path | None = None) -> Config:
    """Build a Config from parsed TOML."""
    where = str(path or "config")
    try:
        interval = parse_duration(data.get("interval", 1.0))
    except ValueError as e:
        raise ConfigError(f"{where}: interval: {e}") from None
    hosts = []
    for i, h in enumerate(data.get("host", [])):
        if "name" not in h:
            raise ConfigError(f"{where}: host #{i + 1} needs a name")
        if problem := _role_problem(h.get("role", ""), f"{where}: host {h['name']}"):
            raise ConfigError(problem)
        role = h.get("role", "")
        db_from = h.get("db_from", "local")
        if db_from not in ("local", "agent") or (db_from == "agent" and not h.get("sgmon_path")):
            raise ConfigError(
                f'{where}: host {h["name"]}: db_from = {db_from!r}: use "local" (read from '
                'this machine) or "agent" (read by the sgmon installed there: needs sgmon_path)'
            )
        hosts.append(
            HostConfig(
                name=h["name"],
                role="standby" if role == "far_sync" else role,
                ssh=h.get("ssh", ""),
                sgmon_path=h.get("sgmon_path", ""),
                db_from=db_from,
                ssh_options=tuple(h.get("ssh_options", ())),
                ssh_command=tuple(h.get("ssh_command", ("ssh",))),
                devices=tuple(h.get("devices", ())),
                db=db_config(h["db"], f"{where}: host {h['name']}") if "db" in h else None,
                root=h.get("root", ""),
                db_unique_name=str(h.get("db_unique_name", "")),
                far_sync=role == "far_sync",
            )
        )
    dg = data.get("dataguard", {})
    ports = dg.get("ports", [1521])
    for p in ports:
        if not isinstance(p, int) or not 0 < p < 65536:
            raise ConfigError(f"{where}: dataguard.ports: {p!r} is not a port number (1-65535)")
    return Config(
        name=data.get("name", "sgmon"),
        interval=interval,
        hosts=tuple(hosts),
        ports=tuple(ports),
        peers=tuple(dg.get("peers", ())),
        collectors=dict(data.get("collectors", {})),
        thresholds=dict(data.get("thresholds", {})),
        path=path,
    )


# --- `sgmon config --check` ---------------------------------------------------------------

_ANY_STR = (str,)
_KEYS: dict[str, dict[str, tuple[type, ...]]] = {
    "": {
        "name": _ANY_STR,
        "interval": (str, int, float),
        "dataguard": (dict,),
        "host": (list,),
        "collectors": (dict,),
        "thresholds": (dict,),
    },
    "dataguard": {"ports": (list,), "peers": (list,)},
    "host": {
        "name": _ANY_STR,
        "role": _ANY_STR,
        "ssh": _ANY_STR,
        "sgmon_path": _ANY_STR,
        "db_from": _ANY_STR,
        "ssh_options": (list,),
        "ssh_command": (list,),
        "devices": (list,),
        "db": (dict,),
        "root": _ANY_STR,
        "db_unique_name": _ANY_STR,
    },
    "host.db": {
        "dsn": _ANY_STR,
        "user": _ANY_STR,
        "mode": _ANY_STR,
        "password_env": _ANY_STR,
        "wallet_dir": _ANY_STR,
        "password": _ANY_STR,
        "thick": (bool,),
        "events": (list,),
        "call_timeout": (str, int, float),
    },
}
_LIST_OF = {"ports": int, "peers": str, "devices": str, "ssh_options": str, "ssh_command": str,
            "events": str}  # fmt: skip
_SECRET = ("password", "passwd", "pwd", "secret", "token")


@dataclass(frozen=True, slots=True)
class Checked:
    """What `sgmon config --check` found: values with their origin, and problems."""

    path: Path | None
    values: list[tuple[str, Any, str]]  # (key, value, "file PATH" | "default" | "env VAR")
    problems: list[str]


def _type_name(types: tuple[type, ...]) -> str:
    return " or ".join({"str": "a string", "int": "an integer", "float": "a number",
                        "list": "a list", "dict": "a table", "bool": "true/false"}[t.__name__]
                       for t in types)  # fmt: skip


def _check_table(table: dict[str, Any], kind: str, where: str, problems: list[str]) -> None:
    import difflib

    allowed = _KEYS[kind]
    for key, value in table.items():
        if key not in allowed:
            near = difflib.get_close_matches(key, allowed, n=1)
            hint = f'; did you mean "{near[0]}"?' if near else f"; known: {', '.join(allowed)}"
            problems.append(f'{where}: unknown key "{key}"{hint}')
        elif not isinstance(value, allowed[key]) or (
            isinstance(value, bool) and bool not in allowed[key]
        ):
            problems.append(f"{where}: {key} = {value!r} should be {_type_name(allowed[key])}")
        elif isinstance(value, list) and key in _LIST_OF:
            bad = [v for v in value if not isinstance(v, _LIST_OF[key]) or isinstance(v, bool)]
            if bad:
                kind = _type_name((_LIST_OF[key],))
                problems.append(f"{where}: {key}: {bad[0]!r} should be {kind}")


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
    """Validate the config without stopping at the first problem; every problem is one line."""
    problems: list[str] = []
    try:
        path = find_config(explicit)
    except ConfigError as e:
        return Checked(None, [], [str(e)])
    data: dict[str, Any] = {}
    if path is not None:
        try:
            data = read_toml(path)
        except ConfigError as e:
            return Checked(path, [], [str(e)])
        mode = path.stat().st_mode
        secrets = _secrets(data)
        if secrets and mode & 0o004:
            problems.append(
                f"{path}: holds a password ({', '.join(secrets)}) and is world-readable: "
                f"chmod 600 {path}, better use password_env or wallet_dir"
            )
        _check_table(data, "", str(path), problems)
        dg = data.get("dataguard")
        if isinstance(dg, dict):
            _check_table(dg, "dataguard", f"{path}: [dataguard]", problems)
        for i, h in enumerate(data.get("host", []) if isinstance(data.get("host"), list) else []):
            where = f"{path}: host {h.get('name', f'#{i + 1}')!s}"
            if not isinstance(h, dict):
                problems.append(f"{where}: should be a [[host]] table")
                continue
            _check_table(h, "host", where, problems)
            if problem := _role_problem(h.get("role", ""), where):
                problems.append(problem)
            if isinstance(h.get("db"), dict):
                _check_table(h["db"], "host.db", f"{where} [db]", problems)
        _check_collectors(data, str(path), problems)
    env = {key: var for var, key in ENV_OVERRIDES.items() if os.environ.get(var)}
    config = None
    try:
        config = parse_config(_with_env(data), path)
    except (ConfigError, ValueError, TypeError, KeyError) as e:
        problems.append(str(e) if isinstance(e, ConfigError) else f"{path}: {e}")
    values: list[tuple[str, Any, str]] = []
    if config is not None:
        values = _provenance(config, data, path, env)
    return Checked(path, values, list(dict.fromkeys(problems)))  # parse_config's may repeat one


def _check_collectors(data: dict[str, Any], where: str, problems: list[str]) -> None:
    from sgmon import registry

    known = set(registry.names())
    cols = data.get("collectors", {})
    for name in cols if isinstance(cols, dict) else ():
        if name not in known:
            names = ", ".join(sorted(known))
            problems.append(f"{where}: [collectors.{name}]: no such collector; installed: {names}")
    th = data.get("thresholds", {})
    for key, spec in th.items() if isinstance(th, dict) else ():
        coll, _, fname = key.partition(".")
        if not fname:
            problems.append(f'{where}: [thresholds] "{key}": use "collector.field"')
        elif not isinstance(spec, dict) or set(spec) - {"warn", "crit"}:
            problems.append(f'{where}: [thresholds] "{key}": use {{ warn = N, crit = N }}')
        elif any(not isinstance(v, int | float) or isinstance(v, bool) for v in spec.values()):
            problems.append(f'{where}: [thresholds] "{key}": warn/crit must be numbers')
        elif coll in known:
            try:
                registry.load(coll).field(fname)
            except KeyError:
                problems.append(f'{where}: [thresholds] "{key}": {coll} has no field {fname}')
            except Exception:  # a plug-in that fails to import is reported by `sgmon collectors`
                pass
        else:
            problems.append(f'{where}: [thresholds] "{key}": no collector {coll}')


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
