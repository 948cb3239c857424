"""`disk`: per block device, the extended statistics of iostat -x.

Instances: device names (whole disks, dm, md, and loop devices with I/O; partitions only when
``partitions = true``), filtered by ``include``/``exclude`` globs.  Read from /proc/diskstats,
whose ms fields are 32-bit and wrap (deltas are taken mod 2**32).  ``svctm`` is computed as
sysstat did before 12.1.2 (%util / IOPS), because DBAs read "await >> svctm" as queueing.

Formulas are sysstat's (iostat.c, rd_stats.c): per-second values over the real elapsed time,
r_await = delta read ms / delta reads, aqu-sz = delta field 11 / elapsed ms, %util = delta
field 10 / elapsed ms.  An average over no requests (await, req-sz and svctm of an idle device)
is None, not 0.  A device seen for the first time, or whose I/O counters went backwards (it was
removed and re-created), gives no values for that interval.  Devices that never did any I/O are
left out (as iostat does) unless ``include`` or the host's ``pinned`` devices name them.  A
partition is known by its /sys/class/block/NAME/partition file; both paths are taken under the
``root`` option.
"""

from __future__ import annotations

import fnmatch
import functools
import os
from collections.abc import Mapping
from typing import ClassVar

from sgmon.collector import Collector, ConfigError, RawRows, Unavailable
from sgmon.config import rules
from sgmon.config.rules import Rule
from sgmon.contract import RowKind
from sgmon.model import Field, Kind, Rows, Value
from sgmon.rates import counter_delta
from sgmon.readers.procfile import ProcFile

G = Kind.GAUGE

FIELDS = (
    Field("r_s", "/s", G, "reads completed per second (iostat r/s)"),
    Field("w_s", "/s", G, "writes completed per second (iostat w/s)"),
    Field("rkb_s", "kB/s", G, "kB read per second (iostat rkB/s)"),
    Field("wkb_s", "kB/s", G, "kB written per second (iostat wkB/s)"),
    Field("rrqm_s", "/s", G, "read requests merged per second (iostat rrqm/s)", export=False),
    Field("wrqm_s", "/s", G, "write requests merged per second (iostat wrqm/s)", export=False),
    Field(
        "r_await",
        "ms",
        G,
        "average read time incl. queueing (iostat r_await)",
        # w_await's limits: seed 003's capped redo volume queued its lost-write-protect reads
        # with the SRL writes, and one latency on one device is drawn in one colour
        warn=10,
        crit=50,
        combine="per:r_s",
    ),
    Field(
        "w_await",
        "ms",
        G,
        "average write time incl. queueing (iostat w_await)",
        warn=10,
        crit=50,
        combine="per:w_s",
    ),
    Field("aqu_sz", "", G, "average request queue length (iostat aqu-sz)", warn=1, crit=8),
    Field("rareq_sz", "kB", G, "average read size (iostat rareq-sz)", combine="per:r_s"),
    Field("wareq_sz", "kB", G, "average write size (iostat wareq-sz)", combine="per:w_s"),
    Field("util", "%", G, "time the device had I/O in flight (iostat %util)", warn=90, crit=99),
    Field(
        "svctm",
        "ms",
        G,
        "average service time, %util / IOPS (iostat svctm before 12.1.2)",
        combine="per:r_s+w_s",
    ),
)


# /proc/diskstats columns after major, minor, name (Documentation/admin-guide/iostats.rst)
_COLUMNS = (
    "rd_ios", "rd_merges", "rd_sec", "rd_ticks",
    "wr_ios", "wr_merges", "wr_sec", "wr_ticks",
    "in_flight", "io_ticks", "rq_ticks",
    "dc_ios", "dc_merges", "dc_sec", "dc_ticks",
    "fl_ios", "fl_ticks",
)  # fmt: skip
_MS32 = ("rd_ticks", "wr_ticks", "io_ticks", "rq_ticks")  # unsigned int ms: wrap at 2**32
_COUNTERS = ("rd_ios", "rd_merges", "rd_sec", "wr_ios", "wr_merges", "wr_sec", "dc_ios")


_IOS_AT = tuple(3 + _COLUMNS.index(c) for c in ("rd_ios", "wr_ios", "dc_ios", "fl_ios"))
"""Where a /proc/diskstats line's request counts are (discards from 4.18, flushes from 5.5)."""


def parse_diskstats(text: str) -> Rows:
    """/proc/diskstats -> {device: {column: int}} for every line."""
    rows: Rows = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 14:
            rows[parts[2]] = _row(parts)
    return rows


def _row(parts: list[str]) -> dict[str, Value]:
    """A split /proc/diskstats line's counters by column name."""
    return dict(zip(_COLUMNS, map(int, parts[3:]), strict=False))


