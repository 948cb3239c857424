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
from sgmon.readers.deadline import Deadline
from sgmon.sinks.csvarchive import ArchiveWriter
from sgmon.units import fmt_utc


def write(
    out: Path,
    imp: Imported,
    warn: Callable[[str], None] | None = None,
    deadline: Deadline | None = None,
) -> int:
    """Write every frame in time order (a streamed import's as it is read, until ``deadline``:
    what was written is kept, and a note says up to when); return the number of rows
    written."""
    writer = ArchiveWriter(out, imp.schema.__getitem__, imp.interval, warn=warn)
    try:
        held = sorted((f for fs in imp.frames.values() for f in fs), key=lambda f: f.time)
        written: dict[str, int] = {}
        for frame in held if imp.stream is None else imp.stream:
            if imp.stream is not None and deadline is not None and deadline.passed():
                upto = f"the samples before {fmt_utc(frame.time)} UTC" if written else "no sample"
                if not deadline.told:  # (or said where the reading stopped)
                    imp.notes.append(deadline.said(upto, "those from then on"))
                imp.counts = written  # the summary counts what is in the archive
                break
            writer(frame)
            written[frame.host] = written.get(frame.host, 0) + 1
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
