"""`sgmon config --check`: validate the config, show where each value came from, and the Data
Guard topology the databases report (``sgmon.topology``) where they disagree with the config."""

from __future__ import annotations

import argparse
import json
import sys
import time

from sgmon.config import Config, HostConfig
from sgmon.model import Frame


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """--check, --config and --simulate."""
    parser.add_argument("--check", action="store_true", help="validate (the default action)")
    parser.add_argument("--config", metavar="F", help="sgmon.toml to check")
    parser.add_argument(
        "--simulate",
        metavar="SCENARIO",
        help="read the topology from a simulated scenario's databases instead (see demo --list)",
    )


def run(args: argparse.Namespace) -> int:
    """Print each value with its origin, the topology, then each problem on one line; exit 2 on
    problems."""
    from sgmon.config import check_config, load_config, search_paths
    from sgmon.errors import ConfigError, one_line

    checked = check_config(args.config)
    if checked.path is not None:
        print(f"config file: {checked.path}")
    elif not checked.problems:
        print("config file: none (looked in " + ", ".join(map(str, search_paths())) + ")")
    width = max((len(k) for k, _, _ in checked.values), default=0)
    for key, value, origin in checked.values:
        shown = value if isinstance(value, str) else json.dumps(value)
        print(f"  {key:<{width}} = {shown}    ({origin})")
    problems = list(checked.problems)
    if not problems or args.simulate:
        try:
            config = load_config(args.config)
        except ConfigError:  # already among the problems
            config = Config()
        problems += _topology(config, args.simulate)
        if not args.simulate:
            problems += _logins(config)
    for p in map(one_line, problems):
        print(p if p.startswith("sgmon: ") else f"sgmon: {p}", file=sys.stderr)
    if problems:
        return 2
    print("ok")
    return 0


def _topology(config: Config, scenario: str | None) -> list[str]:
    """Print the topology the databases report; the lines where it and the config disagree."""
    from sgmon import topology

    if scenario is not None:
        frames, unread = _simulated(scenario), list[str]()
    else:
        frames, unread = _read(config)
    if not frames and not config.hosts:
        return []  # this machine alone: no Data Guard topology to speak of
    topo = topology.build(config, frames)
    print(f"topology (from {'the databases' if frames else 'the config: no database reached'}):")
    for line in topo.lines():
        if not line.startswith("sgmon: "):
            print(f"  {line}")
    for line in unread:
        print(f"  not read: {line}")
    notes = [n for n in topo.lines() if n.startswith("sgmon: ")]
    return notes + [f"topology: {d}" for d in topology.disagreements(config, topo)]


def _logins(config: Config) -> list[str]:
    """Log on to each database read from here as sgmon would; print what each login reads and,
    as one block, the statements that give the logins what they lack; a problem line for each
    login that falls short."""
    from sgmon.oracle.privileges import probe, statements

    reached = [h for h in config.hosts if h.db is not None and _read_here(h)]
    if not reached:
        return []
    print("database logins:")
    problems, block = [], []
    for h in reached:
        assert h.db is not None
        if h.db.password == "prompt":
            print(f"  {h.name}: asks for a password (a check never prompts)")
            continue
        access = probe(h.name, h.db, h.role)
        print(f"  {access.summary()}")
        if access.refused or access.missing:  # unreachable is no config problem: listed only
            problems.append(f"{h.name}: {access.error or 'views missing: see the statements'}")
        block += statements(access)
    if block:
        print("statements for the logins (hand them to whoever holds the keys):")
        for line in block:
            print(f"  {line}")
    return problems


def _read_here(h: HostConfig) -> bool:
    """Whether a host's database is read from this machine (not by an installed agent)."""
    return not h.ssh or h.db_from == "local"


def _simulated(scenario: str) -> dict[str, Frame | None]:
    """One interval of a simulated scenario's hosts (its databases run the real collectors)."""
    from sgmon.errors import UsageError
    from sgmon.sim import SCENARIOS, SimPair

    if scenario not in SCENARIOS:
        raise UsageError(f"--simulate {scenario!r}: use one of {', '.join(SCENARIOS)}")
    pair = SimPair(scenario)
    try:
        return {f.host: f for f in pair.step()}
    finally:
        pair.close()


def _read(config: Config) -> tuple[dict[str, Frame | None], list[str]]:
    """Each local database's oracle_dg rows, read once; why a host was not read."""
    from sgmon import registry
    from sgmon.fields import ORACLE_DG
    from sgmon.hosts.build import host_options
    from sgmon.model import CollectorResult, Status

    frames: dict[str, Frame | None] = {}
    unread = []
    for h in config.hosts:
        if h.db is None:
            continue
        if not _read_here(h):
            unread.append(f'{h.name}: read by the sgmon installed there (db_from = "agent")')
            continue
        if h.db.password == "prompt":
            unread.append(f"{h.name}: asks for a password (a check never prompts)")
            continue
        collector = registry.load(ORACLE_DG.name)(host_options(config, ORACLE_DG.name, h))
        try:
            collector.open()
            rows = collector.derive(None, collector.sample(), config.interval)
        except Exception as e:  # a database that cannot be reached is a line, not a crash
            unread.append(f"{h.name}: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
            continue
        finally:
            collector.close()
        result = CollectorResult(Status.OK, rows=rows)
        collected = {ORACLE_DG.name: result}
        frames[h.name] = Frame(h.name, time.time(), 0, config.interval, collected, (), h.role)
    return frames, unread
