"""`cpu`: per-CPU and all-CPU utilisation as mpstat -P ALL shows it, plus sar -q run queue.

Instances: ``all`` and ``cpu0``, ``cpu1``...  The host-wide fields (load, runq, context switches,
interrupts) are on the ``all`` row only.  Percentages are computed from /proc/stat tick deltas
divided by the real tick total of the interval (psutil's per-CPU percentages under-read at
sub-second intervals: psutil bug #1586).  The tick total excludes guest and guest_nice, which
the kernel already counts inside user and nice, and mpstat's %usr/%nice subtract them again, so
the ten percentages add up to 100.  A tick counter that steps back (iowait does on tickless
kernels) counts as 0 for the interval, as mpstat does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from sgmon.collector import Collector, RawRows, Unavailable
from sgmon.config.rules import Rule
from sgmon.contract import RowKind
from sgmon.model import Field, Kind, Rows, Value
from sgmon.rates import counter_rate
from sgmon.readers.procfile import ProcFile

G, R = Kind.GAUGE, Kind.RATE

FIELDS = (
    Field("usr", "%", G, "time in user mode, less guest (mpstat %usr)"),
    Field("nice", "%", G, "time in user mode at low priority (mpstat %nice)"),
    Field("sys", "%", G, "time in kernel mode, less irq/softirq (mpstat %sys)", warn=30, crit=50),
    Field("iowait", "%", G, "idle with outstanding disk I/O (mpstat %iowait)"),
    Field("irq", "%", G, "servicing hardware interrupts (mpstat %irq)"),
    Field("soft", "%", G, "servicing softirqs (mpstat %soft)"),
    Field("steal", "%", G, "involuntary wait for the hypervisor (mpstat %steal)", warn=10),
    Field("guest", "%", G, "running a virtual CPU (mpstat %guest)", export=False),
    Field("gnice", "%", G, "running a niced guest (mpstat %gnice)", export=False),
    Field(
        "idle",
        "%",
        G,
        "idle without outstanding I/O (mpstat %idle)",
        warn=5,
        crit=1,
        higher_is_worse=False,
    ),
    Field("load1", "", G, "1-minute load average (sar -q ldavg-1)"),
    Field("load5", "", G, "5-minute load average (sar -q ldavg-5)"),
    Field("load15", "", G, "15-minute load average (sar -q ldavg-15)"),
    Field("runq_sz", "", G, "runnable tasks waiting for a CPU, excluding sgmon (sar -q runq-sz)"),
    Field("plist_sz", "", G, "tasks in the task list (sar -q plist-sz)"),
    Field("blocked", "", G, "tasks blocked on I/O (sar -q blocked)"),
    Field("cswch", "/s", R, "context switches per second (sar -w cswch/s)"),
    Field("intr", "/s", R, "interrupts per second (sar -I SUM)"),
)


# /proc/stat cpu line order: user nice system idle iowait irq softirq steal guest guest_nice
_USER, _NICE, _SYS, _IDLE, _IOWAIT, _IRQ, _SOFT, _STEAL, _GUEST, _GNICE = range(10)
_PCT = ("usr", "nice", "sys", "iowait", "irq", "soft", "steal", "guest", "gnice", "idle")


def parse_stat(text: str) -> Rows:
    """/proc/stat -> raw rows: ``all``/``cpuN`` with ``ticks`` (10 ints), and on ``all`` the
    cumulative ``cswch``/``intr`` counters and the ``procs_running``/``blocked`` gauges."""
    rows: Rows = {}
    extra: dict[str, Value] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(" ")
        if key.startswith("cpu"):
            ticks = [int(x) for x in rest.split()]
            ticks += [0] * (10 - len(ticks))  # old kernels print fewer columns
            rows["all" if key == "cpu" else key] = {"ticks": ticks[:10]}
        elif key == "ctxt":
            extra["cswch"] = int(rest)
        elif key == "intr":
            extra["intr"] = int(rest.split(None, 1)[0])
        elif key == "procs_running":
            extra["procs_running"] = int(rest)
        elif key == "procs_blocked":
            extra["blocked"] = int(rest)
    rows.setdefault("all", {}).update(extra)
    return rows


def parse_loadavg(text: str) -> dict[str, Value]:
    """/proc/loadavg -> load1/5/15 and plist_sz (the task count after the slash)."""
    parts = text.split()
    return {
        "load1": float(parts[0]),
        "load5": float(parts[1]),
        "load15": float(parts[2]),
        "plist_sz": int(parts[3].partition("/")[2]),
    }


def cpu_percentages(prev: list[int], cur: list[int]) -> dict[str, Value]:
    """mpstat's ten percentages from two tick vectors, over the real tick total."""
    d = [max(0, c - p) for p, c in zip(prev, cur, strict=True)]
    usr = max(0, (cur[_USER] - cur[_GUEST]) - (prev[_USER] - prev[_GUEST]))
    nice = max(0, (cur[_NICE] - cur[_GNICE]) - (prev[_NICE] - prev[_GNICE]))
    parts = {
        "usr": usr,
        "nice": nice,
        "sys": d[_SYS],
        "iowait": d[_IOWAIT],
        "irq": d[_IRQ],
        "soft": d[_SOFT],
        "steal": d[_STEAL],
        "guest": d[_GUEST],
        "gnice": d[_GNICE],
        "idle": d[_IDLE],
    }
    total = sum(parts.values())
    if total <= 0:
        return dict.fromkeys(parts)
    return {k: 100.0 * v / total for k, v in parts.items()}


