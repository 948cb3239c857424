"""`sgmon report DIR -o incident.html`: a recording (or an import) as one self-contained HTML
file to share: both hosts' commit path, disks, DG sockets and CPU on one zoomable time axis, the
findings with their evidence and seed, the commit budget and the advice.  Headless: the frames
are judged as ``check --from`` judges them, and nothing of Textual is imported.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from sgmon.errors import UsageError

if TYPE_CHECKING:
    from sgmon.config import Config
    from sgmon.report.judged import Judged


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Archive, time range, config and output file."""
    parser.add_argument("dir", help="an archive: sgmon record --dir, or sgmon import")
    parser.add_argument(
        "--from",
        dest="start",
        metavar="TIME",
        help="first instant drawn (10:31:02 UTC, ISO, or +5m from the first tick); earlier "
        "ticks are still judged, so the analysis has its baselines",
    )
    parser.add_argument(
        "--to", dest="end", metavar="TIME", help="last instant judged and drawn (same forms)"
    )
    parser.add_argument(
        "--config", metavar="F", help="sgmon.toml: [thresholds], and the hosts' redo devices"
    )
    parser.add_argument(
        "-o", "--output", metavar="FILE", required=True, help="the HTML file to write"
    )


def _writable(output: str) -> Path:
    """The output path, refused before any work when it cannot be written."""
    path = Path(output)
    if path.is_dir():
        raise UsageError(f"-o {output}: is a directory; name the HTML file to write")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"-o {output}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"-o {output}: cannot write in {parent}")
    return path


def _write(path: Path, text: str) -> None:
    """Whole or not at all: a temporary file beside the target, renamed over it."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or ".")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as e:
        raise UsageError(f"-o {path}: {e.strerror or e}") from None


def _what_if(judged: Judged, config: Config) -> list[str]:
    """``check``'s lines of what a change would buy, from the frames in range (and the
    findings' advice quoting it)."""
    from sgmon import topology
    from sgmon.analysis.whatif import Window
    from sgmon.analysis.whatif.run import quoted, what_if
    from sgmon.units import fmt_utc

    window = Window()
    for frame in sorted((f for fl in judged.frames.values() for f in fl), key=lambda f: f.time):
        window(frame)
    topo = topology.build(config, {h: fl[-1] for h, fl in judged.frames.items() if fl})
    what = what_if(window, judged.findings, topo)
    judged.findings = quoted(judged.findings, what)  # their advice quotes what a change buys
    return what.lines(fmt_utc) if what is not None else []


def run(args: argparse.Namespace) -> int:
    """Judge the archive in range and write the report."""

    from sgmon.config import load_config
    from sgmon.errors import ArchiveError
    from sgmon.headless import instant
    from sgmon.hosts.replay import ReplaySource
    from sgmon.report.judged import judge_archive, within
    from sgmon.report.page import render
    from sgmon.report.series import report_data
    from sgmon.units import fmt_utc

    output = _writable(args.output)
    config = load_config(args.config)
    try:
        src = ReplaySource(args.dir, speed=0)
        frames = [f for h in src.hosts for f in src.frames(h.name)]
    except ArchiveError as e:
        raise UsageError(str(e)) from None
    for line in src.problems():  # what was read around, and where
        print(line, file=sys.stderr)
    if not frames:
        raise UsageError(f"{args.dir} holds no recorded ticks")
    first = min(f.time for f in frames)
    last = max(f.time for f in frames)
    lo = instant("--from", args.start, first) if args.start is not None else first
    hi = instant("--to", args.end, first) if args.end is not None else last
    if not any(within(f.time, lo, hi) for f in frames):
        raise UsageError(
            f"no ticks between {fmt_utc(lo)} and {fmt_utc(hi)} UTC; the recording runs from "
            f"{fmt_utc(first)} to {fmt_utc(last)} UTC"
        )
    judged = judge_archive(src, config, lo, hi)
    judged.what_if = _what_if(judged, config)
    pinned = {h.name: h.devices for h in config.hosts}
    name = config.name if config.path is not None else src.meta.get("name", "")
    page = render(
        judged,
        report_data(judged, pinned),
        Path(args.dir).resolve().name,
        name=name,
        simulated=src.meta.get("simulated", ""),
    )
    _write(output, page)
    print(
        f"{output}: {len(page) / 1e6:.2f} MB, {len(judged.findings)} finding(s), "
        f"{sum(len(v) for v in judged.frames.values())} ticks",
        file=sys.stderr,
    )
    return 0
