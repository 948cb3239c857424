"""Frames to chart series: both hosts' commit path, disks, DG sockets, CPU and the commit path's
processes on one time axis.

The x axis is every tick time of either host in range.  A series has a value at the ticks its
collector recorded, so a chart holds exactly the points the archive has; between them the line
is joined (the other host's ticks, or a collector of another step on the same host: sar's 10
minutes beside AWR's 15), except across a gap, where the next sample comes more than
``regrid.GAP_STEPS`` of the series' usual step later (the recorder was down, a collector
failed), as the importers mark gaps: there the series carries an index in ``gaps`` and the page
breaks the line.  Latency percentiles are the bucket names Oracle uses (``sgmon.buckets``): the
collector's own p99 where the archive has it, else computed from the interval's histogram (an
AWR import may carry only the buckets).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from sgmon import buckets, events
from sgmon.fields import CPU, DISK, ORACLE_WAITS, PROCS, TCP
from sgmon.model import Frame
from sgmon.regrid import is_gap, usual_step
from sgmon.report.judged import Judged, within

if TYPE_CHECKING:
    from sgmon.contract import Num
    from sgmon.verdicts import Budget, Finding

WAIT_EVENTS = (
    events.LOG_FILE_SYNC,
    events.LOCAL_WRITE,
    *events.REMOTE_WRITES,
    *events.STANDBY_WRITES,
)
"""The commit path as it runs: the symptom, the local and remote legs, the standby's write."""
MAX_DEVICES = 3
MAX_SOCKETS = 4
MAX_PROCS = 5
BUDGET_PARTS = (
    ("log file sync", "lfs_ms"),
    ("local write", "local_write_ms"),
    ("remote write", "remote_write_ms"),
    ("standby I/O", "standby_io_ms"),
    ("network", "network_ms"),
    ("queued behind a write", "queue_ms"),
    ("LGWR overhead", "overhead_ms"),
)

ALL_CPUS = CPU.Rows.all.instance(None)
"""cpu's row of the whole host (mpstat's ``all``)."""
TCP_HOST = TCP.Rows.host.instance(None)
"""tcp's row of the host-wide counters (nstat's)."""

Getter = Callable[[Frame], float | None]
Placed = tuple[list[float | None], list[int]]
"""A series on the axis: a value or None per tick, and the ticks where its line breaks."""


def _round(v: float | None) -> float | None:
    """Four significant digits: the page stays small and nothing a chart shows is lost."""
    if v is None or not math.isfinite(v):
        return None
    return float(f"{v:.4g}")


class Axis:
    """The shared time axis: every host's tick times, plus one tick inside each gap of a host
    (where it should have sampled and did not), so that a break has a place on the axis."""

    def __init__(self, hosts: Iterable[Sequence[Frame]]) -> None:
        times: set[float] = set()
        for frames in hosts:
            ticks = sorted({f.time for f in frames})
            times.update(ticks)
            usual = usual_step(ticks)
            if usual:
                times.update(a + usual for a, b in pairwise(ticks) if is_gap(b - a, usual))
        self.times = sorted(times)
        self.index = {t: i for i, t in enumerate(self.times)}

    def place(self, samples: Iterable[tuple[float, float | None]]) -> Placed:
        """(time, value) samples on the axis, with the ticks where the line breaks."""
        known = [(t, r) for t, v in samples if (r := _round(v)) is not None and t in self.index]
        values: list[float | None] = [None] * len(self.times)
        for t, v in known:
            values[self.index[t]] = v
        usual = usual_step(t for t, _ in known)
        gaps = []
        for (a, _), (b, _) in pairwise(known):
            if is_gap(b - a, usual):
                i = bisect.bisect_right(self.times, a)
                if self.times[i] < b:
                    gaps.append(i)
        return values, gaps

    def column(self, frames: Sequence[Frame], get: Getter) -> Placed:
        """``get(frame)`` of a host's frames on the axis."""
        return self.place((f.time, get(f)) for f in frames)


def _series(label: str, placed: Placed, **style: Any) -> dict[str, Any] | None:
    values, gaps = placed
    if all(v is None for v in values):
        return None
    return {"label": label, "values": values, **({"gaps": gaps} if gaps else {}), **style}


def _chart(key: str, title: str, unit: str, series: Iterable[dict | None], **opts: Any) -> dict:
    return {"id": key, "title": title, "unit": unit, "series": [s for s in series if s], **opts}


def _field(ref: Num, instance: str) -> Getter:
    return lambda f: ref.at(f, instance)


def p99(event: str) -> Getter:
    """The interval's p99 bucket of a wait event: the recorded one, else from its buckets."""

    def get(f: Frame) -> float | None:
        row = ORACLE_WAITS.p99.row(f, event)
        v = ORACLE_WAITS.p99.of(row)
        if v is None:
            hist = ORACLE_WAITS.hist.raw(row)
            v = buckets.percentile(hist, 0.99) if isinstance(hist, list) else None
        return v

    return get


