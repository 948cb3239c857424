"""What `sgmon record` costs with many remote hosts, and whether it keeps every tick of each.

Each host is reached through a cheap far side (bench/farside.py) that replays one real session
of the installed agent (``--far agent``: the collectors run there, this machine parses frames
and writes rows) or of the pump (``--far pump``, the default deployment: the files come over
and the collectors run here, on a mirror of each host's files).  The canned sessions are taken
once from this machine (``--capture``, kept in ``--canned``).

For each count of hosts, ``sgmon record`` runs ``--seconds`` and is stopped with SIGTERM; read
are its CPU (utime + stime, from the 20th second on: the ssh sessions start first), its peak
RSS, its threads, the far sides' CPU, how long the stop took, what it said, and from the
archive: the rows per host, and for each host the ticks from its first one to the last tick
written before the stop that it does not have.

    .venv/bin/python bench/record_hosts.py --hosts 300 600 1000 --seconds 60 [--far pump]
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TICK = os.sysconf("SC_CLK_TCK")
WARMUP = 20.0


def sgmon_command() -> str:
    return shutil.which("sgmon", path=str(Path(sys.executable).parent)) or "sgmon"


def capture(far: str, canned: Path) -> Path:
    """One real session of this machine, saved for the far sides to replay."""
    out = canned / f"{far}.canned"
    if out.exists():
        return out
    canned.mkdir(parents=True, exist_ok=True)
    if far == "agent":
        with out.open("wb") as f:
            subprocess.run(
                [sgmon_command(), "agent", "--interval", "1s", "--duration", "5s"],
                stdout=f,
                check=True,
            )
        return out
    tee = canned / "tee-ssh.sh"  # runs the remote command here and keeps what it wrote
    tee.write_text(f'#!/bin/sh\nfor a; do last=$a; done\nsh -c "$last" | tee {out}.part\n')
    tee.chmod(0o755)
    config = canned / "capture.toml"
    config.write_text(f'[[host]]\nname = "capture"\nssh = "capture"\nssh_command = ["{tee}"]\n')
    subprocess.run(
        [
            sgmon_command(),
            "record",
            "--quiet",
            "--config",
            str(config),
            "--duration",
            "6s",
            "--dir",
            str(canned / "capture-archive"),
        ],
        check=False,
        env=dict(os.environ, SGMON_RUNTIME_DIR=str(canned / "run")),
    )
    os.replace(f"{out}.part", out)
    return out


def config(n: int, far: str, canned: Path, path: Path) -> None:
    command = json.dumps([sys.executable, "-S", str(HERE / "farside.py"), far, str(canned)])
    agent = 'sgmon_path = "sgmon"\n' if far == "agent" else ""
    hosts = "".join(
        f'[[host]]\nname = "h{i:04d}"\nssh = "h{i:04d}"\nssh_command = {command}\n{agent}'
        for i in range(n)
    )
    path.write_text(f'name = "bench {n} hosts"\n{hosts}')


def stat(pid: int) -> tuple[float, int]:
    """CPU seconds (utime + stime) and threads of one process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK, int(fields[17])


def children_cpu(pid: int) -> float:
    """CPU seconds of the process's live children (the far sides)."""
    total = 0.0
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            with contextlib.suppress(OSError, ValueError):  # ended meanwhile
                total += stat(int(child))[0]
    return total


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def ticks(archive: Path) -> dict[str, list[float]]:
    """Each host's tick times, from its cpu table (one row a tick for the instance "all")."""
    from sgmon.units import parse_instant

    out: dict[str, list[float]] = {}
    for host_dir in sorted(p for p in archive.iterdir() if p.is_dir()):
        times = set()
        for table in host_dir.glob("cpu_*.csv"):
            with table.open() as f:
                for row in csv.DictReader(f):
                    if row["instance"] == "all":
                        times.add(round(parse_instant(row["time"], 0.0)))
        out[host_dir.name] = sorted(times)
    return out


