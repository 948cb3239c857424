"""Frames to chart series: both hosts' commit path, disks, DG sockets and CPU on one time axis.

The x axis is every tick time of either host in range; a host's series has null where it has no
sample, so a chart holds exactly the points the archive recorded.  Latency percentiles are the
bucket names Oracle uses (``sgmon.buckets``): the collector's own p99 where the archive has it,
else computed from the interval's histogram (an AWR import may carry only the buckets).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from sgmon import buckets, events
from sgmon.analysis.results import Budget
from sgmon.model import Frame, number
from sgmon.report.judged import Judged

WAIT_EVENTS = (
    events.LOG_FILE_SYNC,
    events.LOCAL_WRITE,
    *events.REMOTE_WRITES,
    *events.STANDBY_WRITES,
)
"""The commit path as it runs: the symptom, the local and remote legs, the standby's write."""
MAX_DEVICES = 3
MAX_SOCKETS = 4
BUDGET_PARTS = (
    ("log file sync", "lfs_ms"),
    ("local write", "local_write_ms"),
    ("remote write", "remote_write_ms"),
    ("standby I/O", "standby_io_ms"),
    ("network", "network_ms"),
    ("queued behind a write", "queue_ms"),
    ("LGWR overhead", "overhead_ms"),
)

Getter = Callable[[Frame], float | None]


def _round(v: float | None) -> float | None:
    """Four significant digits: the page stays small and nothing a chart shows is lost."""
    if v is None or not math.isfinite(v):
        return None
    return float(f"{v:.4g}")


class Axis:
    """The shared time axis: tick times of every host in range, and where each one falls."""

    def __init__(self, frames: Iterable[Frame]) -> None:
        self.times = sorted({f.time for f in frames})
        self.index = {t: i for i, t in enumerate(self.times)}

    def column(self, frames: Sequence[Frame], get: Getter) -> list[float | None]:
        """One value per axis tick: ``get(frame)`` at the host's ticks, null elsewhere."""
        out: list[float | None] = [None] * len(self.times)
        for f in frames:
            out[self.index[f.time]] = _round(get(f))
        return out


def _series(label: str, values: list[float | None], **style: Any) -> dict[str, Any] | None:
    return (
        {"label": label, "values": values, **style} if any(v is not None for v in values) else None
    )


def _chart(key: str, title: str, unit: str, series: Iterable[dict | None], **opts: Any) -> dict:
    return {"id": key, "title": title, "unit": unit, "series": [s for s in series if s], **opts}


def _field(collector: str, instance: str, name: str) -> Getter:
    return lambda f: number(f.value(collector, instance, name))


def p99(event: str) -> Getter:
    """The interval's p99 bucket of a wait event: the recorded one, else from its buckets."""

    def get(f: Frame) -> float | None:
        row = f.rows("oracle_waits").get(event, {})
        v = number(row.get("p99"))
        if v is None:
            hist = row.get("hist")
            v = buckets.percentile(hist, 0.99) if isinstance(hist, list) else None
        return v

    return get


def commit_charts(host: str, frames: Sequence[Frame], axis: Axis, budgets: list[Budget]) -> list:
    """Wait averages, their p99 buckets, and (on a primary) where log file sync went."""
    present = [e for e in WAIT_EVENTS if any(e in f.rows("oracle_waits") for f in frames)]
    avg = [_series(e, axis.column(frames, _field("oracle_waits", e, "avg"))) for e in present]
    pct = [_series(e, axis.column(frames, p99(e))) for e in present]
    charts = [
        _chart(f"{host}-waits-avg", "commit path: wait averages", "ms", avg),
        _chart(f"{host}-waits-p99", "commit path: p99 (bucket bound)", "ms", pct, log=True),
    ]
    mine = [b for b in budgets if b.host == host]
    if mine:
        cols = {b.time: b for b in mine}
        parts = []
        for label, attr in BUDGET_PARTS:
            values: list[float | None] = [None] * len(axis.times)
            for t, b in cols.items():
                if t in axis.index:
                    values[axis.index[t]] = _round(getattr(b, attr))
            parts.append(_series(label, values, dash=attr == "lfs_ms"))
        charts.append(
            _chart(f"{host}-budget", "commit budget: where log file sync went", "ms", parts)
        )
    return charts


def _mean(frames: Sequence[Frame], get: Getter) -> float:
    vals = [v for f in frames if (v := get(f)) is not None]
    return sum(vals) / len(vals) if vals else 0.0


def devices(frames: Sequence[Frame], pinned: Sequence[str]) -> list[str]:
    """The host's redo devices (from the config) that were recorded, then the busiest by mean
    %util, up to ``MAX_DEVICES``."""
    seen = {d for f in frames for d in f.rows("disk")}
    chosen = [d for d in pinned if d in seen]
    rest = sorted(seen - set(chosen), key=lambda d: -_mean(frames, _field("disk", d, "util")))
    return chosen + rest[: max(0, MAX_DEVICES - len(chosen))]


