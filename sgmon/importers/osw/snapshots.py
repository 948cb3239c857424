"""An OSWatcher host's reports as snapshots, read in two passes so that memory stays that of a
few files whatever the archive's size.

The first pass (``survey``) keeps of each report only its time, tool and the collectors it
fills: enough for what needs the whole archive (the usual step, the window that makes reports
of different tools one snapshot, the collectors the archive declares before its first row).
The second (``frames``) reads the files again and hands each snapshot's frame on as soon as it
is whole.  Each tool's files are read in time order and merged; a tool whose reports go back
in time (a clock set back) is held and sorted, as the whole archive once was.
"""

from __future__ import annotations

import heapq
import itertools
import statistics
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, Protocol, TypeVar

from sgmon.importers.frames import Builder
from sgmon.importers.osw.files import SAME_SNAPSHOT, Block, Parser, Reading, blocks
from sgmon.model import Event, Frame, Rows, Value
from sgmon.rates import counter_rate
from sgmon.readers.deadline import files_within
from sgmon.regrid import is_gap


class Stream(NamedTuple):
    """One tool's files of one host, in time order (their names'), and the tool's parser."""

    parse: Parser
    paths: list[Path]


class Seen(NamedTuple):
    """What the first pass keeps of a report."""

    t: float
    tool: str
    collectors: tuple[str, ...]
    counters: tuple[str, ...]
    """netstat's counter rows, which become rates on the tcp (``host``) and netdev rows."""


class _Timed(Protocol):
    @property
    def t(self) -> float: ...
    @property
    def tool(self) -> str: ...


T = TypeVar("T", bound=_Timed)


@dataclass
class Survey:
    """A host's reports as the first pass saw them."""

    starts: list[float] = field(default_factory=list)
    """Each snapshot's time."""
    near: float = SAME_SNAPSHOT
    """Reports of different tools this close to a snapshot's first are in it."""
    collectors: dict[str, None] = field(default_factory=dict)
    """The collectors the host's frames fill, in the order they first do."""
    unsorted: set[int] = field(default_factory=set)
    """The streams whose reports go back in time."""
    netstat: int = 0


def survey(streams: list[Stream], rd: Reading) -> Survey:
    """Read every stream once, keeping what ``Seen`` keeps, and learn the host's snapshots."""
    sv = Survey()
    seen: list[list[Seen]] = []
    for i, stream in enumerate(streams):
        kept = [_seen(blk) for blk in _blocks(stream, rd)]
        if any(b.t < a.t for a, b in itertools.pairwise(kept)):
            sv.unsorted.add(i)
            kept.sort(key=lambda s: s.t)
        seen.append(kept)
    order = list(heapq.merge(*seen, key=lambda s: s.t))
    sv.near = _near(order)
    sv.starts = [t for t, _ in grouped(order, sv.near)]
    prev: float | None = None
    for s in order:
        sv.collectors.update(dict.fromkeys(s.collectors))
        if s.tool == "netstat":
            sv.netstat += 1
            if prev is not None and s.t > prev:
                sv.collectors.update(dict.fromkeys(_rated(i) for i in s.counters))
            prev = s.t
    return sv


def frames(
    b: Builder, name: str, role: str, streams: list[Stream], sv: Survey, rd: Reading
) -> Iterator[Frame]:
    """The host's frames in time order, each built when its snapshot is whole; a gap between
    snapshots an event."""
    its: list[Iterable[Block]] = [
        sorted(_blocks(s, rd), key=lambda k: k.t) if i in sv.unsorted else _blocks(s, rd)
        for i, s in enumerate(streams)
    ]
    prev: float | None = None
    for t, blks in grouped(_with_rates(heapq.merge(*its, key=lambda k: k.t)), sv.near):
        dt = t - prev if prev is not None else b.imp.interval
        events = []
        if prev is not None and is_gap(dt, b.imp.interval, stamped_to=1.0):
            text = f"no OSWatcher snapshot for {dt:.0f} s"
            events.append(Event(prev, "osw", "gap", "", text))
        yield b.frame(name, role, t, dt, _merged(blks), events)
        prev = t


def grouped(items: Iterable[T], near: float) -> Iterator[tuple[float, list[T]]]:
    """Reports (in time order) grouped into snapshots: a report joins the snapshot begun
    within ``near`` seconds before it unless that snapshot has one of its tool already."""
    group: tuple[float, list[T]] | None = None
    for it in items:
        if group and it.t - group[0] <= near and all(b.tool != it.tool for b in group[1]):
            group[1].append(it)
            continue
        if group:
            yield group
        group = (it.t, [it])
    if group:
        yield group


def _near(order: list[Seen]) -> float:
    """Half the usual step between a tool's reports, at most ``SAME_SNAPSHOT``."""
    by_tool: dict[str, list[float]] = {}
    for s in order:
        by_tool.setdefault(s.tool, []).append(s.t)
    gaps = [b - a for ts in by_tool.values() for a, b in itertools.pairwise(ts) if b > a]
    return min(SAME_SNAPSHOT, statistics.median(gaps) / 2) if gaps else SAME_SNAPSHOT


def _blocks(stream: Stream, rd: Reading) -> Iterator[Block]:
    """The stream's reports, file after file, until the reading's deadline."""
    for path in files_within(rd.deadline, stream.paths, rd.notes):
        yield from blocks(path, stream.parse, rd)


def _seen(blk: Block) -> Seen:
    collectors = tuple(c for c, rows in blk.rows.items() if rows)
    return Seen(blk.t, blk.tool, collectors, tuple(blk.counters))


def _rated(inst: str) -> str:
    """The collector a netstat counter row's rates go to."""
    return "tcp" if inst == "host" else "netdev"


def _with_rates(blks: Iterable[Block]) -> Iterator[Block]:
    """netstat's counters (``blks`` in time order) as rates between consecutive netstat
    blocks on the netdev and tcp rows: a counter that went back, or a first block, gives
    none."""
    prev: Block | None = None
    for blk in blks:
        if blk.tool == "netstat":
            if prev is not None and blk.t > prev.t:
                dt = blk.t - prev.t
                for inst, cur in blk.counters.items():
                    before = prev.counters.get(inst, {})
                    rates: dict[str, Value] = {
                        f: counter_rate(before[f], v, dt) for f, v in cur.items() if f in before
                    }
                    blk.rows.setdefault(_rated(inst), {})[inst] = rates
            prev = blk
        yield blk


def _merged(blks: list[Block]) -> dict[str, Rows]:
    """A snapshot's rows: every tool's report merged, top's only where the others left a field
    without a value."""
    rows: dict[str, Rows] = {}
    for blk in sorted(blks, key=lambda k: k.tool != "top"):  # top only fills gaps
        for collector, inst_rows in blk.rows.items():
            for inst, row in inst_rows.items():
                mine = rows.setdefault(collector, {}).setdefault(inst, {})
                mine.update({k: v for k, v in row.items() if v is not None or k not in mine})
    return rows
