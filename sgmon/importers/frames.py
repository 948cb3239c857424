"""What every importer does with a source's samples: frames in the live collectors' fields, the
schema those collectors declare, and where each field came from.

An importer parses its source and calls ``Builder.sample`` once per host and time; the builder
numbers each host's frames from 1, as the live engine and the replay do, checks that every field
is one the live collector declares (a misspelt mapping would otherwise be written as an empty
column), and hands back an ``Imported``.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping

from sgmon import registry
from sgmon.importers import Imported
from sgmon.model import CollectorResult, Event, Frame, Rows, Status

NOT_IMPORTED = "(not imported)"
"""Provenance key for the source's figures that no live field holds: source name -> reason."""


def add_host_options(parser: argparse.ArgumentParser, default: str) -> None:
    """``--host`` (``default`` says where the name comes from otherwise) and ``--role``."""
    parser.add_argument("--host", help=f"host name in the archive (default: {default})")
    parser.add_argument(
        "--role", choices=("primary", "standby"), default="", help="the host's Data Guard role"
    )


class Builder:
    """Collects one import's frames, provenance and notes, host by host."""

    def __init__(self, interval: float) -> None:
        self.imp = Imported(interval=interval)
        self._fields: dict[str, frozenset[str]] = {}

    def declared(self, collector: str) -> frozenset[str]:
        """The field names the live collector declares."""
        names = self._fields.get(collector)
        if names is None:
            names = frozenset(f.name for f in registry.load(collector).fields)
            self._fields[collector] = names
        return names

    def declare(self, host: str, collectors: Iterable[str]) -> None:
        """The live schema of ``collectors`` for ``host``, before its frames are built (a
        streamed import's archive learns a host's columns from its first frame)."""
        schema = self.imp.schema.setdefault(host, {})
        for name in collectors:
            if name not in schema:
                schema[name] = registry.load(name).fields

    def frame(
        self,
        host: str,
        role: str,
        t: float,
        interval: float,
        collectors: Mapping[str, Rows],
        events: Iterable[Event] = (),
    ) -> Frame:
        """The next frame of ``host``, at ``t``, holding ``collectors`` (name -> instance ->
        row), counted but not kept."""
        for name, rows in collectors.items():
            for row in rows.values():
                unknown = set(row) - self.declared(name)
                if unknown:
                    raise AssertionError(f"{name} declares no field {', '.join(sorted(unknown))}")
        self.declare(host, collectors)
        seq = self.imp.counts[host] = self.imp.counts.get(host, 0) + 1
        return Frame(
            host=host,
            time=t,
            seq=seq,
            interval=interval,
            collectors={n: CollectorResult(Status.OK, rows) for n, rows in collectors.items()},
            events=tuple(events),
            role=role,
        )

    def sample(
        self,
        host: str,
        role: str,
        t: float,
        interval: float,
        collectors: Mapping[str, Rows],
        events: Iterable[Event] = (),
    ) -> None:
        """One frame of ``host`` at ``t`` holding ``collectors``, kept in ``Imported.frames``."""
        frame = self.frame(host, role, t, interval, collectors, events)
        self.imp.frames.setdefault(host, []).append(frame)

    def source(self, host: str, provenance: Mapping[str, Mapping[str, str]]) -> None:
        """Record where each of a host's fields came from (collector -> field -> text)."""
        mine = self.imp.provenance.setdefault(host, {})
        for collector, fields in provenance.items():
            mine.setdefault(collector, {}).update(fields)

    def note(self, text: str) -> None:
        """A one-line remark for the user (printed as ``sgmon: ...``)."""
        self.imp.notes.append(text)
