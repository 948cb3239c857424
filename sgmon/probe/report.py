"""The probe's figures and how they are printed: oratcptest-style text, CSV or JSON lines.

Latency percentiles come from every message's own latency, not from averages (seed 000,
Table 5).  The bandwidth-delay product uses the best interval's throughput as the bandwidth (so
run ``--mode async`` to learn the link's capacity) and the kernel's smoothed rtt.
"""

from __future__ import annotations

import csv
import json
import math
import sys
import time
from typing import IO, Any

from sgmon.probe.client import ClientOptions, Sample, Tally
from sgmon.units import bdp_bytes

MB = 1024 * 1024
TRANSPORT = {
    "async": "ASYNC (no acknowledgement)",
    "fastsync": "FASTSYNC (ack on receipt, SYNC NOAFFIRM)",
    "sync": "SYNC (ack after the server's synced write, SYNC AFFIRM)",
    "apply": "APPLY (ack after a second, dependent synced write: Rdb commit level)",
}
COLUMNS = (
    "time",
    "seconds",
    "throughput_mb_s",
    "messages_s",
    "lat_avg_ms",
    "lat_p50_ms",
    "lat_p99_ms",
    "lat_max_ms",
    "disk_write_ms",
    "apply_write_ms",
    "rtt_ms",
    "rttvar_ms",
    "rto_ms",
    "retransmits",
    "cwnd",
)


def percentile(values: list[float], q: float) -> float | None:
    """The q-quantile (nearest rank) of the measured latencies."""
    if not values:
        return None
    return values[max(0, math.ceil(q * len(values)) - 1)]


def figures(tally: Tally, seconds: float) -> dict[str, Any]:
    """Throughput, latency avg/p50/p99/max and the server's write times for one tally."""
    lat = sorted(tally.latencies)
    n = len(lat)
    return {
        "seconds": round(seconds, 3),
        "throughput_mb_s": tally.nbytes / MB / seconds if seconds > 0 else None,
        "messages_s": tally.messages / seconds if seconds > 0 else None,
        "lat_avg_ms": sum(lat) / n if n else None,
        "lat_p50_ms": percentile(lat, 0.50),
        "lat_p99_ms": percentile(lat, 0.99),
        "lat_max_ms": lat[-1] if n else None,
        "disk_write_ms": tally.write_ms / n if n else None,
        "apply_write_ms": tally.apply_ms / n if n else None,
    }


def interval_row(s: Sample) -> dict[str, Any]:
    """One interval: the application's figures and the kernel's view of the first socket."""
    row: dict[str, Any] = {"time": time.strftime("%H:%M:%S", time.localtime(s.end))}
    row.update(figures(s.tally, s.end - s.start))
    tcp = s.tcp or {}
    row.update(
        rtt_ms=tcp.get("rtt"),
        rttvar_ms=tcp.get("rttvar"),
        rto_ms=tcp.get("rto"),
        retransmits=s.retransmits,
        cwnd=tcp.get("cwnd"),
    )
    return row


def predictions(mode: str, lat: float | None, write: float | None, apply: float | None) -> dict:
    """Extra commit time each transport mode would add, from what this run measured (ms).

    The network's share is the latency minus the server's write times; SYNC adds the write,
    APPLY the second write too.  A mode whose part was not measured here is None.
    """
    out: dict[str, float | None] = {"async": 0.0, "fastsync": None, "sync": None, "apply": None}
    if mode == "async" or lat is None:
        return out
    w, a = write or 0.0, apply or 0.0
    net = max(0.0, lat - w - a)
    out["fastsync"] = net
    if mode in ("sync", "apply"):
        out["sync"] = net + w
    if mode == "apply":
        out["apply"] = net + w + a
    return out


def summary(
    opts: ClientOptions,
    total: Tally,
    rows: list[dict[str, Any]],
    seconds: float,
    server_bytes: int,
    sndbuf: int,
) -> dict[str, Any]:
    """The whole run: figures, TCP view, BDP, 3 x BDP and the per-mode predictions."""
    out: dict[str, Any] = {"time": "summary"}
    out.update(figures(total, seconds))
    if opts.mode == "async" and server_bytes and seconds > 0:
        out["throughput_mb_s"] = server_bytes / MB / seconds  # what arrived, not what was queued
    out.update(_tcp_view(rows))
    out.update(_bdp(rows, out["rtt_ms"]))
    out["socket_send_buffer"] = sndbuf
    out["predicted_ms"] = predictions(
        opts.mode, out["lat_avg_ms"], out["disk_write_ms"], out["apply_write_ms"]
    )
    return out


