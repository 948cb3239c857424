"""What an archive says of its hosts: meta.json checked piece by piece, and where it is damaged,
what the CSV files hold.

What the CSV files hold wins over a damaged meta.json, with a note: a host directory meta.json
does not list is read as a host of unknown role; a collector whose field list meta.json lost is
read with the built-in collector's declaration when its tables' header is the one that
declaration makes.  A host directory that cannot be read, or is no directory, is left out with
a note, never a traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sgmon.archive import (
    ARCHIVE_FORMAT,
    data_files,
    header,
    header_of,
    host_specs,
    printable,
    read_meta,
    safe_name,
)
from sgmon.errors import ArchiveError
from sgmon.model import Field, Schema


def meta_or_csv(root: Path, notes: list[str]) -> dict | None:
    """The archive's meta.json (None: there is none); when it cannot be read (corrupt, not a
    file, not sgmon's) and host directories hold tables, an empty one with a note, so that
    every host is read from its CSV files rather than none."""
    try:
        return read_meta(root)
    except ArchiveError as e:
        if not _unlisted(root, {}, []):
            raise
        why = str(e).split("; move it aside")[0].split("; use another")[0]
        notes.append(f"{why}; the hosts are read from their CSV files (roles not known)")
        return {"format": ARCHIVE_FORMAT, "hosts": {}}


def archived_hosts(root: Path, meta: dict, notes: list[str]) -> dict[str, dict[str, Any]]:
    """Host -> its dir, role, steps and schema (``host_specs``'), completed from the CSV files
    and without the hosts that cannot be read; what was found wanting goes to ``notes``."""
    if meta.get("format") != ARCHIVE_FORMAT:
        notes.append(
            f"meta.json: format {printable(str(meta.get('format')))[:20]} is not this "
            f"sgmon's ({ARCHIVE_FORMAT}); read as {ARCHIVE_FORMAT}: check what it shows"
        )
    specs = host_specs(meta, notes)
    out = {}
    for name, h in {**specs, **_unlisted(root, specs, notes)}.items():
        schema = _readable(root, name, h["dir"], h["schema"], notes)
        if schema is not None:
            out[name] = {**h, "schema": schema}
    return out


def _unlisted(
    root: Path, specs: dict[str, dict[str, Any]], notes: list[str]
) -> dict[str, dict[str, Any]]:
    """Host directories holding tables that meta.json does not list."""
    listed = {h["dir"] for h in specs.values()}
    out: dict[str, dict[str, Any]] = {}
    try:
        entries = sorted(root.iterdir())
    except OSError as e:
        notes.append(f"{root}: {e.strerror or e}; no host directory read")
        return out
    for d in entries:
        if d.name in listed or d.name.startswith(".") or safe_name(d.name) != d.name:
            continue
        try:
            if not d.is_dir() or not data_files(d):
                continue
        except OSError:
            continue
        name = printable(d.name)
        notes.append(
            f"meta.json does not list host directory {name}; read from its CSV files "
            "(its role is not known)"
        )
        out[name] = {"dir": d.name, "role": "", "steps": {}, "schema": {}}
    return out


def _readable(
    root: Path, host: str, directory: str, schema: Schema, notes: list[str]
) -> Schema | None:
    """The host's schema completed from its CSV files; None when its directory cannot be read
    at all."""
    hdir = root / directory
    try:
        if not hdir.exists():
            return schema  # recorded nothing yet: a host without frames
        if not hdir.is_dir():
            notes.append(f"host {host}: {directory} is not a directory; left out")
            return None
        files = data_files(hdir)
    except OSError as e:
        notes.append(f"host {host}: its directory cannot be read ({e.strerror or e}); left out")
        return None
    out = dict(schema)
    lost = []
    for collector in sorted(files.keys() - schema.keys()):
        fields = _declared(collector, files[collector][0])
        if fields is None:
            lost.append(printable(collector))
        else:
            out[collector] = fields
    if recovered := sorted(out.keys() - schema.keys()):
        notes.append(
            f"meta.json has no fields for host {host}'s {', '.join(recovered)} tables; "
            "their headers are sgmon's own collectors', read with their declarations"
        )
    if lost:
        notes.append(
            f"meta.json has no fields for host {host}'s {', '.join(lost)} tables and their "
            "headers are no collector's of this sgmon; left out"
        )
    return out


def _declared(collector: str, table: Path) -> tuple[Field, ...] | None:
    """The built-in collector's fields, when ``table``'s header is the one they make."""
    from sgmon import registry

    if collector not in registry.builtin_names():
        return None
    fields = registry.builtin(collector).fields
    try:
        return fields if header_of(table) == header(fields) else None
    except OSError:
        return None
