"""Importers: history already kept on the hosts (sar, OSWatcher, AWR) into sgmon's own archive.

The archive is the format the recorder writes (``sgmon.archive``), so ``replay``, ``check --from``
and the analysis read an import unchanged.  Each source is one module here, listed in
``SOURCES``, and provides:

    HELP: str                                   one line for ``sgmon import --help``
    add_arguments(parser) -> None               the source's own options
    read(args) -> Imported                      frames per host, in the live collectors' fields
    stream(args) -> Imported                    optional: the same, its frames in ``stream``,
                                                which ``sgmon import`` writes as they come

An importer maps the source's figures onto the same collector names, fields and units that
live collection declares (``registry.load(name).fields``), and says where each field came from
in ``Imported.provenance``; ``sgmon.importers.write`` stores both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

    from sgmon.model import Frame, Schema

SOURCES: dict[str, str] = {
    # kind -> module under sgmon.importers
    "sar": "sar",
    "osw": "osw",
    "awr": "awr",
    "awr-report": "awrtext",
}


@dataclass
class Imported:
    """What one import produced: frames and schema per host, and the provenance of each field.

    ``interval`` is the source's sampling step in seconds (600 for sar's default, 1800 for AWR's
    default 30 min snapshots...); ``provenance[host][collector][field]`` is a short text such as
    ``"sadf -j: disk.aqu-sz"``; ``notes`` are one-line remarks for the user (a torn last block, a
    gap) that are also written as events.  An import too large to hold hands its frames on
    as ``stream`` instead, in time order (``frames`` then stays empty; ``schema`` is whole
    before the first frame); ``counts`` is the number of frames per host either way.
    """

    interval: float
    frames: dict[str, list[Frame]] = field(default_factory=dict)
    schema: dict[str, Schema] = field(default_factory=dict)
    provenance: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    stream: Iterator[Frame] | None = None
    counts: dict[str, int] = field(default_factory=dict)
