"""`sgmon check --symmetry`: the primary beside each SYNC standby, item by item (issue 15).

Both root causes in the seeds were asymmetries between a primary and its SYNC standby: seed 003's
standby volume capped far below the primary's, seed 000's Table 8 standby redo logs with several
members on a slower disk group.  So this reads, once and changing nothing:

* the redo log layout (V$LOG, V$STANDBY_LOG, V$LOGFILE; seed 000): per thread, the online log
  groups + 1 standby redo log groups on both sides (the primary's serve after a role change), of
  the online log size, one member each; and the online logs themselves on both sides;
* DB_LOST_WRITE_PROTECT (V$PARAMETER; seed 003);
* the DG socket's buffers (the primary's send, the standby's receive) against 3 x BDP, from the
  measured RTT and the link speed, and the kernel's autotuning maxima (seed 000);
* the route's rto_min at both ends of the DG socket (seed 001);
* the redo device's write latency on both hosts (seed 000 Tables 8 and 9, seed 003).

The OS items come from the last ``WINDOW`` frames of each host (live, a recording or the
simulation), the database items from one session per database.  A verdict is ``ok``,
``differs`` (the sides differ, or one misses the seed's rule), ``missing`` (what the rule needs
is absent on a side: no SRLs for a thread) or ``unknown`` (a side could not be read, and the line
says why: a view, a privilege, a socket or a link speed not seen); ``exit_code`` is 1 when any
line differs or is missing, else 0.

The items are ``line``'s, the database ones ``db``'s, the OS ones ``hosts``'s; this module
pairs the hosts and reports.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass

from sgmon import topology
from sgmon.config import Config
from sgmon.model import Frame
from sgmon.symmetry.db import DbFacts, db_lines, read_configured, read_db, unreadable
from sgmon.symmetry.hosts import dg_sockets, os_lines
from sgmon.symmetry.line import Line
from sgmon.units import fmt_num
from sgmon.verdicts import source_title

__all__ = [
    "WINDOW",
    "DbFacts",
    "Line",
    "NoPair",
    "Pair",
    "Recent",
    "Result",
    "compare",
    "db_lines",
    "dg_sockets",
    "os_lines",
    "read_configured",
    "read_db",
    "report",
    "unreadable",
]

WINDOW = 10
"""Frames per host the OS items are averaged over (the last ten ticks)."""


class NoPair(Exception):
    """No primary, or no SYNC standby: nothing to compare (one line says which)."""


@dataclass(slots=True)
class Pair:
    """A primary (instance) and one SYNC standby, their DG socket ends and the lines."""

    primary: str
    standby: str
    sockets: tuple[str, str]
    lines: list[Line]


@dataclass(slots=True)
class Result:
    """Every pair compared, and the topology that named them."""

    pairs: list[Pair]
    topology: topology.Topology

    def counts(self) -> dict[str, int]:
        """Lines per verdict."""
        out = dict.fromkeys(("ok", "differs", "missing", "unknown"), 0)
        for p in self.pairs:
            for line in p.lines:
                out[line.verdict] += 1
        return out

    @property
    def exit_code(self) -> int:
        """1 when a line differs or is missing, else 0 (unknown lines do not count)."""
        c = self.counts()
        return 1 if c["differs"] or c["missing"] else 0

    def to_dict(self) -> dict[str, object]:
        """The JSON form."""
        return {
            "pairs": [
                {
                    "primary": p.primary,
                    "standby": p.standby,
                    "sockets": list(p.sockets),
                    "lines": [asdict(line) for line in p.lines],
                }
                for p in self.pairs
            ],
            "counts": self.counts(),
            "topology": self.topology.lines(),
            "exit": self.exit_code,
        }


class Recent:
    """The last ``size`` frames of each host."""

    def __init__(self, size: int = WINDOW) -> None:
        self.size = size
        self.frames: dict[str, deque[Frame]] = {}

    def add(self, frame: Frame) -> None:
        """Keep a frame (the oldest of its host drops out)."""
        self.frames.setdefault(frame.host, deque(maxlen=self.size)).append(frame)


def compare(
    config: Config, recent: Recent, dbs: Callable[[Sequence[str]], Mapping[str, DbFacts]]
) -> Result:
    """Every primary instance beside every SYNC standby of the topology the latest frames
    give; ``dbs`` reads the named hosts' databases (once)."""
    latest = {h: fs[-1] for h, fs in recent.frames.items() if fs}
    topo = topology.build(config, latest)
    if topo.primary is None:
        raise NoPair(f"no primary to compare: {topo.why}")
    standbys = topo.sync_standbys()
    if not standbys:
        raise NoPair(f"no SYNC standby on the commit path to compare: {topo.summary()}")
    facts = dbs([topo.primary, *standbys])
    pairs = []
    for s in standbys:
        for p in topo.primaries:
            if p not in recent.frames or s not in recent.frames:
                continue
            ends = (recent.frames[p], recent.frames[s])
            sockets, lines = os_lines(config, ends, alone=len(standbys) == 1)
            if p == topo.primary:
                lines = db_lines(facts[p], facts[s]) + lines
            pairs.append(Pair(p, s, (sockets[0] or "-", sockets[1] or "-"), lines))
    if not pairs:
        raise NoPair(f"no frames from {topo.primary} and {', '.join(standbys)} to compare")
    return Result(pairs, topo)


def report(result: Result, span: float, window: int) -> str:
    """The text form: per pair a header, the socket, one aligned line per item, then the counts
    and the exit status."""
    out = []
    for pair in result.pairs:
        out.append(
            f"sgmon check --symmetry: {pair.primary} (primary) against {pair.standby} (SYNC "
            f"standby), OS items over the last {window} frame(s) of {fmt_num(span)} s"
        )
        out.append(f"  DG socket: {pair.sockets[0]} (primary), {pair.sockets[1]} (standby)")
        cited = list(dict.fromkeys(x.seed for x in pair.lines))
        rows = [("item", "primary", "standby", "verdict", "source", "rule")]
        rows += [
            (x.item, x.primary, x.standby, x.verdict, f"[{cited.index(x.seed) + 1}]", x.rule)
            for x in pair.lines
        ]
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        for r in rows:
            cells = [c.ljust(w) for c, w in zip(r[:5], widths, strict=True)]
            out.append("  " + "  ".join([*cells, r[5]]).rstrip())
        out += [
            f"  [{i}] {'; '.join(source_title(k) for k in seed.split('/'))}"
            for i, seed in enumerate(cited, 1)
        ]
    c = result.counts()
    out.append(f"topology: {result.topology.summary()}")
    out.append(
        f"symmetry: {c['ok']} ok, {c['differs']} differ, {c['missing']} missing, "
        f"{c['unknown']} unknown: exit {result.exit_code}"
    )
    return "\n".join(out)
