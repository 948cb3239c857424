"""The command line of `sgmon import awr`: the connection (a config host's ``[host.db]`` or the
same keys as options, with a longer call timeout) and the window to import."""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

from sgmon.config import DbConfig, db_config, load_config
from sgmon.errors import UsageError
from sgmon.importers.awr.repository import LICENCE, VIEWS, Window, iso
from sgmon.units import parse_duration, parse_instant, parse_offset

CALL_TIMEOUT = 60.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Connection (as the config's [host.db]), time range, DBID and host naming."""
    parser.epilog = f"{LICENCE}.  Privileges: SELECT_CATALOG_ROLE, or SELECT on {', '.join(VIEWS)}."
    c = parser.add_argument_group("database (the keys of a config's [host.db])")
    c.add_argument("--config", metavar="F", help="sgmon.toml holding the host given by --db")
    c.add_argument("--db", metavar="HOST", help="use this config host's [host.db], name and role")
    c.add_argument("--dsn", help="host:port/service, a TNS alias or a descriptor")
    c.add_argument("--user", default="", help="database user (SELECT_CATALOG_ROLE)")
    c.add_argument("--mode", default="normal", help="normal, sysdba or sysdg")
    c.add_argument("--password-env", default="", metavar="VAR", help="variable with the password")
    c.add_argument("--wallet-dir", default="", metavar="DIR", help="external password store")
    c.add_argument("--password-prompt", action="store_true", help="ask for the password")
    c.add_argument("--thick", action="store_true", help="thick mode (Instant Client; 11.2)")
    c.add_argument(
        "--call-timeout", default=f"{CALL_TIMEOUT:g}s", metavar="T", help="per statement"
    )
    w = parser.add_argument_group("what to import")
    w.add_argument("--from", dest="start", metavar="T", help="UTC start (ISO or HH:MM)")
    w.add_argument("--to", dest="end", metavar="T", help="UTC end (default: now)")
    w.add_argument("--days", type=float, help="the last N days (default 1 without --from)")
    w.add_argument("--dbid", type=int, help="DBID to read (default: the connected database's)")
    w.add_argument("--host", default="", help="host name for the archive (RAC: NAME-<inst>)")
    w.add_argument("--role", choices=("primary", "standby"), help="default: V$DATABASE's now")
    w.add_argument("--tz", help="the database host's UTC offset (+HH:MM), when AWR has none")


def window(args: argparse.Namespace, host: str = "", role: str = "") -> Window:
    """The options' time range (UTC), DBID, names and offset."""
    now = time.time()
    try:
        end = parse_instant(args.end, now) if args.end else now
        if args.start:
            start = parse_instant(args.start, end)
        else:
            start = end - (args.days if args.days is not None else 1.0) * 86400
        tz = parse_offset(args.tz) if args.tz else None
    except ValueError as e:
        raise UsageError(str(e)) from None
    if start >= end:
        raise UsageError(f"--from {iso(start)} is not before --to {iso(end)} (UTC)")
    return Window(start, end, args.dbid, args.host or host, args.role or role, tz)


def database(args: argparse.Namespace) -> tuple[DbConfig, str, str]:
    """The DbConfig to connect with, and the config host's name and role if one was named."""
    try:
        timeout = parse_duration(args.call_timeout)
    except ValueError as e:
        raise UsageError(f"--call-timeout: {e}") from None
    if args.db:
        config = load_config(args.config)
        h = next((h for h in config.hosts if h.name == args.db), None)
        if h is None or h.db is None:
            names = ", ".join(x.name for x in config.hosts if x.db) or "none"
            raise UsageError(f"--db {args.db}: no such host with a [host.db] (have: {names})")
        return replace(h.db, call_timeout=max(h.db.call_timeout, timeout)), h.name, h.role
    if not args.dsn:
        raise UsageError("say which database: --dsn host:port/service --user U, or --db HOST")
    d = {
        "dsn": args.dsn,
        "user": args.user,
        "mode": args.mode,
        "password_env": args.password_env,
        "wallet_dir": args.wallet_dir,
        "password": "prompt" if args.password_prompt else "",
        "thick": args.thick,
        "call_timeout": timeout,
    }
    return db_config(d, "sgmon import awr"), "", ""
