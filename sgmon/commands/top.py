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
from collections.abc import Callable

from sgmon.errors import UsageError
from sgmon.model import Frame, Rows, Status, Value
from sgmon.units import fmt_num, parse_duration

TOP_DISKS = 5
TOP_IFACES = 4
TOP_SOCKETS = 6

# (heading, field) per section: headings are the named tools' column names
CPU_COLS = (
    ("%usr", "usr"),
    ("%sys", "sys"),
    ("%iowait", "iowait"),
    ("%soft", "soft"),
    ("%steal", "steal"),
    ("%idle", "idle"),
    ("ldavg-1", "load1"),
    ("runq-sz", "runq_sz"),
    ("blocked", "blocked"),
    ("cswch/s", "cswch"),
)
PAGING_COLS = (
    ("pgpgin/s", "pgpgin"),
    ("pgpgout/s", "pgpgout"),
    ("majflt/s", "majflt"),
    ("pgscank/s", "pgscank"),
    ("pgscand/s", "pgscand"),
    ("pswpout/s", "pswpout"),
    ("%memused", "memused"),
)
PSI = (("cpu", "psi_cpu_some"), ("mem", "psi_mem_some"), ("io", "psi_io_some"))
DISK_COLS = (
    ("r/s", "r_s"),
    ("w/s", "w_s"),
    ("rkB/s", "rkb_s"),
    ("wkB/s", "wkb_s"),
    ("r_await", "r_await"),
    ("w_await", "w_await"),
    ("aqu-sz", "aqu_sz"),
    ("%util", "util"),
    ("svctm", "svctm"),
)
NET_COLS = (
    ("rxkB/s", "rx_kb"),
    ("txkB/s", "tx_kb"),
    ("rxpck/s", "rx_pkt"),
    ("txpck/s", "tx_pkt"),
    ("rxdrop/s", "rx_drop"),
    ("txdrop/s", "tx_drop"),
    ("rxerr/s", "rx_err"),
    ("%ifutil", "util"),
)
TCP_COLS = (
    ("rto", "rto"),
    ("rtt", "rtt"),
    ("cwnd", "cwnd"),
    ("unacked", "unacked"),
    ("retrans", "retrans"),
    ("retx", "retransmits"),
    ("Send-Q", "send_q"),
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


def _table(
    title: str, cols: tuple[tuple[str, str], ...], rows: list[tuple[str, dict]]
) -> list[str]:
    """Columns as wide as their heading (at least 6), so a block fits 80 columns."""
    width = max([len(title), *(len(n) for n, _ in rows)])
    widths = [max(6, len(h)) for h, _ in cols]
    lines = [
        title.ljust(width) + "".join(f" {h:>{w}}" for (h, _), w in zip(cols, widths, strict=True))
    ]
    for name, row in rows:
        cells = (f" {_num(row.get(f)):>{w}}" for (_, f), w in zip(cols, widths, strict=True))
        lines.append(name.ljust(width) + "".join(cells))
    return lines


def _num(v: Value) -> str:
    return fmt_num(v) if isinstance(v, int | float) or v is None else str(v)


def _key(v: Value) -> float:
    return float(v) if isinstance(v, int | float) else -1.0


def _cpu(rows: Rows) -> list[str]:
    return _table("CPU", CPU_COLS, [("all", rows["all"])] if "all" in rows else [])


def _paging(rows: Rows) -> list[str]:
    row = rows.get("all")
    if row is None:
        return []
    psi = "  ".join(f"{name} {_num(row.get(f))}" for name, f in PSI)
    return [*_table("PAGING", PAGING_COLS, [("all", row)]), f"PSI some avg10 %  {psi}"]


def _disk(rows: Rows) -> list[str]:
    def worst(item: tuple[str, dict]) -> float:
        row = item[1]
        return max(_key(row.get("r_await")), _key(row.get("w_await")), _key(row.get("util")) / 100)

    ranked = sorted(rows.items(), key=worst, reverse=True)[:TOP_DISKS]
    return _table("DISK", DISK_COLS, ranked)


def _netdev(rows: Rows) -> list[str]:
    def busy(item: tuple[str, dict]) -> float:
        return _key(item[1].get("rx_kb")) + _key(item[1].get("tx_kb"))

    return _table("NET", NET_COLS, sorted(rows.items(), key=busy, reverse=True)[:TOP_IFACES])


def _tcp(rows: Rows) -> list[str]:
    socks = [(k, r) for k, r in rows.items() if k != "host"]
    socks.sort(key=lambda item: _key(item[1].get("rto")), reverse=True)
    lines = _table("DG SOCKET", TCP_COLS, socks[:TOP_SOCKETS])
    if not socks:
        lines.append("  (no socket on the Data Guard ports)")
    elif len(socks) > TOP_SOCKETS:
        lines.append(f"  ... {len(socks) - TOP_SOCKETS} more")
    host = rows.get("host")
    if host:
        lines.append(
            "TCP host  retrans/s "
            + _num(host.get("retrans_segs"))
            + "  timeouts/s "
            + _num(host.get("timeouts"))
            + "  lostretrans/s "
            + _num(host.get("lost_retransmit"))
        )
    return lines


SECTIONS: dict[str, Callable[[Rows], list[str]]] = {
    "cpu": _cpu,
    "paging": _paging,
    "disk": _disk,
    "netdev": _netdev,
    "tcp": _tcp,
}