def disk_charts(host: str, frames: Sequence[Frame], axis: Axis, pinned: Sequence[str]) -> list:
    """iostat -x of the chosen devices: write await against svctm, queue depth, %util."""
    devs = devices(frames, pinned)

    def per_dev(name: str, **style: Any) -> list:
        suffix = f" {name}" if style else ""
        return [
            _series(d + suffix, axis.column(frames, _field("disk", d, name)), **style) for d in devs
        ]

    return [
        _chart(f"{host}-await", "disks: w_await, svctm (dashed)", "ms",
               [*per_dev("w_await"), *per_dev("svctm", dash=True)]),
        _chart(f"{host}-aqu", "disks: aqu-sz", "", per_dev("aqu_sz")),
        _chart(f"{host}-util", "disks: %util", "%", per_dev("util")),
    ]  # fmt: skip


def sockets(frames: Sequence[Frame]) -> list[str]:
    """The DG sockets recorded, most retransmits first, up to ``MAX_SOCKETS``."""
    seen = {s for f in frames for s in f.rows("tcp") if s != "host"}
    resent = {s: _mean(frames, _field("tcp", s, "retransmits")) for s in seen}
    count = {s: sum(1 for f in frames if s in f.rows("tcp")) for s in seen}
    return sorted(seen, key=lambda s: (-resent[s], -count[s], s))[:MAX_SOCKETS]


def socket_charts(host: str, frames: Sequence[Frame], axis: Axis) -> list:
    """ss -ti of the DG sockets: rtt and rto (right axis), and what was resent."""
    socks = sockets(frames)
    col = axis.column
    timing = [_series(f"{s} rtt", col(frames, _field("tcp", s, "rtt"))) for s in socks]
    timing += [_series(f"{s} rto", col(frames, _field("tcp", s, "rto")), y2=True) for s in socks]
    resent = [
        _series(f"{s} retransmits", col(frames, _field("tcp", s, "retransmits"))) for s in socks
    ]
    resent.append(_series("host RTO expiries /s", col(frames, _field("tcp", "host", "timeouts"))))
    return [
        _chart(f"{host}-rtt", "DG sockets: rtt, rto (right axis)", "ms", timing, y2="ms"),
        _chart(f"{host}-retrans", "DG sockets: retransmits per tick", "", resent),
    ]


def _busy(f: Frame) -> float | None:
    idle = number(f.value("cpu", "all", "idle"))
    return None if idle is None else 100.0 - idle


def cpu_charts(host: str, frames: Sequence[Frame], axis: Axis) -> list:
    """mpstat / sar -q of the whole host: busy and iowait, run queue and blocked."""
    col = axis.column
    return [
        _chart(f"{host}-cpu", "CPU: busy, iowait", "%", [
            _series("busy", col(frames, _busy)),
            _series("iowait", col(frames, _field("cpu", "all", "iowait"))),
        ]),
        _chart(f"{host}-runq", "CPU: run queue, blocked", "", [
            _series("runq-sz", col(frames, _field("cpu", "all", "runq_sz"))),
            _series("blocked", col(frames, _field("cpu", "all", "blocked"))),
        ]),
    ]  # fmt: skip


def report_data(judged: Judged, pinned: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """Everything the page draws, as JSON-ready data: the axis (offsets from ``t0``), the
    sections with each host's charts, and each host's findings as bands on the time axis."""
    axis = Axis(f for fl in judged.frames.values() for f in fl)
    t0 = axis.times[0] if axis.times else judged.start
    sections: list[dict[str, Any]] = []
    build = (
        ("Commit path", lambda h, fl: commit_charts(h, fl, axis, judged.budgets)),
        ("Disks", lambda h, fl: disk_charts(h, fl, axis, pinned.get(h, ()))),
        ("DG sockets", lambda h, fl: socket_charts(h, fl, axis)),
        ("CPU", lambda h, fl: cpu_charts(h, fl, axis)),
    )
    for title, make in build:
        charts = {
            h: [c for c in make(h, judged.frames.get(h, [])) if c["series"]]
            for h, _ in judged.hosts
        }
        sections.append({"title": title, "charts": charts})
    bands = {
        h: [
            [f.start - t0, (f.end or judged.end) - t0, f.severity]
            for f in judged.findings
            if f.host == h and f.severity in ("warn", "crit")
        ]
        for h, _ in judged.hosts
    }
    return {
        "t0": t0,
        "x": [round(t - t0, 3) for t in axis.times],
        "hosts": [{"name": h, "role": r} for h, r in judged.hosts],
        "sections": sections,
        "bands": bands,
    }