def _tcp_view(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The socket over the run: its mean RTT, its last RTO and window, its retransmissions."""
    rtts = [r["rtt_ms"] for r in rows if r.get("rtt_ms") is not None]
    return {
        "rtt_ms": sum(rtts) / len(rtts) if rtts else None,
        "rto_ms": rows[-1].get("rto_ms") if rows else None,
        "retransmits": sum(r.get("retransmits") or 0 for r in rows),
        "cwnd": rows[-1].get("cwnd") if rows else None,
    }


def _bdp(rows: list[dict[str, Any]], rtt_ms: float | None) -> dict[str, Any]:
    """The peak interval's bandwidth, its bandwidth-delay product at the mean RTT, and three
    times it (the socket buffer that keeps the link full)."""
    peak = max((r["throughput_mb_s"] or 0.0 for r in rows), default=0.0) * MB
    bdp = bdp_bytes(peak, rtt_ms) if rtt_ms is not None else None
    return {
        "bandwidth_mb_s": peak / MB,
        "bdp_bytes": round(bdp) if bdp is not None else None,
        "buffer_3bdp_bytes": round(3 * bdp) if bdp is not None else None,
    }


def _ms(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


class Reporter:
    """Prints the header, each interval and the summary in one of three formats."""

    def __init__(self, fmt: str, opts: ClientOptions, out: IO[str] | None = None) -> None:
        self.fmt = fmt
        self.opts = opts
        self.out = out or sys.stdout
        self.rows: list[dict[str, Any]] = []
        self._csv = csv.DictWriter(self.out, fieldnames=COLUMNS, extrasaction="ignore")

    def _print(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def header(self) -> None:
        """oratcptest's "[Requesting a test]" block, or the CSV header."""
        o = self.opts
        if self.fmt == "csv":
            self._csv.writeheader()
            return
        if self.fmt != "text":
            return
        rate = f"{o.rate / MB:.3f} Mbytes/s" if o.rate else "NO"
        lines = [
            ("Message payload", f"{o.length / 1024:g} kbytes"),
            ("Transport mode", TRANSPORT[o.mode]),
            ("Number of connections", str(o.connections)),
            ("Socket send buffer", f"{o.sndbuf} bytes" if o.sndbuf else "(system default)"),
            ("Socket receive buffer", f"{o.rcvbuf} bytes" if o.rcvbuf else "(system default)"),
            ("Rate limit", rate),
            ("Statistics interval", f"{o.interval:g} seconds"),
            ("Test duration", f"{o.duration:g} seconds"),
        ]
        self._print("[Requesting a test]")
        for k, v in lines:
            self._print(f"        {k:<22} = {v}")
        self._print("        (1 Mbyte = 1024x1024 bytes)")
        self._print()

    def ready(self) -> None:
        """The server accepted the test."""
        if self.fmt == "text":
            self._print(f"({time.strftime('%H:%M:%S')}) The server is ready.")
            self._print(
                f"{'':11}{'Throughput':>19} {'Latency':>11} {'p50':>8} {'p99':>8} {'max':>9}"
                f" {'disk-write':>10}  {'rtt':>7} {'rto':>5} {'retx':>5} {'cwnd':>5}"
            )

    def interval(self, sample: Sample) -> None:
        """One line (or row) per interval."""
        row = interval_row(sample)
        self.rows.append(row)
        if self.fmt == "csv":
            self._csv.writerow(row)
            self.out.flush()
        elif self.fmt == "json":
            self._print(json.dumps({"type": "interval", **row}))
        else:
            self._print(
                f"({row['time']}) {row['throughput_mb_s']:10.3f} Mbytes/s"
                f" {_ms(row['lat_avg_ms']):>8} ms {_ms(row['lat_p50_ms']):>8}"
                f" {_ms(row['lat_p99_ms']):>8} {_ms(row['lat_max_ms']):>9}"
                f" {_ms(row['disk_write_ms']):>10}  {_ms(row['rtt_ms']):>7}"
                f" {row['rto_ms'] or 0:5.0f} {row['retransmits']:5d} {row['cwnd'] or 0:5d}"
            )

    def finish(self, summ: dict[str, Any]) -> None:
        """The summary block (text), a last CSV row, or a JSON summary object."""
        if self.fmt == "csv":
            self._csv.writerow(summ)
            return
        if self.fmt == "json":
            self._print(json.dumps({"type": "summary", **summ}))
            return
        s = summ
        pred = s["predicted_ms"]
        lines = [
            ("Socket send buffer", f"{s['socket_send_buffer']} bytes"),
            ("Avg. throughput", f"{s['throughput_mb_s'] or 0:.3f} Mbytes/s"),
        ]
        if s["lat_avg_ms"] is not None:
            disk = ""
            if s["disk_write_ms"]:
                disk = f" (disk-write {_ms(s['disk_write_ms'])} ms"
                disk += (
                    f", apply-write {_ms(s['apply_write_ms'])} ms)" if s["apply_write_ms"] else ")"
                )
            lines += [
                ("Avg. latency", f"{_ms(s['lat_avg_ms'])} ms{disk}"),
                (
                    "p50 / p99 / max",
                    f"{_ms(s['lat_p50_ms'])} / {_ms(s['lat_p99_ms'])} / {_ms(s['lat_max_ms'])} ms",
                ),
            ]
        lines += [
            (
                "TCP (kernel's view)",
                (
                    f"rtt {_ms(s['rtt_ms'])} ms, rto {s['rto_ms'] or 0:.0f} ms, "
                    f"retransmits {s['retransmits']}, cwnd {s['cwnd']}"
                ),
            ),
            (
                "Bandwidth-delay prod.",
                f"{s['bdp_bytes']} bytes ({s['bandwidth_mb_s']:.3f} Mbytes/s x rtt)"
                if s["bdp_bytes"] is not None
                else "-",
            ),
            ("3 x BDP buffer size", f"{s['buffer_3bdp_bytes']} bytes (MAA: socket buffers)"),
            (
                "Extra commit time",
                ", ".join(f"{m.upper()} {_ms(v)} ms" for m, v in pred.items() if v is not None)
                + (" (others: run that mode)" if None in pred.values() else ""),
            ),
        ]
        self._print(f"({time.strftime('%H:%M:%S')}) Test finished.")
        for k, v in lines:
            self._print(f"{k:>30} = {v}")
