"""`sgmon config --check`: validate the config, show where each value came from, reach each host
over ssh and log on to each database as sgmon will, and show the Data Guard topology the
databases report (``sgmon.topology``) where they disagree with the config.

It says ``ok`` only when the file is valid and every host and every login answered; otherwise
one ``sgmon:`` line for each problem, the last one counting the checks that failed (exit 3; exit
2 when the config itself is wrong).  ``--offline`` checks the file alone and says so."""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sgmon.config import Checked, Config, HostConfig
from sgmon.model import Frame

if TYPE_CHECKING:
    from sgmon.oracle.privileges import Access
    from sgmon.oracle.session import Session

SSH_TIMEOUT = 5
"""Seconds ssh may take to connect (its ConnectTimeout): a one-shot check does not wait long."""
ANSWER_S = 15.0
"""Seconds a host, once connected, may take to answer: the pump's hello, the agent's header."""


@dataclass(frozen=True)
class Check:
    """One thing tried over the network: its name in the summary (``ssh stby1``), the line it
    printed, and why it failed ('' when it answered)."""

    what: str
    line: str
    failure: str = ""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """--check, --config, --offline and --simulate."""
    parser.add_argument("--check", action="store_true", help="validate (the default action)")
    parser.add_argument("--config", metavar="F", help="sgmon.toml to check")
    parser.add_argument(
        "--offline",
        action="store_true",
        help="check the file alone: no ssh, no database login (says it did not try them)",
    )
    parser.add_argument(
        "--simulate",
        metavar="SCENARIO",
        help="read the topology from a simulated scenario's databases instead (see demo --list)",
    )


def run(args: argparse.Namespace) -> int:
    """Print each value with its origin, what each host and login answered, the topology, then
    each problem on one line; exit 2 when the config is wrong, 3 when a check failed."""
    from sgmon.config import check_config, load_config
    from sgmon.errors import ConfigError

    checked = check_config(args.config)
    _values(checked)
    problems = list(checked.problems)
    checks: list[Check] = []
    if not problems or args.simulate:
        try:
            config = load_config(args.config)
        except ConfigError:  # already among the problems
            config = Config()
        if args.simulate:
            frames, unread, why = _simulated(args.simulate), list[str](), ""
        elif args.offline:
            frames, unread, why = {}, [], _offline(config)
        else:
            checks, frames, unread = _reach(config)
            why = "no database reached"
        problems += _topology(config, frames, unread, why)
        _pace(config)
    return _verdict(problems, checks)


def _pace(config: Config) -> None:
    """One line when this machine cannot keep every tick of so many hosts (not a problem in
    the file: a longer interval, or sgmon installed there, is the answer)."""
    from sgmon.headless import pace_warning

    if (line := pace_warning(config, config.interval)) is not None:
        sys.stdout.flush()  # after the listing, also when both go to one pipe
        print(f"sgmon: {line}", file=sys.stderr)


def _values(checked: Checked) -> None:
    """The file, then each value with where it came from."""
    from sgmon.config import search_paths

    if checked.path is not None:
        print(f"config file: {checked.path}")
    elif not checked.problems:
        print("config file: none (looked in " + ", ".join(map(str, search_paths())) + ")")
    width = max((len(k) for k, _, _ in checked.values), default=0)
    for key, value, origin in checked.values:
        shown = value if isinstance(value, str) else json.dumps(value)
        print(f"  {key:<{width}} = {shown}    ({origin})")


def _verdict(problems: list[str], checks: list[Check]) -> int:
    """One line for each problem and each failed check, the last counting the failed checks;
    ``ok`` when there is none."""
    from sgmon.errors import one_line

    failed = [c for c in checks if c.failure]
    lines = [*problems, *(f"{c.what}: {c.failure}" for c in failed)]
    if failed:
        names = ", ".join(c.what for c in failed)
        lines.append(f"{len(failed)} of {len(checks)} checks failed: {names}")
    sys.stdout.flush()  # the listing before the verdict, also when both go to one pipe
    for p in map(one_line, lines):
        print(p if p.startswith("sgmon: ") else f"sgmon: {p}", file=sys.stderr)
    if problems:
        return 2
    if failed:
        return 3
    print("ok")
    return 0


def _tried(config: Config) -> tuple[list[HostConfig], list[HostConfig]]:
    """The hosts reached over ssh; those whose database is logged on to from here."""
    remote = [h for h in config.hosts if h.ssh]
    return remote, [h for h in config.hosts if h.db is not None and _read_here(h)]


def _offline(config: Config) -> str:
    """Say what --offline leaves untried; the topology's source."""
    ssh, dbs = ([h.name for h in hosts] for hosts in _tried(config))
    if ssh or dbs:
        untried = [f"ssh to {', '.join(ssh)}"] if ssh else []
        untried += [f"database logins {', '.join(dbs)}"] if dbs else []
        print(f"not tried (--offline): {'; '.join(untried)}")
    return "not read (--offline)"


def _reach(config: Config) -> tuple[list[Check], dict[str, Frame | None], list[str]]:
    """Each ssh host (in parallel) and each database login read from here, as sgmon reaches
    them, printed host by host; the topology read through the logins that answered."""
    from sgmon.oracle.privileges import probe

    remote, local_db = _tried(config)
    _ask_passwords(local_db)
    sessions = {h.name: _session(config, h) for h in local_db}
    try:
        with ThreadPoolExecutor(max(1, len(remote))) as pool:
            pending = [pool.submit(_ssh, config, h) for h in remote]
            accesses = [probe(h.name, h.db, h.role, sessions[h.name]) for h in local_db if h.db]
            checks = _listed("ssh (as sgmon reaches each host):", [p.result() for p in pending])
        checks += _logins(accesses)
        answered = {a.host: sessions[a.host] for a in accesses if not a.error}
        frames, unread = _read(config, answered)
    finally:
        for s in sessions.values():
            s.close()
    return checks, frames, unread


