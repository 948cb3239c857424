"""`sgmon import osw DIR`: an OSWatcher (oswbb) archive, on the live collectors' fields.

OSWatcher runs each tool every snapshot (30 s by default) and appends its output, after a
``zzz ***<date>`` line, to ``<tool dir>/<host>_<tool>_<yy.mm.dd.hh00>.dat`` (gzip'd or bzip2'd
once the hour is over).  Every report is imported at its own time, in each layout OSWatcher
has written:

- classic (oswbb 4 to 8, and the AHF-bundled releases, whose files start with a line of advice
  and ``Linux OSWbb v22.1.0AHF <host>``): one ``zzz`` per snapshot, one report per tool after it;
- ``iostat -t``: the report carries its own stamp (sysstat 7's ``Time: 11:01:52``, later ones'
  locale date and time, or ``S_TIME_FORMAT=ISO``'s), which is its time;
- Exadata storage cells: one ``zzz ***<date> Sample interval: 5 secconds`` line, then the whole
  hour of one ``iostat -t -x 5 720`` run, each report headed ``Time: HH:MM:SS``; the run's first
  report (averages since boot, after the iostat banner) is skipped with a note.  A report's time
  of day is read after the ``zzz`` line's, so a run that passes midnight goes on into the next
  day.  A block whose reports span at most 5 s (``iostat -xk 1 3``'s last third, ``mpstat -P ALL
  1 2``) and states no sample interval stands for one snapshot: its last report is taken;
- continuous ``mpstat`` (one header, then a stamped row per interval): every row a report at
  its own stamp;
- reports before a file's first ``zzz`` line: at their own stamps, in the hour the file's
  name says; with no stamp of their own (vmstat), refused with one note.

The Linux commands and what is taken from each report:

- oswiostat, ``iostat -xk 1 3`` of which OSWatcher keeps the last third (the last 1 s report):
  disk, columns found by their header names, so sysstat < 9.1's ``avgqu-sz``/``await``/``svctm``
  (and ``rsec/s`` without ``-k``) and today's ``aqu-sz``/``r_await``/``w_await`` both read; an
  old single ``await`` stands for r_await where the device read and w_await where it wrote, as
  the sar importer does;
- oswvmstat, ``vmstat 1 3``: the last line (the last second; never the first, averages since
  boot; damaged lines counted in one note): run queue ``r``, ``b``, ``in``,
  ``cs`` on cpu ``all``; ``bi``/``bo`` (kB/s, the kernel's pgpgin/pgpgout) and ``si``/``so``
  (kB/s, read as 4 kB pages) on paging;
- oswmpstat, ``mpstat -P ALL 1 2``: the last 1 s report, per CPU, at its header's stamp;
- oswnetstat, ``netstat -a -i -n`` and ``netstat -s`` (or, in the AHF releases, ``ip -s link``
  and nstat, whose counters are not read: see PROVENANCE): cumulative counters, so rates over
  the time between two blocks (the whole snapshot step, unlike the 1 s figures above);
- oswtop, ``top -b``: the load averages, ``%Cpu(s)`` (where mpstat gave no figure), ``Tasks``
  and the swap line; oswps, ``ps -aeo ...``: pid, state and wchan of the
  commit-path background processes (``ora_lgwr_SID``...) under the procs collector's names.

A snapshot's blocks of all tools (started together, stamped within a second or two) make one
frame.  The ``zzz`` dates carry a zone abbreviation, which does not name a zone: UTC/GMT are
read as such, others in this machine's zone unless ``--tz`` names the host's.  A block that
does not parse is one note per file; a file cut in the middle of its last block (a torn line,
a truncated gzip stream) loses that block only, with one note.
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import re
import statistics
import time
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from collectors.procs import BACKGROUND
from sgmon.errors import UsageError
from sgmon.importers import Imported
from sgmon.importers.frames import NOT_IMPORTED, Builder, add_host_options
from sgmon.importers.osw import snapshots
from sgmon.importers.osw.files import Block, Parser, Reading
from sgmon.importers.osw.netstat import IP_S, NETSTAT_I, NETSTAT_S, netstat
from sgmon.importers.osw.reports import (
    IOSTAT,
    MPSTAT,
    PAGE_KB,
    TOP_CPU,
    VMSTAT_CPU,
    iostat,
    mpstat,
    top,
    vmstat,
)
from sgmon.importers.osw.snapshots import Stream
from sgmon.model import Rows, Value

HELP = "OSWatcher archives (oswiostat, oswvmstat, oswmpstat, oswnetstat, oswtop, oswps)"
FILE = re.compile(r"^(?P<host>.+)_(?P<tool>[a-z]+)_\d\d\.\d\d\.\d\d\.\d{4}\.dat(\.gz|\.bz2)?$")

PROVENANCE: dict[str, dict[str, str]] = {
    "disk": {
        **{f: f"oswiostat: iostat -xk {k}, last 1 s report" for k, f in IOSTAT.items()},
        "r_await": "oswiostat: iostat r_await, or the old await where the device read",
        "w_await": "oswiostat: iostat w_await, or the old await where the device wrote",
    },
    "cpu": {
        **{f: f"oswmpstat: mpstat -P ALL {k}, last 1 s report" for k, f in MPSTAT.items()},
        **{f: f"oswvmstat: vmstat {k}, last line (1 s)" for k, f in VMSTAT_CPU.items()},
        "load1": "oswtop: top load average (1 min)",
        "load5": "oswtop: top load average (5 min)",
        "load15": "oswtop: top load average (15 min)",
        "plist_sz": "oswtop: top Tasks total (processes; sar -q counts threads)",
        **{f: f"oswtop: top %Cpu(s) {k} where oswmpstat has none" for k, f in TOP_CPU.items()},
        "runq_sz": "oswvmstat: vmstat r, last line (1 s); where none, oswtop: top Tasks running",
    },
    "paging": {
        "pgpgin": "oswvmstat: vmstat bi (kB/s), last line",
        "pgpgout": "oswvmstat: vmstat bo (kB/s), last line",
        "pswpin": f"oswvmstat: vmstat si (kB/s) / {PAGE_KB:g} kB pages",
        "pswpout": f"oswvmstat: vmstat so (kB/s) / {PAGE_KB:g} kB pages",
        "swpused": "oswtop: top Swap used / total",
    },
    "netdev": {
        **{f: f"oswnetstat: netstat -i {k}, rate between snapshots" for k, f in NETSTAT_I.items()},
        **{
            f: f"oswnetstat: ip -s link {d} {k} (AHF releases), rate between snapshots"
            for (d, k), f in IP_S.items()
        },
        "rx_kb": "oswnetstat: ip -s link RX bytes / 1024 where collected (netstat -i has none)",
        "tx_kb": "oswnetstat: ip -s link TX bytes / 1024 where collected (netstat -i has none)",
    },
    "tcp": {f: f"oswnetstat: netstat -s {s}, rate between snapshots" for s, _, f in NETSTAT_S},
    "procs": {
        "pid": "oswps: ps PID",
        "state": "oswps: ps S",
        "wchan": "oswps: ps WCHAN (cut to 6 characters by ps)",
        "cpu": "not imported: ps %CPU is the lifetime average",
    },
    NOT_IMPORTED: {
        "iostat avg-cpu": "mpstat's per-CPU figures are taken instead",
        "vmstat us/sy/id/wa/st, memory": "mpstat's figures are taken; no live memory-kB field",
        "top process list": "no live field (the procs collector follows Oracle processes)",
        "oswmeminfo, oswslabinfo, oswprvtnet": "not read",
        "oswnetstat nstat (#kernel)": "not read: its counters are absolute with -a, else since "
        "nstat's last run, and the output does not say which",
    },
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """DIR, --host, --role, --tz."""
    parser.add_argument("archive", type=Path, metavar="DIR", help="OSWatcher archive directory")
    add_host_options(parser, "from the file names")
    parser.add_argument(
        "--tz",
        help="the host's time zone, e.g. Europe/Berlin (default: UTC/GMT stamps as such, "
        "other zone names in this machine's zone)",
    )


def read(args: argparse.Namespace) -> Imported:
    """The import with every frame held (``Imported.frames``): for callers that look at them."""
    imp = stream(args)
    for frame in imp.stream or ():
        imp.frames.setdefault(frame.host, []).append(frame)
    imp.stream = None
    return imp


def stream(args: argparse.Namespace) -> Imported:
    """Survey every tool's files (see ``snapshots``), then hand the frames on one snapshot at
    a time (``Imported.stream``), all hosts' in time order: the archive is written as it is
    read, in the memory of a few files whatever its size."""
    root = _root(args.archive)
    rd = Reading(_zone(args.tz), getattr(args, "deadline", None))
    hosts, unread = _streams(root)
    if args.host and len(hosts) > 1:
        raise UsageError(f"{root} holds several hosts ({', '.join(hosts)}); leave out --host")
    surveys = {h: snapshots.survey(streams, rd) for h, streams in hosts.items()}
    if unread:
        said = ", ".join(f"{d} ({n} file(s))" for d, n in sorted(unread.items()))
        rd.notes.append(f"{root}: not read: {said}; no live field takes their figures")
    rd.notes += _run_notes(root, rd)
    rd.notes += [
        f"{h}: one oswnetstat snapshot: its counters are totals since boot and a rate "
        "needs two, so no interface or TCP rows"
        for h, sv in surveys.items()
        if sv.netstat == 1
    ]
    steps = [later - t for sv in surveys.values() for t, later in itertools.pairwise(sv.starts)]
    b = Builder(statistics.median_high(steps) if steps else 30.0)  # as regrid.usual_step
    b.imp.notes.extend(rd.notes)
    again = Reading(rd.zone)  # the second pass notices nothing the first did not say
    gens = []
    for host, sv in surveys.items():
        name = args.host or host
        if sv.starts:  # the archive's columns, declared before its first row
            b.declare(name, sv.collectors)
        b.source(name, PROVENANCE)
        gens.append(snapshots.frames(b, name, args.role, hosts[host], sv, again))
    b.imp.stream = heapq.merge(*gens, key=lambda f: f.time)
    return b.imp


def _streams(root: Path) -> tuple[dict[str, list[Stream]], dict[str, int]]:
    """Each host's files, one stream per tool directory and tool, in the order the old
    whole-archive sort kept them; and the files of other tools (or other names) by
    directory."""
    hosts: dict[str, dict[tuple[str, str], Stream]] = {}
    unread: dict[str, int] = {}
    for path in sorted(root.glob("osw*/*")):
        m = FILE.match(path.name)
        parse = PARSERS.get(m.group("tool")) if m else None
        if m is None or parse is None:
            if path.is_file():
                unread[path.parent.name] = unread.get(path.parent.name, 0) + 1
            continue
        mine = hosts.setdefault(m.group("host"), {})
        mine.setdefault((path.parent.name, m.group("tool")), Stream(parse, [])).paths.append(path)
    if not hosts:
        raise UsageError(f"{root}: no OSWatcher files (osw*/<host>_<tool>_<yy.mm.dd.hhmm>.dat)")
    return {h: list(streams.values()) for h, streams in hosts.items()}, unread


def _run_notes(root: Path, rd: Reading) -> list[str]:
    """What the reading skipped or guessed: the since-boot reports, the damaged rows, the
    zones the dates name that were read in this machine's."""
    notes = []
    if rd.booted:
        notes.append(
            f"{rd.booted[0]}{_more(rd.booted)}: the first report of each continuous run "
            "skipped (averages since boot, not over the interval)"
        )
    if rd.damaged:
        n = sum(k for _, k in rd.damaged)
        notes.append(
            f"{rd.damaged[0][0]}{_more(rd.damaged)}: {n} damaged row(s) skipped (a row that "
            "does not fit its table); the rows around them kept"
        )
    local = set(time.tzname)
    odd = rd.abbrs - {"UTC", "GMT", "Z"} - local
    if odd and rd.zone is None:
        notes.append(
            f"{root}: dates in {', '.join(sorted(odd))} read in this machine's zone "
            f"({'/'.join(sorted(local))}); give --tz ZONE if the host's differs"
        )
    return notes