def iostat_row(prev: Mapping[str, Value], cur: Mapping[str, Value], dt: float) -> dict[str, Value]:
    """iostat -x figures for one device over ``dt`` seconds, from two raw diskstats rows."""
    d: dict[str, float] = {}
    for k in _COUNTERS:  # a column this kernel does not print counts 0 (discards before 4.18)
        v = counter_delta(prev.get(k, 0), cur.get(k, 0))  # type: ignore[arg-type]
        if v is None:  # device re-created: counters restarted
            return dict.fromkeys(f.name for f in FIELDS)
        d[k] = v
    for k in _MS32:
        d[k] = counter_delta(prev.get(k), cur.get(k), 32) or 0  # type: ignore[arg-type]
    ms = dt * 1000.0
    rd, wr = d["rd_ios"], d["wr_ios"]
    ios = rd + wr + d["dc_ios"]
    util = min(100.0, 100.0 * d["io_ticks"] / ms)
    return {
        "r_s": rd / dt,
        "w_s": wr / dt,
        "rkb_s": d["rd_sec"] / 2 / dt,
        "wkb_s": d["wr_sec"] / 2 / dt,
        "rrqm_s": d["rd_merges"] / dt,
        "wrqm_s": d["wr_merges"] / dt,
        "r_await": d["rd_ticks"] / rd if rd else None,
        "w_await": d["wr_ticks"] / wr if wr else None,
        "aqu_sz": d["rq_ticks"] / ms,
        "rareq_sz": d["rd_sec"] / 2 / rd if rd else None,
        "wareq_sz": d["wr_sec"] / 2 / wr if wr else None,
        "util": util,
        "svctm": d["io_ticks"] / ios if ios else None,
    }


def _as_list(value: object, what: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ConfigError(f'collectors.disk.{what}: use a list of device names or globs, e.g. ["sd*"]')


class DiskCollector(Collector):
    """iostat -x figures from /proc/diskstats."""

    name = "disk"
    rows = (RowKind("device", label="device"),)
    description = "block device latency, queue and utilisation (iostat -x)"
    option_rules: ClassVar[Mapping[str, Rule]] = {
        "include": rules.texts,
        "exclude": rules.texts,
        "pinned": rules.texts,
        "partitions": rules.boolean,
    }
    fields = FIELDS
    remote_files: ClassVar[Mapping[str, str]] = {
        "/proc/diskstats": "tick",
        "/sys/class/block/*/partition": "slow",  # which devices are partitions
    }

    def __init__(self, options: Mapping[str, object] | None = None) -> None:
        """Check the options against the devices this host has (one line if one is unknown)."""
        super().__init__(options)
        self.include = _as_list(self.options.get("include"), "include")
        self.exclude = _as_list(self.options.get("exclude"), "exclude")
        self.pinned = _as_list(self.options.get("pinned"), "pinned")
        partitions = self.options.get("partitions", False)
        if not isinstance(partitions, bool):
            raise ConfigError("collectors.disk.partitions: use true or false")
        self.partitions = partitions
        self._verdict = functools.lru_cache(maxsize=4096)(self._name_verdict)
        """_name_verdict, remembered per device (names come and go: dm-N, loopN)."""
        self._file: ProcFile | None = None
        self._lines: dict[str, tuple[str, dict[str, Value] | None]] = {}
        """The last sample's /proc/diskstats lines -> (device, its raw row, None if not
        shown): a line that comes back unchanged is not split, judged or converted again, and
        its row is the same object, which the engine reads as "no counter moved" (derive_moved)."""
        self._diskstats = self.path("/proc/diskstats")
        self._blocks = self.path("/sys/class/block")
        try:
            with open(self._diskstats) as f:
                known = parse_diskstats(f.read())
        except OSError:
            return  # open() reports it as Unavailable
        where = (
            f"on {self.options['host']}" if self.root != "/" and "host" in self.options else "here"
        )
        for name in (*self.include, *self.pinned):
            if not any(c in name for c in "*?[") and name not in known:
                raise ConfigError(
                    f"disk: no block device {name!r} {where}; devices: {', '.join(sorted(known))}"
                )

    def open(self) -> None:
        """Keep /proc/diskstats open."""
        try:
            self._file = ProcFile(self._diskstats)
        except OSError as e:
            raise Unavailable(f"cannot read {self._diskstats}: {e.strerror}") from None

    def wanted(self, name: str, columns: list[str]) -> bool:
        """Whether a device is shown: pinned or included by name, else by kind and activity
        (``columns``: its /proc/diskstats line, split)."""
        by_name = self._verdict(name)
        if by_name is not None:
            return bool(by_name)
        return any(i < len(columns) and columns[i] != "0" for i in _IOS_AT)

    def _name_verdict(self, name: str) -> bool | None:
        """True (shown) or False (not) by name alone; None when its activity decides."""
        if name in self.pinned:
            return True
        if self.include and not any(fnmatch.fnmatchcase(name, p) for p in self.include):
            return False
        if any(fnmatch.fnmatchcase(name, p) for p in self.exclude):
            return False
        if name in self.include:
            return True
        if not self.partitions and os.path.exists(
            os.path.join(self._blocks, name.replace("/", "!"), "partition")
        ):
            return False
        return None

    def sample(self) -> Rows:
        """One read of /proc/diskstats, the rows of the devices shown; a device whose line did
        not change since the last sample keeps its row object (idle devices cost one lookup)."""
        assert self._file is not None
        seen, lines = self._lines, {}
        rows: Rows = {}
        for line in self._file.read().splitlines():
            hit = seen.get(line)
            if hit is None:
                parts = line.split()
                if len(parts) < 14:
                    continue
                hit = (parts[2], _row(parts) if self.wanted(parts[2], parts) else None)
            lines[line] = hit
            if hit[1] is not None:
                rows[hit[0]] = hit[1]
        self._lines = lines
        return rows

    def derive(self, prev: RawRows | None, cur: RawRows, dt: float) -> Rows:
        """iostat -x per device; None for a device new since the previous sample."""
        out: Rows = {}
        for name, raw in cur.items():
            before = prev.get(name) if prev else None
            if before is None or dt <= 0:
                out[name] = dict.fromkeys(f.name for f in FIELDS)
            else:
                out[name] = iostat_row(before, raw, dt)
        return out

    def close(self) -> None:
        """Close the file."""
        if self._file is not None:
            self._file.close()
            self._file = None
