"""What the dashboard costs and how fast it answers, beside the monitors a DBA already runs.

One run, several rounds.  In each round every contender runs live in its own 160x48 window of one
private tmux server, over the same window of time:

* ``sgmon demo`` (the simulated pair at real speed, 1 Hz, two hosts) and ``sgmon`` on this host
  with no config (the local collectors included);
* the peers: ``htop -d 10``, ``atop 1``, ``btop`` and ``glances -t 1`` (with
  ``--disable-check-update`` and its network-reaching plugins off), each where installed;
* ``bench/textual_floor.py``: Textual alone repainting as many lines of sgmon's layout per
  second from prebuilt strips, the framework's floor under sgmon's drawing.

Measured: CPU % of one core (user+system from /proc/PID/stat over the window, after a warm-up),
resident memory at the end, the first full frame after launch (sgmon: both panes showing wait
events), and for ``sgmon demo`` the key press to redraw (``p`` sent with tmux send-keys until the
header says PAUSED / LIVE).  The simulated pair, its analysis and the state file for
``sgmon status`` (which every sgmon process publishes) also run headless in this process over a
window of the same length, so the demo's drawing share is the difference.

Usage: python bench/tui_cost.py [--rounds 3] [--seconds 30] [--keys 20] [--glances PATH]
Peers: apt-get install htop atop btop; glances from PyPI in a separate venv (bench only).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from checkout import checkout_env
from peers import GLANCES_OFFLINE

TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
SOCKET = f"sgmon-bench-{os.getpid()}"
"""The tmux server's socket; each round gets its own (a new server must not meet the last one
still exiting on the same socket)."""
SIZE = ("160", "48")
CHANGED = 45
"""Lines the demo repaints per second at 160x48 (rto-stall, measured in process): the floor
app repaints as many."""


def tmux(*args: str) -> str:
    out = subprocess.run(["tmux", "-L", SOCKET, *args], capture_output=True, text=True, timeout=10)
    return out.stdout


def screen(win: str) -> str:
    return tmux("capture-pane", "-p", "-t", win)


def wait_for(win: str, check: Callable[[str], bool], timeout: float, step: float = 0.02):
    """Seconds until ``check(screen)`` holds, or None after ``timeout``."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if check(screen(win)):
            return time.monotonic() - t0
        time.sleep(step)
    return None


