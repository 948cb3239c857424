"""`sgmon status` wall time per call with a recorder running, against sampling once from scratch.

Target (issue 4): median <= 60 ms, and >= 5x faster than starting the collectors for one sample.
The baseline is the least a status command could do without a running sgmon: start Python, build
the configured local collectors and take the two samples a rate needs (no tick wait included).

    /work/venv/bin/python bench/status_speed.py [--calls 30]
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
from pathlib import Path

BASELINE = (
    "from sgmon.config import Config\n"
    "from sgmon.hosts.build import make_collectors\n"
    "from sgmon.engine import Engine\n"
    "e = Engine(make_collectors(Config(), None), 1.0)\n"
    "e.tick(); e.tick(); e.close()\n"
)


def _median_ms(cmd: list[str], n: int, env: dict[str, str]) -> tuple[float, str]:
    times, out = [], ""
    for _ in range(n):
        t0 = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
        times.append((time.perf_counter() - t0) * 1000)
        out = r.stdout.strip()
    return statistics.median(times), out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=30)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="sgmon-bench-"))
    env = dict(os.environ, SGMON_RUNTIME_DIR=str(tmp / "run"))
    sgmon = shutil.which("sgmon", path=str(Path(sys.executable).parent)) or "sgmon"
    rec = subprocess.Popen(
        [sgmon, "record", "--dir", str(tmp / "arch"), "--interval", "1", "--quiet"], env=env
    )
    try:
        deadline = time.monotonic() + 30
        while not list((tmp / "run").glob("state-*.txt")):
            if time.monotonic() > deadline:
                raise SystemExit("the recorder published no state")
            time.sleep(0.1)
        status_ms, line = _median_ms([sgmon, "status"], args.calls, env)
        base_ms, _ = _median_ms([sys.executable, "-c", BASELINE], max(5, args.calls // 3), env)
        floor_ms, _ = _median_ms([sys.executable, "-c", "pass"], args.calls, env)
    finally:
        rec.terminate()
        rec.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"status line: {line}")
    print(f"sgmon status, recorder running: median {status_ms:.1f} ms over {args.calls} calls")
    print(f"start collectors + one sample:  median {base_ms:.1f} ms")
    print(f"bare interpreter start (floor):  median {floor_ms:.1f} ms")
    print(f"ratio: {base_ms / status_ms:.1f}x (target >= 5x, status <= 60 ms)")
    print(f"load average while measuring: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
