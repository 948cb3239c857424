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
    role = "standby"
    ssh = "oracle@stby1"           # runs `sgmon agent` there with the user's own ssh
    [host.db]
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

from sgmon.units import parse_duration


class ConfigError(ValueError):
    """A config problem, as one line that says what to do."""


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
    ssh: str = ""  # user@host: reached through `ssh ... sgmon agent`
    sgmon_path: str = "sgmon"  # the command on the far side
    ssh_options: tuple[str, ...] = ()  # extra ssh arguments, e.g. ["-p", "2222"]
    ssh_command: tuple[str, ...] = ("ssh",)  # the ssh program (or a wrapper) to run
    devices: tuple[str, ...] = ()  # redo / standby redo log devices, pinned and watched
    db: DbConfig | None = None


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


def search_paths() -> list[Path]:
    """Where a config file is looked for, in order."""
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return [Path("sgmon.toml"), Path(xdg) / "sgmon" / "sgmon.toml"]


def find_config(explicit: str | None) -> Path | None:
    """The config file to use, or None for built-in defaults."""
    if explicit:
        p = Path(explicit)
        if not p.is_file():
            raise ConfigError(f"config file {explicit} not found")
        return p
    return next((p for p in search_paths() if p.is_file()), None)


def load_config(explicit: str | None = None) -> Config:
    """Find and parse the config; raise ConfigError with a one-line message on any problem."""
    path = find_config(explicit)
    if path is None:
        return Config()
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror}") from None
    return parse_config(data, path)


def _db(d: dict[str, Any], where: str) -> DbConfig:
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
        hosts.append(
            HostConfig(
                name=h["name"],
                role=h.get("role", ""),
                ssh=h.get("ssh", ""),
                sgmon_path=h.get("sgmon_path", "sgmon"),
                ssh_options=tuple(h.get("ssh_options", ())),
                ssh_command=tuple(h.get("ssh_command", ("ssh",))),
                devices=tuple(h.get("devices", ())),
                db=_db(h["db"], f"{where}: host {h['name']}") if "db" in h else None,
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