def cpu_seconds(pid: int) -> float:
    """User + system CPU of one process, seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def rss_mb(pid: int) -> float:
    return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE / 1e6


def pane_process(win: str, marker: bytes) -> int:
    """The contender's process: the pane's process or the first descendant naming ``marker``."""
    pid = int(tmux("display-message", "-p", "-t", win, "#{pane_pid}").strip())
    for _ in range(100):
        if marker in Path(f"/proc/{pid}/cmdline").read_bytes():
            return pid
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        if children:
            pid = int(children[0])
        time.sleep(0.05)
    raise RuntimeError(f"{marker!r} not found in tmux window {win}")


def both_panes(s: str) -> bool:
    return s.count("waits/s") >= 2 or ("PRIMARY" in s and "STANDBY" in s and "waits/s" in s)


@dataclass
class Contender:
    name: str
    command: str
    marker: bytes
    ready: Callable[[str], bool]
    cwd: str | None = None
    cpu: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)
    first: list[float] = field(default_factory=list)


def contenders(glances: str | None, home: str) -> list[Contender]:
    py = sys.executable
    out = [
        Contender(
            "sgmon demo (sim + analysis + drawing)",
            f"{py} -m sgmon demo --scenario rto-stall --onset 15s",
            b"sgmon",
            both_panes,
        ),
        Contender(
            "sgmon, this host, no config",
            f"{py} -m sgmon",
            b"sgmon",
            lambda s: "idle" in s and "DISKS" in s,
            home,
        ),
    ]
    if shutil.which("htop"):
        out.append(Contender("htop -d 10", "htop -d 10", b"htop", lambda s: "Load average" in s))
    if shutil.which("atop"):
        out.append(Contender("atop 1", "atop 1", b"atop", lambda s: "ATOP" in s))
    if shutil.which("btop"):
        out.append(Contender("btop", "btop", b"btop", lambda s: "cpu" in s.lower()))
    if glances:
        out.append(
            Contender(
                "glances -t 1",
                " ".join([glances, "-t", "1", *GLANCES_OFFLINE]),
                b"glances",
                lambda s: "CPU" in s and "MEM" in s,
            )
        )
    out.append(
        Contender(
            "Textual floor (sgmon's layout, prebuilt lines)",
            f"{py} {Path(__file__).with_name('textual_floor.py')} --changed {CHANGED}",
            b"textual_floor",
            lambda s: "floor" in s and "STANDBY" in s,
        )
    )
    return out


def headless_cpu(seconds: float) -> float:
    """CPU % of the simulated pair plus the analysis without any drawing: the demo's one Judge
    and the state file every sgmon process publishes for ``sgmon status`` (``record``, ``agent``
    and ``serve`` too), so that the difference is what drawing costs."""
    from sgmon.hosts.sim import SimSource
    from sgmon.judgement import judge_for
    from sgmon.monitor import Monitor
    from sgmon.sinks.statefile import StatePublisher

    source = SimSource("rto-stall", onset=15.0)
    with tempfile.TemporaryDirectory() as run:
        state = StatePublisher(Path(run))
        monitor = Monitor([source], [state], judge=judge_for(None, [source]))
        monitor.start()
        time.sleep(5.0)
        c0, t0 = time.process_time(), time.monotonic()
        time.sleep(seconds)
        used = time.process_time() - c0
        elapsed = time.monotonic() - t0
        monitor.stop()
        state.close()
    return used / elapsed * 100.0


def key_latencies(win: str, n: int) -> list[float]:
    """Milliseconds from a ``p`` to the header that answers it."""
    out = []
    for i in range(n):
        want = "PAUSED" if i % 2 == 0 else "LIVE"
        sent = time.monotonic()
        tmux("send-keys", "-t", win, "p")
        took = wait_for(win, lambda s, w=want: s.lstrip().startswith(w), 5.0, step=0.002)
        if took is not None:
            out.append((time.monotonic() - sent) * 1000.0)
        time.sleep(0.3)
    return out


def one_round(cs: list[Contender], seconds: float, keys: int, env: dict) -> list[float]:
    """Launch each contender alone (so its start is not contended), then measure all at once."""
    global SOCKET
    SOCKET = f"sgmon-bench-{os.getpid()}-{time.monotonic_ns()}"
    pids = []
    tmux("new-session", "-d", "-s", "idle", "-x", SIZE[0], "-y", SIZE[1], "sleep 3600")
    try:
        for i, c in enumerate(cs):
            win = f"c{i}"
            launched = time.monotonic()
            where = ["-c", c.cwd or os.getcwd(), "-t", "idle"]
            # a window gets the server's environment, not its client's: the changes go by -e
            changed = [f"{k}={v}" for k, v in env.items() if os.environ.get(k) != v]
            given = [a for kv in changed for a in ("-e", kv)]
            subprocess.run(
                ["tmux", "-L", SOCKET, "new-window", "-d", "-n", win, *given, *where, c.command],
                check=True,
            )
            target = f"idle:{win}"
            seen = wait_for(target, c.ready, 30.0)
            if seen is not None:
                c.first.append(time.monotonic() - launched)
            pids.append(pane_process(target, c.marker))
        time.sleep(5.0)  # warm-up: imports, first layouts, histories filling
        c0 = [cpu_seconds(p) for p in pids]
        t0 = time.monotonic()
        time.sleep(seconds)
        dt = time.monotonic() - t0
        for c, p, before in zip(cs, pids, c0, strict=True):
            c.cpu.append((cpu_seconds(p) - before) / dt * 100.0)
            c.rss.append(rss_mb(p))
        return key_latencies("idle:c0", keys)
    finally:
        tmux("kill-server")


def mmm(xs: list[float], fmt: str = "{:.2f}") -> str:
    if not xs:
        return "-"
    return " / ".join(fmt.format(v) for v in (min(xs), statistics.median(xs), max(xs)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=30.0, help="CPU window after warm-up")
    ap.add_argument("--keys", type=int, default=20, help="key presses to time per round")
    ap.add_argument("--glances", default=shutil.which("glances"), help="glances executable")
    args = ap.parse_args()

    env = checkout_env({**os.environ, "TERM": "xterm-256color"})
    with tempfile.TemporaryDirectory() as home:
        env["XDG_CONFIG_HOME"] = home  # `sgmon` alone: no config found, this host only
        cs = contenders(args.glances, home)
        keys: list[float] = []
        for _ in range(args.rounds):
            keys += one_round(cs, args.seconds, args.keys, env)
    sim = [headless_cpu(args.seconds) for _ in range(args.rounds)]

    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"## tui_cost {when}, {os.cpu_count()} cpus, {args.rounds} rounds")
    print(f"{SIZE[0]}x{SIZE[1]} tmux windows, all live at once; CPU window {args.seconds:.0f} s")
    print("after 5 s warm-up; min / median / max over rounds\n")
    print("| contender | CPU % of a core | RSS MB | first full frame s |")
    print("|---|---|---|---|")
    for c in cs:
        print(f"| {c.name} | {mmm(c.cpu)} | {mmm(c.rss, '{:.0f}')} | {mmm(c.first)} |")
    print(f"| sim + analysis + state file, headless (no drawing) | {mmm(sim)} | - | - |")
    demo = cs[0]
    drawing = [d - s for d, s in zip(demo.cpu, sim, strict=True)]
    print(f"| sgmon demo, drawing share (difference) | {mmm(drawing)} | - | - |")
    floor = next((c for c in cs if c.name.startswith("Textual floor")), None)
    if floor is not None and floor.cpu:
        own = [d - f for d, f in zip(drawing, floor.cpu, strict=True)]
        print(f"| sgmon's drawing above Textual's floor (difference) | {mmm(own)} | - | - |")

    byname = {c.name.split()[0]: statistics.median(c.cpu) for c in cs[2:] if c.cpu}
    if keys:
        keys.sort()
        p95 = keys[min(len(keys) - 1, int(0.95 * len(keys)))]
        med = statistics.median(keys)
        print(f"\nkey press to redraw, {len(keys)} presses: median {med:.0f} ms,")
        print(f"p95 {p95:.0f} ms, worst {keys[-1]:.0f} ms")
    print("\n| target | measured (median) | verdict |")
    print("|---|---|---|")

    def verdict(name: str, value: float | None, limit: float | None, unit: str = "") -> None:
        if value is None or limit is None:
            print(f"| {name} | - | not measured |")
            return
        ok = "met" if value <= limit else "**not met**"
        print(f"| {name} | {value:.2f}{unit} (limit {limit:.2f}{unit}) | {ok} |")

    draw = statistics.median(drawing)
    demo_cpu = statistics.median(demo.cpu)
    peers = byname.get("htop", 0) + byname.get("glances", 0) if "glances" in byname else None
    verdict("demo process <= htop -d 10 + glances -t 1 (issue 13)", demo_cpu, peers, " %")
    verdict("demo process < 3 % of a core (issue 13)", demo_cpu, 3.0, " %")
    verdict("drawing <= 1.5 % of a core (issue 18)", draw, 1.5, " %")
    atop = 2 * byname["atop"] if "atop" in byname else None
    verdict("drawing <= 2x atop (issue 18)", draw, atop, " %")
    verdict("local dashboard <= 2 % of a core (issue 18)", statistics.median(cs[1].cpu), 2.0, " %")
    verdict("demo RSS <= 40 MB (issue 18)", statistics.median(demo.rss), 40.0, " MB")
    if demo.first:
        first = statistics.median(demo.first)
        verdict("first full frame <= 1.5 s (issue 13)", first, 1.5, " s")
        verdict("first full frame <= 0.5 s (issue 18)", first, 0.5, " s")
    if keys:
        verdict("key press median <= 20 ms (issue 13)", statistics.median(keys), 20.0, " ms")
        verdict("key press worst <= 50 ms (issues 13, 18)", keys[-1], 50.0, " ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
