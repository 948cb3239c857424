"""Where the configuration file is, and reading it: TOML parsed with its depth bounded, and the
environment's overrides."""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any

from sgmon.errors import ConfigError


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
        where = f"line {line}: {key}" if line else key
        raise ConfigError(
            f"{path}: {where}: arrays or tables nested too deeply; use a flat list or table"
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


_NESTED = re.compile(r'^\s*("[^"]*"|[^=\s]+)\s*=\s*(?:(?:\[|\{\s*[^=\s]+\s*=)\s*){8}')
"""A key whose value opens 8 or more arrays or inline tables in a row."""


ENV_OVERRIDES = {"SGMON_INTERVAL": "interval", "SGMON_NAME": "name"}
"""Environment variables that override top-level values (for systemd units and containers)."""


def with_env(data: dict[str, Any]) -> dict[str, Any]:
    out = dict(data)
    for var, key in ENV_OVERRIDES.items():
        if os.environ.get(var):
            out[key] = os.environ[var]
    return out
