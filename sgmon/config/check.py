"""``sgmon config --check``'s reading of a file: every problem, the secrets it holds, and where
each value came from."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sgmon.config.files import ENV_OVERRIDES, find_config, read_toml, with_env
from sgmon.config.model import Config
from sgmon.config.reader import validate
from sgmon.errors import ConfigError

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
    config, found = validate(with_env(data), path)
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