def rows(archive: Path) -> dict[str, int]:
    return {
        d.name: sum(sum(1 for _ in t.open()) - 1 for t in d.glob("*.csv") if t.name != "events.csv")
        for d in archive.iterdir()
        if d.is_dir()
    }


def spread(values: list[int]) -> list[int]:
    return [min(values, default=0), max(values, default=0)]


LIFTED = (
    "import sgmon.config.reader as r; r.MAX_HOSTS = 10**6; "
    "from sgmon.cli import main; raise SystemExit(main())"
)
"""``sgmon`` with the configuration's limit on hosts lifted, to measure past it."""


def run(
    n: int, far: str, canned: Path, seconds: float, work: Path, lift: bool = False
) -> dict[str, object]:
    work.mkdir(parents=True)
    cfg, archive = work / "sgmon.toml", work / "archive"
    config(n, far, canned, cfg)
    env = dict(os.environ, SGMON_RUNTIME_DIR=str(work / "run"))
    err = (work / "stderr").open("w+")
    began = time.monotonic()
    sgmon = [sys.executable, "-c", LIFTED] if lift else [sgmon_command()]
    p = subprocess.Popen(
        [*sgmon, "record", "--config", str(cfg), "--dir", str(archive)],
        stderr=err,
        env=env,
    )
    try:
        time.sleep(WARMUP)
        c0, _ = stat(p.pid)
        t0 = time.monotonic()
        time.sleep(max(0.0, seconds - WARMUP))
        c1, threads = stat(p.pid)
        t1 = time.monotonic()
        far_cpu = children_cpu(p.pid)
        rss = peak_rss_mb(p.pid)
        stop_sent = time.time()
        p.send_signal(signal.SIGTERM)
        stopping = time.monotonic()
        p.wait(180)
        stop_s = time.monotonic() - stopping
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    err.seek(0)
    said = [line.rstrip() for line in err if "frames not written" in line or "Traceback" in line]
    host_ticks = ticks(archive)
    end = int(stop_sent) - 1  # the last tick surely received before the stop
    missing = {
        h: end - t[0] + 1 - len([x for x in t if x <= end]) for h, t in host_ticks.items() if t
    }
    per_host_rows = rows(archive)
    cpu = c1 - c0
    span = t1 - t0
    return {
        "hosts": n,
        "far": far,
        "seconds": round(time.monotonic() - began, 1),
        "cpu_per_tick_ms": round(1000 * cpu / span, 1),
        "cpu_per_host_tick_ms": round(1000 * cpu / span / n, 3),
        "cpu_share_of_one_core": round(cpu / span, 2),
        "peak_rss_mb": round(rss, 1),
        "threads": threads,
        "far_sides_cpu_s": round(far_cpu, 1),
        "stop_s": round(stop_s, 1),
        "hosts_recorded": len([t for t in host_ticks.values() if t]),
        "ticks_per_host": spread([len(t) for t in host_ticks.values()]),
        "hosts_missing_ticks": sum(1 for m in missing.values() if m > 0),
        "ticks_missing": sum(max(0, m) for m in missing.values()),
        "rows_per_host": spread(list(per_host_rows.values())),
        "said": said,
        "load_before": os.getloadavg()[0],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", type=int, nargs="+", default=[300])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--far", choices=("agent", "pump"), default="pump")
    ap.add_argument("--canned", type=Path, default=Path(tempfile.gettempdir()) / "sgmon-canned")
    ap.add_argument("--keep", action="store_true", help="keep the archives (printed)")
    ap.add_argument(
        "--lift-limit", action="store_true", help="measure past the most hosts a config takes"
    )
    args = ap.parse_args()
    canned = capture(args.far, args.canned)
    for n in args.hosts:
        work = Path(tempfile.mkdtemp(prefix=f"sgmon-hosts-{n}-"))
        try:
            print(
                json.dumps(run(n, args.far, canned, args.seconds, work / "r", args.lift_limit)),
                flush=True,
            )
        finally:
            if args.keep:
                print(f"kept {work}", file=sys.stderr)
            else:
                shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
