"""`sgmon serve` under a fleet's scrapes and under none, two or more checkouts in turns.

On a machine shared with other work one run tells nothing: each checkout's serve runs in turn,
``--rounds`` times, so the machine's drift falls on all of them alike.  Each turn starts
``sgmon serve --simulate healthy`` from the checkout (first on PYTHONPATH, as
``serve_load.serving`` starts it), waits until it answers, and measures:

- **load**: ``ab -q -n N -c C`` (apache2-utils) on /metrics: answers per second, p50, p99, max;
- **idle**: the serve's CPU (utime + stime from /proc) over ``--idle`` seconds that nobody
  scrapes, what rendering the exposition in the sink would cost when nobody asks for it;
- **scraped**: its CPU over the same time while one client scrapes every ``--every`` seconds
  (a Prometheus), gzip and OpenMetrics as Prometheus asks.

Prints each turn, then the median of each measure per checkout, and the machine's load average
at each turn.

    git worktree add /tmp/base <rev>     # or: git archive <rev> | tar -x -C /tmp/base
    python bench/serve_ab.py /tmp/base . --rounds 4
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from serve_load import serving

PROMETHEUS_ACCEPT = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"


def cpu_seconds(pid: int) -> float:
    """The process' user and system CPU so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load(port: int, requests: int, clients: int) -> dict[str, float]:
    """ab's answers per second and latency percentiles (ms)."""
    out = subprocess.run(
        ["ab", "-q", "-n", str(requests), "-c", str(clients), "-s", "10",
         f"http://127.0.0.1:{port}/metrics"],
        capture_output=True, text=True, timeout=600,
    ).stdout  # fmt: skip
    pct = dict(re.findall(r"^\s+(\d+)%\s+(\d+)", out, re.M))
    done = re.search(r"Complete requests:\s+(\d+)", out)
    rate = re.search(r"Requests per second:\s+([\d.]+)", out)
    return {
        "ok": float(done[1]) if done else 0.0,
        "per_s": float(rate[1]) if rate else 0.0,
        "p50": float(pct.get("50", "nan")),
        "p99": float(pct.get("99", "nan")),
        "max": float(pct.get("100", "nan")),
    }


def cpu_over(pid: int, port: int, seconds: float, every: float | None) -> float:
    """CPU seconds per minute the serve took over ``seconds``, scraped every ``every`` s."""
    start, t0 = cpu_seconds(pid), time.monotonic()
    while (left := seconds - (time.monotonic() - t0)) > 0:
        if every is None:
            time.sleep(left)
            continue
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/metrics",
            headers={"Accept": PROMETHEUS_ACCEPT, "Accept-Encoding": "gzip"},
        )
        with urllib.request.urlopen(req, timeout=10) as r:
            r.read()
        time.sleep(min(every, max(0.0, seconds - (time.monotonic() - t0))))
    return (cpu_seconds(pid) - start) * 60.0 / seconds


def turn(checkout: Path, args: argparse.Namespace) -> dict[str, float]:
    """One checkout's measures."""
    with serving(duration=int(args.idle * 2 + 120), checkout=checkout) as (port, proc):
        time.sleep(2)  # a few ticks: both hosts' frames are in
        out = {"load_avg": os.getloadavg()[0]}
        out |= load(port, args.requests, args.clients)
        out["idle_cpu_s_per_min"] = cpu_over(proc.pid, port, args.idle, None)
        out["scraped_cpu_s_per_min"] = cpu_over(proc.pid, port, args.idle, args.every)
    return out


def main() -> int:
    """Run the turns; print each and the medians."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkouts", nargs="+", type=Path, help="repository roots to compare")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--requests", type=int, default=5000)
    ap.add_argument("--clients", type=int, default=200)
    ap.add_argument("--idle", type=float, default=20.0, help="seconds of each CPU measure")
    ap.add_argument("--every", type=float, default=5.0, help="seconds between scrapes")
    args = ap.parse_args()
    runs: dict[Path, list[dict[str, float]]] = {c: [] for c in args.checkouts}
    for r in range(args.rounds):
        for c in args.checkouts:
            m = turn(c, args)
            runs[c].append(m)
            print(f"round {r + 1} {c}: " + " ".join(f"{k}={v:.3g}" for k, v in m.items()),
                  flush=True)  # fmt: skip
    keys = ("per_s", "p50", "p99", "max", "idle_cpu_s_per_min", "scraped_cpu_s_per_min")
    print("| checkout | answers/s | p50 ms | p99 ms | max ms | CPU s/min idle | CPU s/min "
          f"scraped every {args.every:g} s | load average |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for c, ms in runs.items():
        med = [statistics.median(m[k] for m in ms) for k in keys]
        loads = [m["load_avg"] for m in ms]
        print(f"| {c} | {med[0]:.0f} | {med[1]:.0f} | {med[2]:.0f} | {med[3]:.0f} | "
              f"{med[4]:.2f} | {med[5]:.2f} | {min(loads):.1f}-{max(loads):.1f} |")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
