"""`sgmon status` wall time per call with a recorder running, against the interpreter's floor.

Targets: issue 18, `sgmon status` <= 1.3x `python -c pass` (the least any Python command costs);
issue 4, >= 5x faster than starting the collectors for one sample.  The calls alternate
(status, floor, status, ...) so that a machine that gets busier slows both alike, and start once
the recorder is steady: its state file rewritten on three consecutive ticks.  The status command
is run as a user runs it, through the installed `sgmon` script (pip's launcher included).

    python bench/status_speed.py [--calls 30]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from checkout import checkout_env

BASELINE = (
    "from sgmon.config import Config\n"
    "from sgmon.hosts.build import make_collectors\n"
    "from sgmon.engine import Engine\n"
    "e = Engine(make_collectors(Config(), None), 1.0)\n"
    "e.tick(); e.tick(); e.close()\n"
)


def _timed_ms(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    return (time.perf_counter() - t0) * 1000, r.stdout.strip()


def _steady(run_dir: Path, ticks: int = 3, timeout: float = 30.0) -> None:
    """Wait until the recorder has rewritten its state file on ``ticks`` consecutive ticks."""
    deadline = time.monotonic() + timeout
    seen: list[float] = []
    while len(seen) < ticks:
        if time.monotonic() > deadline:
            raise SystemExit("the recorder published no steady state")
        for f in run_dir.glob("state-*.txt"):
            with contextlib.suppress(OSError):
                m = f.stat().st_mtime
                if not seen or m > seen[-1]:
                    seen.append(m)
        time.sleep(0.1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=30)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="sgmon-bench-"))
    env = checkout_env(dict(os.environ, SGMON_RUNTIME_DIR=str(tmp / "run")))
    sgmon = shutil.which("sgmon", path=str(Path(sys.executable).parent)) or "sgmon"
    rec = subprocess.Popen(
        [sgmon, "record", "--dir", str(tmp / "arch"), "--interval", "1", "--quiet"], env=env
    )
    try:
        _steady(tmp / "run")
        status, floor, line = [], [], ""
        for _ in range(args.calls):
            ms, line = _timed_ms([sgmon, "status"], env)
            status.append(ms)
            floor.append(_timed_ms([sys.executable, "-c", "pass"], env)[0])
        base = [
            _timed_ms([sys.executable, "-c", BASELINE], env)[0]
            for _ in range(max(5, args.calls // 3))
        ]
    finally:
        rec.terminate()
        rec.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)
    status_ms, floor_ms, base_ms = (statistics.median(x) for x in (status, floor, base))
    print(f"status line: {line}")
    print(f"sgmon status, recorder running: median {status_ms:.1f} ms over {args.calls} calls")
    print(f"bare interpreter start (floor):  median {floor_ms:.1f} ms")
    print(f"start collectors + one sample:  median {base_ms:.1f} ms")
    print(f"status / floor: {status_ms / floor_ms:.2f}x (target <= 1.3x)")
    print(f"collectors / status: {base_ms / status_ms:.1f}x (issue 4's >= 5x; the floor bounds it)")
    print(f"load average while measuring: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
