"""What a configuration is once read: its hosts, their databases, the Data Guard ports."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


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
