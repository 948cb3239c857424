"""What the dashboard costs and how fast it answers, measured on the real app in a real tmux.

Three numbers against the issue's targets:

* CPU % of one core at 1 Hz for two hosts: ``sgmon demo`` (the simulated pair at real speed) in
  a 160x48 tmux pane, user+system from /proc/PID/stat over a window after a warm-up.  The same
  simulated pair and analysis run headless in this process over the same window, so the
  dashboard's own share (drawing, layout, terminal output) is the difference.
* First frame: launch to the first screen that shows wait-event numbers (tmux polled every 20 ms).
* Key press: `p` sent with tmux send-keys until the header changes (PAUSED / LIVE), repeated.

Usage: python bench/tui_cost.py [--seconds 30] [--keys 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")
SOCKET = f"sgmon-bench-{os.getpid()}"


def tmux(*args: str) -> str:
    out = subprocess.run(["tmux", "-L", SOCKET, *args], capture_output=True, text=True, timeout=10)
    return out.stdout


def screen() -> str:
    return tmux("capture-pane", "-p", "-t", "bench")


def wait_for(check, timeout: float, step: float = 0.02) -> float | None:
    """Seconds until ``check(screen)`` holds, or None after ``timeout``."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if check(screen()):
            return time.monotonic() - t0
        time.sleep(step)
    return None


def cpu_seconds(pid: int) -> float:
    """User + system CPU of one process, seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def app_pid() -> int:
    """The sgmon process in the pane (the pane's process, or its child if a shell is between)."""
    pid = int(tmux("display-message", "-p", "-t", "bench", "#{pane_pid}").strip())
    for _ in range(50):
        if b"sgmon" in Path(f"/proc/{pid}/cmdline").read_bytes():
            return pid
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        if children:
            pid = int(children[0])
        time.sleep(0.05)
    raise RuntimeError("sgmon process not found in the tmux pane")


def headless_cpu(seconds: float) -> float:
    """CPU % of the simulated pair plus the analysis without any drawing, same window."""
    from sgmon.analysis import Analyzer
    from sgmon.hosts.sim import SimSource
    from sgmon.monitor import Monitor

    analyzer = Analyzer()
    monitor = Monitor([SimSource("rto-stall", onset=15.0)], sinks=[analyzer.feed])
    monitor.start()
    time.sleep(3.0)
    c0, t0 = time.process_time(), time.monotonic()
    time.sleep(seconds)
    used = time.process_time() - c0
    elapsed = time.monotonic() - t0
    monitor.stop()
    return used / elapsed * 100.0


def row(measure: str, value: str, target: str, ratio: float | None) -> None:
    """One markdown table row."""
    print(f"| {measure} | {value} | {target} | {'-' if ratio is None else f'{ratio:.2f}'} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=30.0, help="CPU window after warm-up")
    ap.add_argument("--keys", type=int, default=10, help="key presses to time")
    args = ap.parse_args()

    env = {**os.environ, "TERM": "xterm-256color"}
    cmd = f"{sys.executable} -m sgmon demo --scenario rto-stall --onset 15s"
    launched = time.monotonic()
    subprocess.run(
        ["tmux", "-L", SOCKET, "new-session", "-d", "-s", "bench", "-x", "160", "-y", "48", cmd],
        check=True,
        env=env,
    )
    try:
        first = wait_for(lambda s: "log file sync" in s and "waits/s" in s, 20.0)
        first_frame = None if first is None else time.monotonic() - launched
        pid = app_pid()
        time.sleep(5.0)  # warm-up: imports, first layout, history filling
        c0, t0 = cpu_seconds(pid), time.monotonic()
        time.sleep(args.seconds)
        total = (cpu_seconds(pid) - c0) / (time.monotonic() - t0) * 100.0

        latencies = []
        for i in range(args.keys):
            want = "PAUSED" if i % 2 == 0 else "LIVE"
            sent = time.monotonic()
            tmux("send-keys", "-t", "bench", "p")
            took = wait_for(lambda s, w=want: s.lstrip().startswith(w), 5.0, step=0.005)
            if took is not None:
                latencies.append((time.monotonic() - sent) * 1000.0)
            time.sleep(0.3)
    finally:
        tmux("kill-server")

    sim_only = headless_cpu(args.seconds)
    ui = total - sim_only

    print(
        f"## tui_cost {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cpus"
    )
    print(f"command: {cmd} (160x48 tmux), window {args.seconds:.0f}s after 5s warm-up")
    print("| measure | value | target | value / target |")
    print("|---|---|---|---|")
    row("CPU, whole process (sim + analysis + dashboard)", f"{total:.1f} %", "5 %", total / 5)
    row("CPU, sim + analysis headless (same window)", f"{sim_only:.1f} %", "-", None)
    row("CPU, the dashboard's own share (difference)", f"{ui:.1f} %", "5 %", ui / 5)
    if first_frame is None:
        row("first frame after launch", "not seen in 20 s", "2 s", None)
    else:
        row("first frame after launch", f"{first_frame:.2f} s", "2 s", first_frame / 2)
    if latencies:
        med, worst = statistics.median(latencies), max(latencies)
        row(
            f"key press to screen, median of {len(latencies)}", f"{med:.0f} ms", "100 ms", med / 100
        )
        row("key press to screen, worst", f"{worst:.0f} ms", "100 ms", worst / 100)
    return 0


if __name__ == "__main__":
    sys.exit(main())
