"""What watching a host costs that host: the pump sent over ssh, the installed agent, and sadc.

In ONE run, side by side over the same window, beside bench/overhead.py's socket farm (2,000
loopback sockets, of which ``--dg-connections`` connections are on the Data Guard port):

- the pump as it runs on a remote host: the system ``/usr/bin/python3 -I -c <bootstrap>`` fed
  sgmon/remote/pump.py and its request on stdin (the same bytes ``ssh`` carries), at 1 Hz;
- the installed agent, ``sgmon agent --interval 1`` (this checkout's interpreter);
- ``sadc 1 N`` (sar's collector with its default activities) and ``sadc -S XALL 1 N``.

CPU is each process's scheduler run time (/proc/PID/task/*/schedstat, ns) over the window after
``--warmup`` seconds, per tick; ssh and sshd are not counted for either sgmon side (the same
session carries both).  Bytes per tick are what each writes on its stdout, which is what ssh
carries (before ssh's own compression, off by default): the pump's zlib stream, and, for
reference, the same ticks inflated; the agent's NDJSON frames.

    .venv/bin/python bench/pump_cost.py [--samples 60] [--warmup 5] [--rounds 3]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from overhead import SADC, socket_farm, task_run

from sgmon.remote.mirror import BOOTSTRAP, request

DG_PORT = 46335


@dataclass
class Contender:
    """One process measured: its command, what it wrote, its CPU at the window's ends."""

    name: str
    argv: list[str]
    stdin: bytes | None = None
    proc: subprocess.Popen | None = None
    wrote: int = 0
    inflated: int = 0
    marks: list[tuple[float, int, int]] = field(default_factory=list)  # (cpu s, bytes, inflated)


def _count(c: Contender, framed: bool) -> None:
    """Read a contender's stdout to its end, counting bytes (and inflating the pump's ticks)."""
    out = c.proc.stdout if c.proc else None
    if out is None:
        return
    if not framed:
        for chunk in iter(lambda: out.read1(65536), b""):
            c.wrote += len(chunk)
        return
    inflate = zlib.decompressobj()
    while len(head := out.read(5)) == 5:
        kind, size = struct.unpack(">cI", head)
        payload = out.read(size)
        c.wrote += 5 + size
        if kind == b"T":
            c.inflated += len(inflate.decompress(payload))


def _ping(c: Contender, stop: threading.Event) -> None:
    """Keep the pump's consumer alive, as sgmon does (a ping every 5 s)."""
    while not stop.wait(5.0):
        with contextlib.suppress(OSError, ValueError):
            assert c.proc is not None and c.proc.stdin is not None
            c.proc.stdin.write(f"ping {time.time():.6f}\n".encode())
            c.proc.stdin.flush()


def one_round(samples: int, warmup: int, connections: int, tmp: Path) -> list[Contender]:
    """All contenders at once over one window."""
    cfg = tmp / "sgmon.toml"
    cfg.write_text(f"[dataguard]\nports = [{DG_PORT}]\n")
    total = warmup + samples + 5
    contenders = [
        Contender(
            "pump (python3 -I, on the host)",
            ["/usr/bin/python3", "-I", "-c", BOOTSTRAP],
            request(1.0, (DG_PORT,)),
        ),
        Contender(
            "installed agent (sgmon agent)",
            [sys.executable, "-m", "sgmon", "agent", "--interval", "1", "--config", str(cfg)],
        ),
        Contender("sadc 1", [SADC, "1", str(total), str(tmp / "sa-default")]),
        Contender("sadc -S XALL 1", [SADC, "-S", "XALL", "1", str(total), str(tmp / "sa-xall")]),
    ]
    stop = threading.Event()
    threads = []
    with socket_farm(DG_PORT, connections):
        try:
            for c in contenders:
                c.proc = subprocess.Popen(
                    c.argv,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                    env={**os.environ, "SGMON_RUNTIME_DIR": str(tmp)},
                )
                assert c.proc.stdin is not None
                if c.stdin is not None:
                    c.proc.stdin.write(c.stdin)
                    c.proc.stdin.flush()
                framed = c.name.startswith("pump")
                threads.append(threading.Thread(target=_count, args=(c, framed), daemon=True))
                if framed:
                    threads.append(threading.Thread(target=_ping, args=(c, stop), daemon=True))
            for t in threads:
                t.start()
            t0 = time.monotonic()
            for at in (warmup, warmup + samples):
                time.sleep(max(0.0, t0 + at - time.monotonic()))
                for c in contenders:
                    assert c.proc is not None
                    c.marks.append((task_run(c.proc.pid), c.wrote, c.inflated))
        finally:
            stop.set()
            for c in contenders:
                if c.proc is not None and c.proc.poll() is None:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(c.proc.pid, signal.SIGTERM)
                    c.proc.wait(10)
    return contenders


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--samples", type=int, default=60)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--dg-connections", type=int, default=8)
    a = p.parse_args()
    per: dict[str, list[tuple[float, float, float]]] = {}
    for r in range(a.rounds):
        with tempfile.TemporaryDirectory(prefix="sgmon-pumpcost-") as tmp:
            for c in one_round(a.samples, a.warmup, a.dg_connections, Path(tmp)):
                (c0, b0, i0), (c1, b1, i1) = c.marks
                ms = (c1 - c0) * 1000 / a.samples
                per.setdefault(c.name, []).append(
                    (ms, (b1 - b0) / a.samples, (i1 - i0) / a.samples)
                )
                print(f"round {r + 1}: {c.name}: {ms:.3f} ms CPU a tick", file=sys.stderr)
    print(
        f"\n{a.rounds} rounds x {a.samples} ticks at 1 Hz, {a.warmup} s warm-up, "
        f"2,000 loopback sockets, {a.dg_connections} DG connections\n"
    )
    print("| contender | CPU ms a tick, min / median / max | bytes a tick on the wire |")
    print("|---|---|---|")
    for name, rows in per.items():
        cpu = sorted(r[0] for r in rows)
        wire = statistics.median(r[1] for r in rows)
        raw = statistics.median(r[2] for r in rows)
        shown = f"{wire:,.0f}" + (f" ({raw:,.0f} inflated)" if raw else "") if wire else "(file)"
        print(f"| {name} | {cpu[0]:.3f} / {statistics.median(cpu):.3f} / {cpu[-1]:.3f} | {shown} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
