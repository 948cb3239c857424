"""One line per tick for `sgmon lab`: the commit path of the hosts and the top finding."""

from __future__ import annotations

import time

from sgmon.model import Frame, number
from sgmon.units import fmt_num


def _v(frame: Frame | None, collector: str, instance: str, field: str):
    return frame.value(collector, instance, field) if frame is not None else None


def _sockets(frame: Frame | None, field: str) -> list:
    if frame is None:
        return []
    return [r.get(field) for k, r in frame.rows("tcp").items() if k != "host"]


def _standby(label: str, frame: Frame | None) -> list[str]:
    """``| S rfs 0.8 await 1.2 aqu 0.1 util 3%``: a standby's write time and its log device."""
    dev = next(iter(frame.rows("disk").values()), {}) if frame is not None else {}
    return [
        f"| {label} rfs {fmt_num(_v(frame, 'oracle_waits', 'RFS write', 'avg'))}",
        f"await {fmt_num(number(dev.get('w_await')))} aqu {fmt_num(number(dev.get('aqu_sz')))}",
        f"util {fmt_num(number(dev.get('util')))}%",
    ]


def line(
    primary: Frame,
    standby: Frame | None,
    state,
    active: list[str],
    async_standby: Frame | None = None,
) -> str:
    """``12:00:01 [loss] P lfs 2.1/16ms srw 1.0 lfpw 0.6 rto 204 retx 3 | S rfs 0.8 await ...``;
    with an ASYNC standby, ``| A rfs ... lag 3s`` too."""
    w = "oracle_waits"
    rto = [x for x in _sockets(primary, "rto") if x is not None]
    retx = sum(x or 0 for x in _sockets(primary, "retransmits"))
    top = next((f for f in state.findings if f.active), None) if state is not None else None
    parts = [
        time.strftime("%H:%M:%S", time.localtime(primary.time)),
        f"[{','.join(active) or 'healthy'}]",
        (
            f"P lfs {fmt_num(_v(primary, w, 'log file sync', 'avg'))}"
            f"/{fmt_num(_v(primary, w, 'log file sync', 'p99'))}ms"
        ),
        f"srw {fmt_num(_v(primary, w, 'SYNC Remote Write', 'avg'))}",
        f"lfpw {fmt_num(_v(primary, w, 'log file parallel write', 'avg'))}",
        f"rto {fmt_num(max(rto) if rto else None)} retx {retx}",
        f"cpu {fmt_num(_v(primary, 'cpu', 'all', 'usr'))}%",
        *_standby("S", standby),
    ]
    if async_standby is not None:
        lag = number(_v(async_standby, "oracle_dg", "db", "transport_lag"))
        parts += [*_standby("A", async_standby), f"lag {fmt_num(lag)}s"]
    if top is not None:
        parts.append(f"| {top.severity} {top.host}: {top.title}")
    return " ".join(parts)