def _more(files: list) -> str:  # type: ignore[type-arg]
    return f" and {len(files) - 1} more file(s)" if len(files) > 1 else ""


def _root(path: Path) -> Path:
    """The directory holding the osw* folders: DIR itself, or DIR/archive (the oswbb home)."""
    if not path.is_dir():
        raise UsageError(f"{path}: not a directory")
    if not any(path.glob("osw*/")) and (path / "archive").is_dir():
        return path / "archive"
    return path


def _zone(name: str | None) -> ZoneInfo | None:
    if not name:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise UsageError(f"--tz {name}: unknown time zone; use e.g. UTC or Europe/Berlin") from None


TIME = re.compile(r"^(\d+-)?\d+:\d\d:\d\d$")


def _ps(lines: list[str], step: float | None = None) -> list[Block]:
    """The commit-path background processes of ``ps -aeo user,pid,...,wchan,s,start,time,cmd``,
    named as the procs collector names them (PNAME, or PNAME SID with several instances).
    It lives here rather than among the other tools' reports: this module is the one the
    import contracts let read the procs collector's pattern (``BACKGROUND``)."""
    heads = [i for i, ln in enumerate(lines) if ln.split()[:2] == ["USER", "PID"]]
    if not heads:
        return []
    cols = lines[heads[0]].split()
    if "WCHAN" not in cols or "S" not in cols:
        return []
    wchan_at, s_at = cols.index("WCHAN"), cols.index("S")
    found: dict[tuple[str, str], dict[str, Value]] = {}
    for ln in lines[heads[0] + 1 :]:
        parts = ln.split()
        name = _background(parts, s_at)
        if name is not None:
            wchan = parts[wchan_at]
            found[name] = {
                "pid": int(parts[1]),
                "state": parts[s_at],
                "wchan": None if wchan == "-" else wchan,
            }
    sids = {sid for _, sid in found}
    rows: Rows = {(p if len(sids) <= 1 else f"{p} {sid}"): r for (p, sid), r in found.items()}
    return [Block(0.0, "ps", {"procs": rows} if rows else {})]


def _background(parts: list[str], s_at: int) -> tuple[str, str] | None:
    """(PNAME, SID) of a ps line's background process, None for any other line.  START is one
    token (11:48:05, 2025) or two (Nov 20); TIME follows it, then the command."""
    if len(parts) <= s_at + 2:
        return None
    rest = parts[s_at + 1 :]
    at = next((i for i in (1, 2) if i < len(rest) and TIME.match(rest[i])), None)
    if at is None or at + 1 >= len(rest):
        return None
    m = BACKGROUND.match(rest[at + 1])
    return None if m is None else (m.group(1).upper(), m.group(2).upper())


PARSERS: dict[str, Parser] = {
    "iostat": iostat,
    "vmstat": vmstat,
    "mpstat": mpstat,
    "netstat": netstat,
    "top": top,
    "ps": _ps,
}
"""File-name tool -> block parser."""
