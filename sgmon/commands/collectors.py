"""`sgmon collectors`: every installed collector, what it reads, and whether it can run here.

Each collector is imported, built with its config options, opened and closed, one at a time and
each in its own bounded thread: a plug-in that fails to import, rejects its options, cannot run
on this host or hangs is reported with its reason, and the listing goes on.  ``--fields`` adds
each declared field with its unit, kind and meaning (what CSV columns and metrics will carry).
"""

from __future__ import annotations

import argparse
import threading
from dataclasses import dataclass
from typing import Any

from sgmon import registry
from sgmon.collector import Collector, Unavailable
from sgmon.config import Config
from sgmon.hosts.build import host_options
from sgmon.model import Field, Status

OPEN_TIMEOUT = 5.0
"""Seconds one collector's open() may take before it is reported as hanging."""


@dataclass(frozen=True, slots=True)
class Check:
    """What was found for one collector."""

    name: str
    target: str
    description: str
    status: Status  # ok, unavailable or error: the words a frame gives a collector
    reason: str
    fields: tuple[Field, ...]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """--fields and --config."""
    parser.add_argument(
        "--fields", action="store_true", help="list each field with unit, kind and meaning"
    )
    parser.add_argument("--config", help="sgmon.toml whose collector options are tried")


def run(args: argparse.Namespace) -> int:
    """Print one line per collector (and its fields with --fields)."""
    from sgmon.config import load_config

    config = load_config(args.config)
    checks = [check(name, target, config) for name, target in registry.targets().items()]
    width = max((len(c.name) for c in checks), default=4)
    print(f"{'NAME':<{width}}  {'HERE':<11}  DESCRIPTION")
    for c in checks:
        print(f"{c.name:<{width}}  {c.status:<11}  {c.description or c.target}")
        if c.reason:
            print(f"{'':<{width}}  {'':<11}  {c.reason}")
        if args.fields:
            print(_fields(c.fields, width + 2))
    return 0


def _options(name: str, config: Config) -> dict[str, Any]:
    """The options the collector would get on this host (the first local host of the config)."""
    return host_options(config, name, next((h for h in config.hosts if not h.ssh), None))


def check(name: str, target: str, config: Config) -> Check:
    """Import, build, open and close one collector, turning every failure into a reason."""
    try:
        cls = registry.load(name)
    except Exception as e:  # a broken plug-in must not hide the others
        return Check(name, target, "", Status.ERROR, f"cannot import {target}: {e}", ())
    desc, fields = cls.description, tuple(cls.fields)
    try:
        collector = cls(_options(name, config))
    except Exception as e:  # ConfigError and anything a plug-in raises
        return Check(name, target, desc, Status.ERROR, f"options: {e}", fields)
    status, reason = _try_open(collector)
    return Check(name, target, desc, status, reason, fields)


def _try_open(collector: Collector) -> tuple[Status, str]:
    """open() then close() on a daemon thread, bounded by OPEN_TIMEOUT."""
    outcome: list[tuple[Status, str]] = []

    def attempt() -> None:
        try:
            collector.open()
        except Unavailable as e:
            outcome.append((Status.UNAVAILABLE, str(e)))
            return
        except Exception as e:
            outcome.append((Status.ERROR, f"{type(e).__name__}: {e}"))
            return
        try:
            collector.close()
        except Exception as e:
            outcome.append((Status.ERROR, f"close: {type(e).__name__}: {e}"))
            return
        outcome.append((Status.OK, ""))

    t = threading.Thread(target=attempt, name=f"check-{collector.name}", daemon=True)
    t.start()
    t.join(OPEN_TIMEOUT)
    if not outcome:
        return Status.ERROR, f"open() did not return within {OPEN_TIMEOUT:g}s"
    return outcome[0]


def _fields(fields: tuple[Field, ...], indent: int) -> str:
    if not fields:
        return " " * indent + "(no fields declared)"
    w = max(len(f.name) for f in fields)
    uw = max(len(f.unit) for f in fields)
    lines = []
    for f in fields:
        limits = "".join(
            f"  {label} {v:g}" for label, v in (("warn", f.warn), ("crit", f.crit)) if v is not None
        )
        if limits and not f.higher_is_worse:
            limits += " (lower is worse)"
        unit = f.unit or "-"
        lines.append(
            f"{'':<{indent}}{f.name:<{w}}  {unit:<{uw}}  {f.kind.value:<9}  {f.help}{limits}"
        )
    return "\n".join(lines)