class CpuCollector(Collector):
    """mpstat/sar -q figures from /proc/stat and /proc/loadavg."""

    name = "cpu"
    rows = (RowKind("all", fixed="all"), RowKind("cpu", label="cpu", on_request=True))
    description = "CPU utilisation per CPU (mpstat -P ALL) and run queue (sar -q)"
    option_rules: ClassVar[Mapping[str, Rule]] = {}
    fields = FIELDS
    lines: ClassVar[Mapping[str, str]] = {
        "/proc/stat": r"\n(?:cpu|ctxt |procs_running |procs_blocked )[^\n]*|\nintr \d+"
    }
    """What parse_stat reads: the intr line's first number only (its per-IRQ counts run to
    thousands of numbers on a large host)."""
    remote_files: ClassVar[Mapping[str, str]] = {"/proc/stat": "tick", "/proc/loadavg": "tick"}

    def __init__(self, options: Mapping[str, object] | None = None) -> None:
        super().__init__(options)
        self._stat: ProcFile | None = None
        self._loadavg: ProcFile | None = None

    def open(self) -> None:
        """Keep /proc/stat and /proc/loadavg (under the ``root`` option) open."""
        try:
            self._stat = ProcFile(self.path("/proc/stat"))
            self._loadavg = ProcFile(self.path("/proc/loadavg"))
        except OSError as e:
            self.close()
            raise Unavailable(f"cannot read {e.filename}: {e.strerror}") from None

    def sample(self) -> Rows:
        """One read of each file."""
        assert self._stat is not None and self._loadavg is not None
        rows = parse_stat(self._stat.read())
        rows["all"].update(parse_loadavg(self._loadavg.read()))
        return rows

    def derive(self, prev: RawRows | None, cur: RawRows, dt: float) -> Rows:
        """Percentages from tick deltas; sar -q gauges; cswch/intr per second."""
        out: Rows = {}
        for inst, raw in cur.items():
            before = prev.get(inst) if prev else None
            row: dict[str, Value] = dict.fromkeys(_PCT)
            if before and "ticks" in before and "ticks" in raw:
                row.update(cpu_percentages(before["ticks"], raw["ticks"]))  # type: ignore[arg-type]
            if inst == "all":
                for k in ("load1", "load5", "load15", "plist_sz", "blocked"):
                    row[k] = raw.get(k)
                running = raw.get("procs_running")
                # sar -q does not count itself; neither do we (our own thread is running now)
                row["runq_sz"] = max(0, running - 1) if isinstance(running, int) else None
                for k in ("cswch", "intr"):
                    b = before.get(k) if before else None
                    row[k] = counter_rate(b, raw.get(k), dt)  # type: ignore[arg-type]
            out[inst] = row
        return out

    def close(self) -> None:
        """Close the files."""
        for f in (self._stat, self._loadavg):
            if f is not None:
                f.close()
        self._stat = self._loadavg = None