def commit_charts(host: str, frames: Sequence[Frame], axis: Axis, budgets: list[Budget]) -> list:
    """Wait averages, their p99 buckets, and (on a primary) where log file sync went."""
    present = [e for e in WAIT_EVENTS if any(e in f.rows(ORACLE_WAITS.name) for f in frames)]
    avg = [_series(e, axis.column(frames, _field(ORACLE_WAITS.avg, e))) for e in present]
    pct = [_series(e, axis.column(frames, p99(e))) for e in present]
    charts = [
        _chart(f"{host}-waits-avg", "commit path: wait averages", "ms", avg),
        _chart(f"{host}-waits-p99", "commit path: p99 (bucket bound)", "ms", pct, log=True),
    ]
    mine = [b for b in budgets if b.host == host]
    if mine:
        parts = []
        for label, attr in BUDGET_PARTS:
            placed = axis.place((b.time, getattr(b, attr)) for b in mine)
            parts.append(_series(label, placed, dash=attr == "lfs_ms"))
        title = "commit budget: where log file sync went"
        charts.append(_chart(f"{host}-budget", title, "ms", parts))
    return charts + heatmaps(host, frames, axis)


def heatmaps(host: str, frames: Sequence[Frame], axis: Axis) -> list:
    """Each interval's histogram of the dashboard's heatmap events as AWR's "% of waits"
    columns (``buckets.shares``), in whole percent: a 1 % tail in the 128-256 ms bucket stands
    out where an average and even a p99 line hide how often it happens."""
    charts = []
    for event in (*events.HEATMAP, events.LNS_SENDREQ):
        cells: list[list[int] | None] = [None] * len(axis.times)
        for f in frames:
            hist = ORACLE_WAITS.hist.raw_at(f, event)
            share = buckets.shares(hist) if isinstance(hist, list) else None
            if share is not None:
                cells[axis.index[f.time]] = [round(100 * x) for x in share]
        if any(c is not None for c in cells):
            key = f"{host}-heat-{event.replace(' ', '-').lower()}"
            title = f"{event}: % of waits per bucket"
            charts.append(_chart(key, title, "", [], heat=cells, rows=list(buckets.HEADERS)))
    return charts


def _mean(frames: Sequence[Frame], get: Getter) -> float:
    vals = [v for f in frames if (v := get(f)) is not None]
    return sum(vals) / len(vals) if vals else 0.0


def devices(frames: Sequence[Frame], pinned: Sequence[str]) -> list[str]:
    """The host's redo devices (from the config) that were recorded, then the busiest by mean
    %util, up to ``MAX_DEVICES``."""
    seen = {d for f in frames for d in f.rows(DISK.name)}
    chosen = [d for d in pinned if d in seen]
    rest = sorted(seen - set(chosen), key=lambda d: -_mean(frames, _field(DISK.util, d)))
    return chosen + rest[: max(0, MAX_DEVICES - len(chosen))]


def disk_charts(host: str, frames: Sequence[Frame], axis: Axis, pinned: Sequence[str]) -> list:
    """iostat -x of the chosen devices: write await against svctm, queue depth, %util; the
    configured redo devices are labelled so."""
    label = {d: f"{d} (redo)" if d in pinned else d for d in devices(frames, pinned)}

    def per_dev(ref: Num, **style: Any) -> list:
        suffix = f" {ref.name}" if style else ""
        return [
            _series(text + suffix, axis.column(frames, _field(ref, d)), **style)
            for d, text in label.items()
        ]

    return [
        _chart(f"{host}-await", "disks: w_await, svctm (dashed)", "ms",
               [*per_dev(DISK.w_await), *per_dev(DISK.svctm, dash=True)]),
        _chart(f"{host}-aqu", "disks: aqu-sz", "", per_dev(DISK.aqu_sz)),
        _chart(f"{host}-util", "disks: %util", "%", per_dev(DISK.util)),
    ]  # fmt: skip


def sockets(frames: Sequence[Frame]) -> list[str]:
    """The DG sockets recorded, most retransmits first, up to ``MAX_SOCKETS``."""
    seen = {s for f in frames for s in f.rows(TCP.name) if not TCP.Rows.host.matches(s)}
    resent = {s: _mean(frames, _field(TCP.retransmits, s)) for s in seen}
    count = {s: sum(1 for f in frames if s in f.rows(TCP.name)) for s in seen}
    return sorted(seen, key=lambda s: (-resent[s], -count[s], s))[:MAX_SOCKETS]


def socket_charts(host: str, frames: Sequence[Frame], axis: Axis) -> list:
    """ss -ti of the DG sockets: rtt and rto (right axis), and what was resent."""
    socks = sockets(frames)
    col = axis.column
    timing = [_series(f"{s} rtt", col(frames, _field(TCP.rtt, s))) for s in socks]
    timing += [_series(f"{s} rto", col(frames, _field(TCP.rto, s)), y2=True) for s in socks]
    resent = [_series(f"{s} retransmits", col(frames, _field(TCP.retransmits, s))) for s in socks]
    resent.append(_series("host RTO expiries /s", col(frames, _field(TCP.timeouts, TCP_HOST))))
    return [
        _chart(f"{host}-rtt", "DG sockets: rtt, rto (right axis)", "ms", timing, y2="ms"),
        _chart(f"{host}-retrans", "DG sockets: retransmits per tick", "", resent),
    ]


