"""Where frames come from: this machine, a simulation, a recording, or a remote agent over ssh.

A *source* produces frames for one or more hosts (the simulated pair and a recording produce
both).  Every source has the same small surface, so every command and sink works with any of them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from sgmon.model import Frame, Schema


@dataclass(frozen=True, slots=True)
class HostInfo:
    """A host as the user named it, with its Data Guard role."""

    name: str
    role: str  # "primary", "standby" or ""


class Source(Protocol):
    """Produces frames for the hosts it names."""

    hosts: list[HostInfo]

    @property
    def interval(self) -> float:
        """Seconds between its frames."""
        ...

    def schema(self, host: str) -> Schema:
        """Declared fields of every collector of one host."""
        ...

    def run(self, emit: Callable[[Frame], None], stop: threading.Event) -> None:
        """Call ``emit`` with each frame until ``stop`` is set or the source ends."""
        ...

    def close(self) -> None:
        """Release what the source holds."""
        ...


def schema_lookup(sources: Iterable[Source]) -> Callable[[str], Schema]:
    """``host -> Schema`` over the sources (an empty one for a host none of them has), for
    sinks and judges built before the Monitor."""
    sources = list(sources)

    def schema_of(host: str) -> Schema:
        for s in sources:
            if any(h.name == host for h in s.hosts):
                return s.schema(host)
        return {}

    return schema_of
