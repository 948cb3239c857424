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

from sgmon.config.check import Checked, check_config
from sgmon.config.files import (
    ENV_OVERRIDES,
    config_dir,
    find_config,
    read_toml,
    search_paths,
    with_env,
)
from sgmon.config.model import Config, DbConfig, HostConfig
from sgmon.config.reader import db_config, parse_config, validate
from sgmon.config.rules import COLLECTOR_OPTIONS, HOST_NAME, ROLES, SCHEMA

__all__ = [
    "COLLECTOR_OPTIONS",
    "ENV_OVERRIDES",
    "HOST_NAME",
    "ROLES",
    "SCHEMA",
    "Checked",
    "Config",
    "DbConfig",
    "HostConfig",
    "check_config",
    "config_dir",
    "db_config",
    "find_config",
    "load_config",
    "parse_config",
    "read_toml",
    "search_paths",
    "validate",
]


def load_config(explicit: str | None = None) -> Config:
    """Find and parse the config; raise ConfigError with a one-line message on any problem."""
    path = find_config(explicit)
    data = read_toml(path) if path is not None else {}
    return parse_config(with_env(data), path)
