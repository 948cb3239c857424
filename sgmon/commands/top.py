"""`sgmon top`: a plain-text live view of this host, one compact block per tick.

No Textual, no rich: it prints lines, so it works in any terminal, in a pipe and over a slow
link, and shows the collectors at work before (and besides) the dashboard.  Each block: the CPU
totals and run queue, paging, the disks with the highest await, the busiest interfaces, and the
Data Guard sockets with their RTO and retransmits.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Callable, Sequence

from sgmon.contract import Ref, Row, RowKind
from sgmon.errors import UsageError
from sgmon.fields import CPU, DISK, NETDEV, PAGING, TCP
from sgmon.model import Frame, Rows, Status, Value
from sgmon.units import fmt_num, parse_duration

TOP_DISKS = 5
TOP_IFACES = 4
TOP_SOCKETS = 6

# (heading, field) per section: headings are the named tools' column names
Column = tuple[str, Ref]


def _own(ref: Ref) -> Column:
    """A column headed by the field's own name (the name the tool gives it, too)."""
    return ref.name, ref


CPU_COLS: tuple[Column, ...] = (
    ("%usr", CPU.usr),
    ("%sys", CPU.sys),
    ("%iowait", CPU.iowait),
    ("%soft", CPU.soft),
    ("%steal", CPU.steal),
    ("%idle", CPU.idle),
    ("ldavg-1", CPU.load1),
    ("runq-sz", CPU.runq_sz),
    _own(CPU.blocked),
    ("cswch/s", CPU.cswch),
)
PAGING_COLS: tuple[Column, ...] = (
    ("pgpgin/s", PAGING.pgpgin),
    ("pgpgout/s", PAGING.pgpgout),
    ("majflt/s", PAGING.majflt),
    ("pgscank/s", PAGING.pgscank),
    ("pgscand/s", PAGING.pgscand),
    ("pswpout/s", PAGING.pswpout),
    ("%memused", PAGING.memused),
)
PSI: tuple[Column, ...] = (
    ("cpu", PAGING.psi_cpu_some),  # the resource /proc/pressure names
    ("mem", PAGING.psi_mem_some),
    ("io", PAGING.psi_io_some),
)
DISK_COLS: tuple[Column, ...] = (
    ("r/s", DISK.r_s),
    ("w/s", DISK.w_s),
    ("rkB/s", DISK.rkb_s),
    ("wkB/s", DISK.wkb_s),
    _own(DISK.r_await),
    _own(DISK.w_await),
    ("aqu-sz", DISK.aqu_sz),
    ("%util", DISK.util),
    _own(DISK.svctm),
)
NET_COLS: tuple[Column, ...] = (
    ("rxkB/s", NETDEV.rx_kb),
    ("txkB/s", NETDEV.tx_kb),
    ("rxpck/s", NETDEV.rx_pkt),
    ("txpck/s", NETDEV.tx_pkt),
    ("rxdrop/s", NETDEV.rx_drop),
    ("txdrop/s", NETDEV.tx_drop),
    ("rxerr/s", NETDEV.rx_err),
    ("%ifutil", NETDEV.util),
)
TCP_COLS: tuple[Column, ...] = (
    _own(TCP.rto),
    _own(TCP.rtt),
    _own(TCP.cwnd),
    _own(TCP.unacked),
    _own(TCP.retrans),
    ("retx", TCP.retransmits),
    ("Send-Q", TCP.send_q),
)
TCP_HOST: tuple[Column, ...] = (
    ("retrans/s", TCP.retrans_segs),
    ("timeouts/s", TCP.timeouts),
    ("lostretrans/s", TCP.lost_retransmit),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Interval, count, collector choice and config file."""
    parser.add_argument("--interval", default="1s", help="seconds between blocks (0.1s to 60s)")
    parser.add_argument("--count", type=int, default=0, help="stop after N blocks (0: run on)")
    parser.add_argument(
        "--collectors",
        default="",
        help="comma-separated collectors to run (default: all enabled ones; see sgmon collectors)",
    )
    parser.add_argument("--config", help="sgmon.toml for collector options (disk include, ports)")


def run(args: argparse.Namespace) -> int:
    """Sample this host and print a block per tick until --count or Ctrl-C."""
    from sgmon.config import load_config
    from sgmon.engine import check_interval
    from sgmon.hosts.build import make_collectors
    from sgmon.hosts.local import LocalSource

    interval = check_interval(parse_duration(args.interval))
    if args.count < 0:
        raise UsageError("--count must be 0 (run on) or a positive number of blocks")
    config = load_config(args.config)
    collectors = make_collectors(config, None)
    if args.collectors:
        wanted = [n.strip() for n in args.collectors.split(",") if n.strip()]
        known = [c.name for c in collectors]
        unknown = [n for n in wanted if n not in known]
        if unknown:
            raise UsageError(
                f"unknown collector {', '.join(unknown)}; choose from {', '.join(known)}"
            )
        collectors = [c for c in collectors if c.name in wanted]
    source = LocalSource(collectors, interval)
    stop = threading.Event()
    printed = 0

    def emit(frame: Frame) -> None:
        nonlocal printed
        printed += 1
        sys.stdout.write(render(frame, printed) + "\n")
        sys.stdout.flush()
        if args.count and printed >= args.count:
            stop.set()

    try:
        source.run(emit, stop)
    finally:
        source.close()
    return 0


def render(frame: Frame, block: int) -> str:
    """Block number ``block`` of the run for one frame; collectors without a section here are
    left out."""
    out: list[str] = [_header(frame, block)]
    for name, section in SECTIONS.items():
        res = frame.collectors.get(name)
        if res is None:
            continue
        if res.status is not Status.OK:
            out.append(f"{name}: {res.status.value}" + (f" ({res.error})" if res.error else ""))
            continue
        out.extend(section(res.rows))
    return "\n".join(out)


def _header(frame: Frame, block: int) -> str:
    """Numbered by the blocks printed, so ``--count 3`` shows ticks 1 to 3: the engine's first
    sample only primes the rates and is never printed."""
    stamp = time.strftime("%H:%M:%S", time.localtime(frame.time))
    took = sum(r.duration_ms or 0 for r in frame.collectors.values())
    return f"--- {stamp} {frame.host}  tick {block}  {took:.1f} ms in collectors ---"


def _table(title: str, cols: tuple[Column, ...], rows: Sequence[tuple[str, Row]]) -> list[str]:
    """Columns as wide as their heading (at least 6), so a block fits 80 columns."""
    width = max([len(title), *(len(n) for n, _ in rows)])
    widths = [max(6, len(h)) for h, _ in cols]
    lines = [
        title.ljust(width) + "".join(f" {h:>{w}}" for (h, _), w in zip(cols, widths, strict=True))
    ]
    for name, row in rows:
        cells = (f" {_num(f.raw(row)):>{w}}" for (_, f), w in zip(cols, widths, strict=True))
        lines.append(name.ljust(width) + "".join(cells))
    return lines


def _pairs(cols: tuple[Column, ...], row: Row) -> str:
    """``heading value`` of each column on one line, two spaces apart."""
    return "  ".join(f"{h} {_num(f.raw(row))}" for h, f in cols)


def _num(v: Value) -> str:
    return fmt_num(v) if isinstance(v, int | float) or v is None else str(v)


def _key(v: Value) -> float:
    return float(v) if isinstance(v, int | float) else -1.0


def _whole(kind: RowKind, rows: Rows) -> list[tuple[str, Row]]:
    """The collector's whole-host row, as a table's one line (none when it is missing)."""
    return list(kind.of(rows).items())


def _cpu(rows: Rows) -> list[str]:
    return _table("CPU", CPU_COLS, _whole(CPU.Rows.all, rows))


def _paging(rows: Rows) -> list[str]:
    whole = _whole(PAGING.Rows.all, rows)
    if not whole:
        return []
    return [*_table("PAGING", PAGING_COLS, whole), f"PSI some avg10 %  {_pairs(PSI, whole[0][1])}"]


def _disk(rows: Rows) -> list[str]:
    def worst(item: tuple[str, Row]) -> float:
        row = item[1]
        return max(
            _key(DISK.r_await.raw(row)), _key(DISK.w_await.raw(row)), _key(DISK.util.raw(row)) / 100
        )

    ranked = sorted(rows.items(), key=worst, reverse=True)[:TOP_DISKS]
    return _table("DISK", DISK_COLS, ranked)


def _netdev(rows: Rows) -> list[str]:
    def busy(item: tuple[str, Row]) -> float:
        return _key(NETDEV.rx_kb.raw(item[1])) + _key(NETDEV.tx_kb.raw(item[1]))

    return _table("NET", NET_COLS, sorted(rows.items(), key=busy, reverse=True)[:TOP_IFACES])


def _tcp(rows: Rows) -> list[str]:
    socks = [(k, r) for k, r in rows.items() if not TCP.Rows.host.matches(k)]
    socks.sort(key=lambda item: _key(TCP.rto.raw(item[1])), reverse=True)
    lines = _table("DG SOCKET", TCP_COLS, socks[:TOP_SOCKETS])
    if not socks:
        lines.append("  (no socket on the Data Guard ports)")
    elif len(socks) > TOP_SOCKETS:
        lines.append(f"  ... {len(socks) - TOP_SOCKETS} more")
    host = rows.get(TCP.Rows.host.instance(None))
    if host:
        lines.append(f"TCP host  {_pairs(TCP_HOST, host)}")
    return lines


SECTIONS: dict[str, Callable[[Rows], list[str]]] = {
    CPU.name: _cpu,
    PAGING.name: _paging,
    DISK.name: _disk,
    NETDEV.name: _netdev,
    TCP.name: _tcp,
}
