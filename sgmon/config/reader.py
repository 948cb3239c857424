"""A parsed file read through the schema into a Config, one line per problem naming the file
and the key."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sgmon.config.files import ENV_OVERRIDES
from sgmon.config.model import Config, DbConfig, HostConfig
from sgmon.config.rules import COLLECTOR_OPTIONS, HOST_NAME, SCHEMA, Invalid, Rule, shown
from sgmon.errors import ConfigError


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
                self.bad(f"{prefix}{shown(key)[1:-1]}", f"unknown key; {hint}")
                continue
            try:
                out[key] = rules[key](value)
            except Invalid as e:
                self.bad(name, str(e))
        return out

    def hosts(self, raw: Any) -> tuple[HostConfig, ...]:
        if not isinstance(raw, list):
            self.bad("host", f"{shown(raw)}: write each host as a [[host]] table")
            return ()
        if not raw:
            self.bad("host", "[]: add a [[host]] table, or leave host out to watch this machine")
        if len(raw) > MAX_HOSTS:
            self.bad(
                "host",
                f"{len(raw)} hosts: one configuration takes at most {MAX_HOSTS} (one sgmon "
                "watches a Data Guard configuration; split a fleet into one per configuration)",
            )
            return ()
        hosts: list[HostConfig] = []
        for i, h in enumerate(raw):
            name = h.get("name") if isinstance(h, dict) else None
            named = isinstance(name, str) and HOST_NAME.fullmatch(name) is not None
            label = f"host[{name}]" if named else f"host #{i + 1}"
            if not isinstance(h, dict):
                self.bad(label, f"{shown(h)}: write each host as a [[host]] table")
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
                self.bad(f"{label}.name", f"{shown(v['name'])} is already another host's name")
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
            key = f"collectors.{shown(name)[1:-1]}"
            if name not in known:
                self.bad(key, f"no such collector; installed: {', '.join(sorted(known))}")
                continue
            if not isinstance(opts, dict):
                self.bad(key, f"{shown(opts)} should be a table of options")
                continue
            before = len(self.problems)
            self._options(key, _declared(name), opts)
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

    def _options(self, key: str, declared: Mapping[str, Rule] | None, opts: dict[str, Any]) -> None:
        """Each option of one [collectors.NAME] table against its rule: the shared ones, then
        the collector's own (``declared``; None: a plug-in that declares none takes any)."""
        for opt, value in opts.items():
            rule = COLLECTOR_OPTIONS.get(opt) or (declared or {}).get(opt)
            if rule is None:
                if declared is not None:
                    takes = ", ".join(sorted([*COLLECTOR_OPTIONS, *declared]))
                    self.bad(f"{key}.{shown(opt)[1:-1]}", f"no such option; it takes: {takes}")
                continue
            try:
                rule(value)
            except Invalid as e:
                self.bad(f"{key}.{opt}", str(e))

    def thresholds(self, table: dict[str, Any]) -> dict[str, dict[str, float]]:
        """``"collector.field"`` or ``"collector.instance.field"`` = { warn = N, crit = N }: a
        field the collector declares, numbers of 0 or more, warn before crit in the field's
        direction."""
        from sgmon import registry

        known = registry.names()
        out: dict[str, dict[str, float]] = {}
        for key, spec in table.items():
            name = f"thresholds.{shown(key)}"
            coll, _, rest = key.partition(".")
            fname = rest.rpartition(".")[2]
            if not fname:
                self.bad(name, 'use "collector.field" or "collector.instance.field"')
                continue
            if not isinstance(spec, dict) or not spec or set(spec) - {"warn", "crit"}:
                self.bad(name, f"{shown(spec)}: use {{ warn = N, crit = N }}")
                continue
            levels = {}
            for level, v in spec.items():
                if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                    self.bad(name, f"{level} = {shown(v)} should be a number")
                elif v < 0:
                    self.bad(name, f"{level} = {shown(v)} should be 0 or more")
                else:
                    levels[level] = v
            if len(levels) < len(spec):
                continue
            if coll not in known:
                self.bad(name, f"no collector {shown(coll)}; installed: {', '.join(known)}")
                continue
            higher_is_worse = True
            try:
                higher_is_worse = registry.load(coll).field(fname).higher_is_worse
            except KeyError:
                self.bad(name, f"{coll} has no field {shown(fname)}")
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


MAX_HOSTS = 300
"""The most hosts one configuration takes: recorded without a race (tests/system/hostile), the
sinks' pace on two CPUs the bound (docs/limits.md); more is refused in one line, never started
and left to fall behind."""


def _declared(name: str) -> Mapping[str, Rule] | None:
    """The options collector ``name`` declares; None for a plug-in that declares none or does
    not import (`sgmon collectors` says why)."""
    from sgmon import registry

    try:
        return registry.load(name).option_rules
    except Exception:
        return None


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
