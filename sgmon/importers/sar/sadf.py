"""Running the sysstat installed here on a saDD file: ``sadf -j``'s JSON of the activities sgmon
reads, another sysstat version's file converted with ``sadf -c`` first, an output cut short
salvaged record by record, and a file of another host read again with this host's devices
hidden (see the package docstring)."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from sgmon.errors import UsageError

SAR_OPTIONS = [
    "-u", "ALL", "-P", "ALL", "-q", "ALL", "-w", "-I", "SUM", "-B", "-W", "-r", "ALL", "-S", "-d",
    "-n", "DEV,EDEV,TCP,ETCP",
]  # fmt: skip
"""The activities read (a file that lacks one simply has no such section)."""

OTHER_VERSION = "cannot read the format of this file"
TRUNCATED = "End of system activity file unexpected"
SADF_TIMEOUT = 120.0

SHAPE_ERRORS = (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError)
"""What reading a record of an unexpected shape raises (a text where sadf prints a number, a
list where it prints an object, a key missing)."""

HIDE_SYSFS = 'mount -t tmpfs sgmon /sys/dev/block && exec sadf "$@"'
"""Run sadf where /sys/dev/block is empty, so that it names devices from the numbers alone
(sysstat.ioconf's fixed majors: sd*, loop*...) and devM-N otherwise, never after this host's
device that happens to have the same major:minor."""


def sadf_json(path: Path, notes: list[str]) -> tuple[dict[str, Any], bool] | None:
    """The file's records as sadf -j prints them, converting another version's file first, and
    whether sadf met the file's end inside a record; None (and a note) when nothing in it is
    readable.  A file written on another host is read again with this host's devices hidden
    (see HIDE_SYSFS)."""
    if not path.is_file():
        notes.append(f"{path}: no such file")
        return None
    with tempfile.TemporaryDirectory(prefix="sgmon-sadf-") as tmp:
        src = path
        out, err, rc = _run_sadf(["-j", str(src), "--", *SAR_OPTIONS])
        if rc != 0 and OTHER_VERSION in err:
            converted = _converted(path, Path(tmp), err, notes)
            if converted is None:
                return None
            src = converted
            out, err, rc = _run_sadf(["-j", str(src), "--", *SAR_OPTIONS])
        try:  # what sadf printed is kept whatever its exit status (a cut file ends early)
            doc: Any = json.loads(out)
        except ValueError as e:
            return _salvaged(path, out, err, e, notes)
        try:
            hosts = doc["sysstat"]["hosts"]
            foreign = {h.get("nodename") for h in hosts} - {os.uname().nodename, None}
        except SHAPE_ERRORS:
            return doc, TRUNCATED in err  # records.host_sections says what is wrong
        if foreign:
            hidden = _run_sadf(["-j", str(src), "--", *SAR_OPTIONS], hide_sysfs=True)
            try:
                doc = json.loads(hidden[0])
            except ValueError:
                notes.append(
                    f"{path}: written on {', '.join(sorted(foreign))}: sadf names its devices "
                    "after this host's of the same major:minor (hiding them needs root), "
                    "check device-mapper and virtio names with sar -d there"
                )
    return doc, TRUNCATED in err


def _converted(path: Path, tmp: Path, err: str, notes: list[str]) -> Path | None:
    """A file of another sysstat version (named in sadf's ``err``) converted with ``sadf -c``
    into ``tmp``; None (and a note) when sadf cannot convert it."""
    version = next((ln for ln in err.splitlines() if "sysstat version" in ln), "").strip()
    src = tmp / path.name
    with open(src, "wb") as f:
        c = subprocess.run(
            ["sadf", "-c", str(path)],
            stdout=f,
            stderr=subprocess.PIPE,
            env=_C_LOCALE,
            timeout=SADF_TIMEOUT,
            check=False,
        )
    if c.returncode != 0:
        why = _last_line(c.stderr.decode(errors="replace")) or f"exit {c.returncode}"
        notes.append(f"{path}: {version or 'another sysstat version'}; sadf -c: {why}")
        return None
    notes.append(f"{path}: {version}, converted with sadf -c to this sysstat's format")
    return src


def _salvaged(
    path: Path, out: str, err: str, e: ValueError, notes: list[str]
) -> tuple[dict[str, Any], bool] | None:
    """What a sadf output that is no whole JSON holds: its whole records (noted), else None
    and a note of sadf's complaint."""
    doc = _salvage(out)
    if doc is None:
        why = _last_line(err) or (f"JSON cut short ({e})" if out.strip() else "no JSON")
        notes.append(f"{path}: sadf: {why}")
        return None
    kept = len(doc["sysstat"]["hosts"][0]["statistics"])
    notes.append(f"{path}: sadf -j output cut short ({e}); the {kept} whole records kept")
    return doc, False


STATISTICS = '"statistics": ['


def _salvage(out: str) -> dict[str, Any] | None:
    """The whole records of a ``sadf -j`` output cut short (sadf killed, a disk full): the host
    header before ``"statistics": [`` and every record that decodes after it; None when not
    even the header is there."""
    at = out.find(STATISTICS)
    if at < 0:
        return None
    try:
        doc = json.loads(out[:at] + '"statistics": []}]}}')
        host = doc["sysstat"]["hosts"][0]
    except (ValueError, *SHAPE_ERRORS):
        return None
    decoder, i = json.JSONDecoder(), at + len(STATISTICS)
    while True:
        while i < len(out) and out[i] in " \t\r\n,":
            i += 1
        try:
            record, i = decoder.raw_decode(out, i)
        except ValueError:
            return doc
        host["statistics"].append(record)


_C_LOCALE = {**os.environ, "LC_ALL": "C"}


def _run_sadf(argv: list[str], hide_sysfs: bool = False) -> tuple[str, str, int]:
    cmd = ["sadf", *argv]
    if hide_sysfs:
        cmd = ["unshare", "--mount", "--propagation", "private", "sh", "-c", HIDE_SYSFS, "sh"]
        cmd += argv
    try:
        p = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            env=_C_LOCALE,
            timeout=SADF_TIMEOUT,
            check=False,
        )
    except FileNotFoundError:
        if hide_sysfs:
            return "", "unshare not found", 127
        raise UsageError("sadf not found: install sysstat (it reads the sa files)") from None
    return p.stdout, p.stderr, p.returncode


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else ""