def process_charts(host: str, frames: Sequence[Frame], axis: Axis) -> list:
    """The commit path's Oracle processes the procs collector follows (LGWR, LGnn, NSSn ...;
    RFS, MRP0 ...): milliseconds per second each was runnable but not running (seed 000: LGWR
    waits for CPU) and waiting for I/O, the ``MAX_PROCS`` highest of each."""
    names = {p for f in frames for p in f.rows(PROCS.name)}

    def top(ref: Num) -> list:
        mean = {p: _mean(frames, _field(ref, p)) for p in names}
        worst = sorted(names, key=lambda p: (-mean[p], p))[:MAX_PROCS]
        return [_series(p, axis.column(frames, _field(ref, p))) for p in worst]

    return [
        _chart(f"{host}-procs-runq", "processes: run-queue delay", "ms/s", top(PROCS.runq)),
        _chart(f"{host}-procs-io", "processes: I/O wait", "ms/s", top(PROCS.io_delay)),
    ]


def _busy(f: Frame) -> float | None:
    idle = CPU.idle.at(f, ALL_CPUS)
    return None if idle is None else 100.0 - idle


def cpu_charts(host: str, frames: Sequence[Frame], axis: Axis) -> list:
    """mpstat / sar -q of the whole host: busy and iowait, run queue and blocked."""
    col = axis.column
    return [
        _chart(f"{host}-cpu", "CPU: busy, iowait", "%", [
            _series("busy", col(frames, _busy)),
            _series(CPU.iowait.name, col(frames, _field(CPU.iowait, ALL_CPUS))),
        ]),
        _chart(f"{host}-runq", "CPU: run queue, blocked", "", [
            _series("runq-sz", col(frames, _field(CPU.runq_sz, ALL_CPUS))),
            _series(CPU.blocked.name, col(frames, _field(CPU.blocked, ALL_CPUS))),
        ]),
    ]  # fmt: skip


def report_data(judged: Judged, pinned: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """Everything the page draws, as JSON-ready data: the axis (offsets from ``t0``), the
    sections with each host's charts, each host's findings as bands on the time axis, and the
    log switches of either host (seed 000: the standby's writes spike after each)."""
    axis = Axis(judged.frames.values())
    t0 = axis.times[0]  # the range holds a tick: the command refuses one that does not
    bands = {
        h: [band for f in judged.findings if f.host == h for band in _bands(f, t0, judged.end)]
        for h, _ in judged.hosts
    }
    return {
        "t0": t0,
        "step": judged.interval,
        "switches": _switches(judged, t0),
        "x": [round(t - t0, 3) for t in axis.times],
        "hosts": [{"name": h, "role": r} for h, r in judged.hosts],
        "sections": _sections(judged, axis, pinned),
        "bands": bands,
    }


def _sections(
    judged: Judged, axis: Axis, pinned: Mapping[str, Sequence[str]]
) -> list[dict[str, Any]]:
    """Each section's title and each host's charts in it (a chart with nothing to draw left
    out)."""
    build: tuple[tuple[str, Callable[[str, Sequence[Frame]], list]], ...] = (
        ("Commit path", lambda h, fl: commit_charts(h, fl, axis, judged.budgets)),
        ("Disks", lambda h, fl: disk_charts(h, fl, axis, pinned.get(h, ()))),
        ("DG sockets", lambda h, fl: socket_charts(h, fl, axis)),
        ("CPU", lambda h, fl: cpu_charts(h, fl, axis)),
        ("Processes", lambda h, fl: process_charts(h, fl, axis)),
    )
    sections: list[dict[str, Any]] = []
    for title, make in build:
        charts = {
            h: [c for c in make(h, judged.frames.get(h, [])) if c["series"] or c.get("heat")]
            for h, _ in judged.hosts
        }
        sections.append({"title": title, "charts": charts})
    return sections


def _switches(judged: Judged, t0: float) -> list[float]:
    """Either host's log switches in the range, as offsets from ``t0``, each once."""
    return sorted(
        {
            round(e.time - t0, 3)
            for fl in judged.frames.values()
            for f in fl
            for e in f.events
            if e.kind == "log_switch" and within(e.time, judged.start, judged.end)
        }
    )


def _bands(f: Finding, t0: float, end: float) -> list[list]:
    """A finding's shaded spans, one per step of its history at warn or crit: the healthy
    lead-in of a finding that began as info is not shaded as the warning it became."""
    steps = f.steps or ((f.start, f.severity),)
    ends = [t for t, _ in steps[1:]] + [f.end or end]
    return [
        [t - t0, e - t0, sev]
        for (t, sev), e in zip(steps, ends, strict=True)
        if sev in ("warn", "crit")
    ]