def _listed(title: str, checks: list[Check]) -> list[Check]:
    """The checks, printed under a title when there are any."""
    if checks:
        print(title)
        for c in checks:
            print(f"  {c.line}")
    return checks


def _ssh(config: Config, h: HostConfig) -> Check:
    """Reach one host exactly as monitoring does (its ssh command line, BatchMode, the pump
    on the host's python3 or the installed agent), wait for its first word, and hang up."""
    from sgmon.hosts.build import shipped
    from sgmon.hosts.remote import PumpSource, RemoteSource

    said: list[str] = []
    source: PumpSource | RemoteSource
    if h.sgmon_path:
        source = RemoteSource(
            h, config.interval, warn=said.append, once=True, connect_timeout=SSH_TIMEOUT,
            dead_after=ANSWER_S,
        )  # fmt: skip
    else:
        source = PumpSource(  # asks for the files of a tick and no socket: it only listens
            h, lambda _root: [], None, shipped(), interval=config.interval,
            warn=said.append, once=True, connect_timeout=SSH_TIMEOUT, dead_after=ANSWER_S,
        )  # fmt: skip
    stop = threading.Event()
    session = threading.Thread(target=source.run, args=(lambda _f: None, stop), daemon=True)
    session.start()
    limit = SSH_TIMEOUT + ANSWER_S + 5
    deadline = time.monotonic() + limit
    while not (source.connected or said) and time.monotonic() < deadline:
        time.sleep(0.05)
    answered = source.connected  # hanging up below clears it
    stop.set()
    session.join(ANSWER_S)
    source.close()
    line = f"{h.name}: ssh {h.ssh}: "
    if answered:
        what = f"sgmon agent ({h.sgmon_path})"
        if isinstance(source, PumpSource):
            what = f"python3 {source.python}"
        return Check(f"ssh {h.name}", f"{line}{what} answers on {source.far_hostname}")
    why = said[0].removeprefix(f"{h.ssh}: ") if said else f"no answer within {limit:g}s"
    return Check(f"ssh {h.name}", line + why, why)


def _ask_passwords(hosts: list[HostConfig]) -> None:
    """Ask, on a terminal, for the passwords sgmon asks for at start (before any thread runs);
    without one, such a login fails saying so."""
    from sgmon.oracle.session import ask_passwords

    if sys.stdin.isatty():
        ask_passwords([h.db for h in hosts])


def _session(config: Config, h: HostConfig) -> Session:
    """A one-shot session to a host's database, as its collectors would open it."""
    from sgmon.fields import ORACLE_DG
    from sgmon.hosts.build import host_options
    from sgmon.oracle.session import Session

    connect = host_options(config, ORACLE_DG.name, h).get("connect")
    return Session(h.db, h.role, connect, once=True)


def _logins(accesses: list[Access]) -> list[Check]:
    """Print what each login reads and, as one block, the statements that give the logins
    what they lack; a check for each login."""
    from sgmon.oracle.privileges import statements

    if not accesses:
        return []
    print("database logins:")
    checks, block = [], []
    for access in accesses:
        line = access.summary()
        print(f"  {line}")
        failure = access.error
        if not failure and access.missing:
            failure = f"cannot read {', '.join(access.missing)}: see the statements"
        checks.append(Check(f"database {access.host}", line, failure))
        block += statements(access)
    if block:
        print("statements for the logins (hand them to whoever holds the keys):")
        for line in block:
            print(f"  {line}")
    return checks


def _topology(
    config: Config, frames: dict[str, Frame | None], unread: list[str], why: str
) -> list[str]:
    """Print the topology the databases report (else the config's, ``why``); the lines where
    it and the config disagree."""
    from sgmon import topology

    if not frames and not config.hosts:
        return []  # this machine alone: no Data Guard topology to speak of
    topo = topology.build(config, frames)
    print(f"topology (from {'the databases' if frames else f'the config: {why}'}):")
    for line in topo.lines():
        if not line.startswith("sgmon: "):
            print(f"  {line}")
    for line in unread:
        print(f"  not read: {line}")
    notes = [n for n in topo.lines() if n.startswith("sgmon: ")]
    return notes + [f"topology: {d}" for d in topology.disagreements(config, topo)]


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


def _read(
    config: Config, sessions: Mapping[str, Session]
) -> tuple[dict[str, Frame | None], list[str]]:
    """Each database's oracle_dg rows, read once through its check's session; why a host was
    not read."""
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
        session = sessions.get(h.name)
        if session is None:
            unread.append(f"{h.name}: its login failed (above)")
            continue
        options = {**host_options(config, ORACLE_DG.name, h), "session": session}
        collector = registry.load(ORACLE_DG.name)(options)
        try:
            collector.open()
            rows = collector.derive(None, collector.sample(), config.interval)
        except Exception as e:  # a database that cannot be read is a line, not a crash
            unread.append(f"{h.name}: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
            continue
        finally:
            collector.close()
        result = CollectorResult(Status.OK, rows=rows)
        collected = {ORACLE_DG.name: result}
        frames[h.name] = Frame(h.name, time.time(), 0, config.interval, collected, (), h.role)
    return frames, unread
