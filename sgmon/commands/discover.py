"""`sgmon discover`: Prometheus targets for a fleet of Data Guard configurations, from the
configs and, where a database answers, from the broker.

Two layouts.  By default, one target per member (a host of the config, or a database the broker
or the primary's destinations name that the config does not) at ``<its address>:<port>``, where
a `sgmon serve` on that member listens.  With ``--serve``, one target per configuration: the one
`sgmon serve` that watches all its hosts and lines them up (its ``sgmon_host_up`` then marks a
member that is down), and the members found are reported on stderr, those the config does not
list by name.

A member's target carries the identity every sgmon series carries (``dg_config``,
``db_unique_name``, ``host``) and ``member_state``: ``ok``; ``unreachable`` (its database did
not answer); ``disabled`` (the broker does not manage it: maintenance); ``error`` or ``warning``
(the broker's status, or the destination's); ``deferred``; ``unchecked`` (no database configured,
or ``--no-broker``); ``missing`` (in the previous output, found by no source now).  A member
never drops out because it is down: the fleet sees its target fail instead of forgetting it.

The members come from ``V$DG_BROKER_CONFIG`` on 23ai and later (every member, from any member)
and ``V$ARCHIVE_DEST`` before (the destinations of the database asked).  The output is the JSON
list of target groups that Prometheus' ``file_sd_configs`` reads (written atomically with
``--output``, so Prometheus never reads half a file) and ``http_sd_configs`` fetches (stdout,
for any web server to serve).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from sgmon.config import Config, HostConfig, load_config
from sgmon.errors import ConfigError, UsageError
from sgmon.fields import ORACLE_DG

TYPE_CHECKING = False
if TYPE_CHECKING:
    from sgmon.oracle.session import Session

DEFAULT_PORT = 9464
LABELS = ("dg_config", ORACLE_DG.db_unique_name.name, "host")
"""The identity every sgmon series carries (the exporter's ``IDENTITY``), which a member's
target repeats: its configuration, its database (oracle_dg's DB_UNIQUE_NAME), its host."""


@dataclass(frozen=True, slots=True)
class Member:
    """One target: a member of a Data Guard configuration and where its serve listens."""

    dg_config: str
    db_unique_name: str
    host: str
    address: str
    state: str
    serves: bool = True
    """Whether a `sgmon serve` can listen there: not on a host watched over ssh with nothing
    installed (the pump), which only the serve of the whole configuration covers."""

    @property
    def identity(self) -> tuple[str, str, str]:
        """The labels every sgmon series of this member carries."""
        return (self.dg_config, self.db_unique_name, self.host)

    def group(self, port: int) -> dict:
        """The member as a Prometheus target group."""
        target = self.address if ":" in self.address else f"{self.address}:{port}"
        labels = {**dict(zip(LABELS, self.identity, strict=True)), "member_state": self.state}
        return {"targets": [target], "labels": labels}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The configs to read, the serve port, where to write."""
    parser.add_argument(
        "--config",
        metavar="F",
        action="append",
        help="a configuration's sgmon.toml (repeat for each configuration of the fleet)",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"the port each member's `sgmon serve` listens on (default {DEFAULT_PORT})",
    )
    parser.add_argument(
        "--serve",
        metavar="ADDR:PORT",
        action="append",
        help="the `sgmon serve` that watches a whole configuration (one per --config, in the "
        "same order): one target per configuration instead of one per member",
    )
    parser.add_argument(
        "--output",
        metavar="FILE",
        help="write the file_sd target file here (atomically); default: stdout (http_sd body)",
    )
    parser.add_argument(
        "--no-broker", action="store_true", help="the configs only: connect to no database"
    )


def address_of(h: HostConfig) -> str:
    """Where a configured host is reached: its ssh host, else its database's host, else its
    name."""
    if h.ssh:
        return h.ssh.rpartition("@")[2]
    if h.db is not None:
        return connect_host(h.db.dsn) or h.name
    return h.name


def connect_host(identifier: str) -> str:
    """The host of a connect identifier: ``(DESCRIPTION=...(HOST=x)...)``, ``x:1521/SVC``,
    ``//x/SVC``, or a TNS alias (returned as it is: resolve it in tnsnames.ora)."""
    m = re.search(r"\(\s*HOST\s*=\s*([^)\s]+)", identifier, re.IGNORECASE)
    if m:
        return m.group(1)
    text = identifier.strip().removeprefix("//")
    if text.startswith("["):  # [::1]:1521/SVC
        return text[1 : text.find("]")]
    return re.split(r"[:/]", text, maxsplit=1)[0]


def _state(enabled: object, status: object, severity: object) -> str:
    """``member_state`` of a broker row or a destination."""
    if str(enabled or "TRUE").upper() == "FALSE":
        return "disabled"
    text = str(status if status is not None else "").strip().upper()
    if text in ("", "0", "VALID", "SUCCESS"):
        return "ok"
    if text == "DEFERRED":
        return "deferred"
    return "warning" if str(severity or "").upper() == "WARNING" else "error"


def members_of(
    config: Config, open_session: Callable[[HostConfig], Session | None] | None
) -> list[Member]:
    """The members of one configuration: its hosts, then the databases its reachable members
    name that no host of the config is (``open_session`` None: the config only).  A host whose
    database answers takes the state the broker (or a destination) gives its database."""
    named: dict[str, tuple[str, str]] = {}  # db_unique_name -> (connect identifier, state)
    hosts = [_host_member(config, h, open_session, named) for h in config.hosts]
    out = [
        replace(m, state=named[m.db_unique_name][1])
        if m.state == "ok" and m.db_unique_name in named
        else m
        for m in hosts
    ]
    known = {m.db_unique_name for m in hosts}
    for uname, (ident, state) in named.items():
        if uname not in known:
            host = connect_host(ident) or uname
            out.append(Member(config.name, uname, host, host, state))
    return out


def _host_member(
    config: Config,
    h: HostConfig,
    open_session: Callable[[HostConfig], Session | None] | None,
    named: dict[str, tuple[str, str]],
) -> Member:
    """A configured host as a member: unchecked without a database to ask; else as its
    database answers, the members that database names added to ``named``."""
    state, name = "unchecked", h.db_unique_name
    session = open_session(h) if open_session and h.db is not None else None
    if session is not None:
        try:
            state, name, rows = _ask(session, name)
        finally:
            session.close()
        for uname, ident, _role, enabled, status, severity in rows:
            if uname and str(uname).upper() != "NONE":
                named[str(uname)] = (str(ident or uname), _state(enabled, status, severity))
    installed = not h.ssh or bool(h.sgmon_path)
    return Member(config.name, name, h.name, address_of(h), state, serves=installed)


def _ask(session: Session, configured_name: str) -> tuple[str, str, list[tuple]]:
    """(state, DB_UNIQUE_NAME, member rows) of one database; unreachable when it does not
    answer.  The broker's rows where it has any, else the destinations'."""
    from sgmon.oracle import queries
    from sgmon.oracle.errors import OracleError

    try:
        db = session.select(queries.QUERIES["database"][(0,)])
        name = configured_name or str(db[0][4] if db else "")
        rows = session.query("members") or []
        if not rows and session.version >= (23,):  # a 23ai database without the broker
            rows = session.select(queries.QUERIES["members"][(0,)])
        return "ok", name, rows
    except OracleError:
        return "unreachable", configured_name, []


def with_missing(members: list[Member], previous: Iterable[dict]) -> list[Member]:
    """Members of the previous output that no source names now, kept and marked missing."""
    seen = {m.identity for m in members}
    kept = list(members)
    for g in previous:
        labels = g.get("labels", {})
        config, name, host = LABELS
        ident = (labels.get(config, ""), labels.get(name, ""), labels.get(host))
        if ident[2] and ident not in seen and g.get("targets"):
            kept.append(Member(ident[0], ident[1], str(ident[2]), g["targets"][0], "missing"))
            seen.add(ident)  # type: ignore[arg-type]
    return kept


def _real_session(h: HostConfig) -> Session:
    from sgmon.oracle.session import Session

    return Session(h.db, h.role)


def _previous(path: Path) -> list[dict]:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as e:
        raise UsageError(f"--output {path}: cannot read the previous targets ({e})") from None
    return data if isinstance(data, list) else []


def write_atomically(path: Path, text: str) -> None:
    """Write a file Prometheus may be reading: a temporary file renamed over it, readable by
    everyone (Prometheus runs as its own user; the targets hold nothing secret)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or ".")
    try:
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def run(args: argparse.Namespace) -> int:
    """Discover and write the target groups."""
    if not 0 < args.port < 65536:
        raise UsageError(f"--port {args.port}: use a port between 1 and 65535")
    configs = [load_config(c) for c in (args.config or [None])]
    if args.serve and len(args.serve) != len(configs):
        raise UsageError(f"--serve: give one per --config ({len(configs)}), in the same order")
    members, groups, unlisted = _discover(configs, args)
    out = Path(args.output) if args.output else None
    if not args.serve:
        if out is not None:
            members = with_missing(members, _previous(out))
        groups = [m.group(args.port) for m in members if m.serves]
    text = json.dumps(groups, indent=2) + "\n"
    if out is None:
        sys.stdout.write(text)
    else:
        try:
            write_atomically(out, text)
        except OSError as e:
            raise UsageError(f"--output {out}: {e.strerror or e}") from None
    _report(len(groups), members, unlisted, out)
    return 0


def _discover(
    configs: list[Config], args: argparse.Namespace
) -> tuple[list[Member], list[dict], list[str]]:
    """Every configuration's members; with ``--serve``, its one target group, and the members
    its config does not list by name (as ``name (host)``)."""
    members: list[Member] = []
    groups: list[dict] = []
    unlisted: list[str] = []
    for i, config in enumerate(configs):
        if not config.hosts:
            where = config.path or "the default config"
            raise ConfigError(f"{where}: no [[host]] to discover; list the configuration's hosts")
        found = members_of(config, None if args.no_broker else _real_session)
        members += found
        if args.serve:
            groups.append({"targets": [args.serve[i]], "labels": {"dg_config": config.name}})
            listed = {h.name for h in config.hosts}
            unlisted += [f"{m.db_unique_name} ({m.host})" for m in found if m.host not in listed]
    return members, groups, unlisted


def _report(n: int, members: list[Member], unlisted: list[str], out: Path | None) -> None:
    """One line on stderr: how many targets, where, which members are down or missing, and
    which the configs do not list."""
    down = sorted(f"{m.host} {m.state}" for m in members if m.state not in ("ok", "unchecked"))
    where = f" in {out}" if out else ""
    note = f"; members no config lists (add them as [[host]]): {', '.join(unlisted)}"
    print(
        f"sgmon: {n} targets{where}; down or missing: {', '.join(down) or 'none'}"
        + (note if unlisted else ""),
        file=sys.stderr,
    )
    bare = [m.host for m in members if not m.serves]
    if bare and n < len(members):
        print(
            f"sgmon: no target for {', '.join(bare)}: watched over ssh with nothing installed, "
            "no sgmon serve listens there; run one serve for the configuration and discover "
            "with --serve ADDR:PORT",
            file=sys.stderr,
        )
