"""Store an ``Imported`` in the archive layout, through the recorder's own writer.

Several imports may go into one directory (the primary's sar and AWR, the standby's sar): the
writer appends to an archive it recognises, and each host's provenance is merged into
meta.json under ``hosts.<host>.sources``, with the source's step as ``hosts.<host>.interval``
and each collector's under ``hosts.<host>.steps`` (sar's 10 minutes and AWR's 30 share one
archive, even one host: the replay regrids such an archive onto its coarsest step).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sgmon.importers import Imported
from sgmon.sinks.csvarchive import ArchiveWriter


def write(out: Path, imp: Imported, warn: Callable[[str], None] | None = None) -> int:
    """Write every frame in time order (a streamed import's as it comes); return the number
    of rows written."""
    writer = ArchiveWriter(out, imp.schema.__getitem__, imp.interval, warn=warn)
    try:
        held = sorted((f for fs in imp.frames.values() for f in fs), key=lambda f: f.time)
        for frame in held if imp.stream is None else imp.stream:
            writer(frame)
        for host, prov in imp.provenance.items():
            h = writer.meta["hosts"].setdefault(host, {})
            h["interval"] = imp.interval
            steps = h.setdefault("steps", {})
            steps.update(dict.fromkeys(imp.schema.get(host, {}), imp.interval))
            sources = h.setdefault("sources", {})
            for collector, fields in prov.items():
                sources.setdefault(collector, {}).update(fields)
    finally:
        writer.close()  # also writes meta.json
    return writer.rows_written
