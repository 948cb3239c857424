"""sgmon's real collectors watching one lab host from inside its network namespace.

/proc/net, netlink and the routes are per namespace, so each lab host is sampled by its own
process running there; it streams the schema, then one frame per tick, as JSON lines.  The
namespaces share one kernel, so each host is given its own CPU (the one its processes are pinned
to; two standbys share one) and its own log device, as real hosts would have: rows for the other
CPUs are dropped, and ``all`` shows this host's CPU.

Run by the lab: ``python -m sgmon.lab.watch --host primary --role primary --sid PROD ...``.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import threading
from typing import Any

from sgmon import registry
from sgmon.engine import Engine
from sgmon.lab.proc import bind_to_parent
from sgmon.model import Frame, schema_to_dict
from sgmon.readers.procfile import stat_fields
from sgmon.sim.standin import open_session

OS_COLLECTORS = ("cpu", "paging", "disk", "netdev", "tcp", "procs", "retrans")
DB_COLLECTORS = ("oracle_waits", "oracle_redo", "oracle_dg")


def collectors(a: argparse.Namespace) -> list:
    """The OS collectors limited to this host's device and interface, and the database ones
    reading the host's V$ stand-in."""

    def connect() -> sqlite3.Connection:
        return open_session(f"file:{a.standin}", read_only=True)

    options: dict[str, dict[str, Any]] = {
        "disk": {"include": [a.device], "pinned": [a.device]},
        "netdev": {"include": [a.interface]},
        "tcp": {"ports": [a.port], "role": a.role},  # each side takes its end of the link
        "retrans": {"ports": [a.port], "role": a.role},
        # one kernel for all hosts: each follows its own instance's threads only
        "procs": {"sid": a.sid, "role": a.role},
    }
    out = []
    for name in OS_COLLECTORS + DB_COLLECTORS:
        opts = options.get(name, {})
        if name in DB_COLLECTORS:
            opts = {"connect": connect, "role": a.role, "host": a.host}
        out.append(registry.load(name)(opts))
    return out


def runnable_on(cpu: int) -> int:
    """Tasks runnable (state R) on one CPU, this process excluded: that CPU's run queue."""
    me = str(os.getpid())
    n = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or pid == me:
            continue
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    rest = stat_fields(f.read())
            except OSError:
                continue
            if rest[0] == "R" and int(rest[36]) == cpu:  # fields 3 (state) and 39 (processor)
                n += 1
    return n


def own_cpu(d: dict[str, Any], cpu: int | None) -> None:
    """Keep only this host's CPU row, shown as ``all`` with that CPU's run queue (load averages
    stay machine-wide)."""
    res = d["collectors"].get("cpu")
    if cpu is None or not res or not res.get("rows"):
        return
    rows = res["rows"]
    mine = rows.get(f"cpu{cpu}")
    for name in [n for n in rows if n.startswith("cpu")]:
        if name != f"cpu{cpu}":
            del rows[name]
    if mine and "all" in rows:
        rows["all"].update(mine)
        rows["all"]["runq_sz"] = runnable_on(cpu)


def main(argv: list[str] | None = None) -> int:
    """Stream frames until stopped (SIGTERM, parent gone, or --duration)."""
    p = argparse.ArgumentParser(prog="python -m sgmon.lab.watch")
    p.add_argument("--host", required=True)
    p.add_argument("--role", required=True)
    p.add_argument("--standin", required=True)
    p.add_argument("--sid", required=True, help="the host's instance name")
    p.add_argument("--device", required=True, help="the host's log device (loopN)")
    p.add_argument("--interface", required=True)
    p.add_argument("--port", type=int, default=1521)
    p.add_argument("--cpu", type=int)
    p.add_argument("--interval", type=float, default=1.0)
    p.add_argument("--duration", type=float, required=True)
    a = p.parse_args(argv)
    stop = bind_to_parent(a.duration + 5)
    engine = Engine(collectors(a), a.interval, host=a.host, role=a.role)
    out = sys.stdout
    out.write(json.dumps({"schema": schema_to_dict(engine.schema())}) + "\n")
    out.flush()
    lock = threading.Lock()

    def emit(frame: Frame) -> None:
        d = frame.to_dict()
        own_cpu(d, a.cpu)
        with lock:
            out.write(json.dumps(d) + "\n")
            out.flush()

    try:
        engine.run(emit, stop, a.duration)
    except BrokenPipeError:
        pass
    finally:
        engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
