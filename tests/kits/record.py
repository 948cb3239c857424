"""What the unit and the system tests of record share."""

from __future__ import annotations

import re
import threading
from pathlib import Path

from paths import REPO

from sgmon import registry
from sgmon.collector import Collector
from sgmon.hosts.local import LocalSource
from sgmon.model import Field, Kind
from sgmon.sinks.csvarchive import ArchiveWriter


class WaitsLike(Collector):
    """A histogram-bearing collector (Oracle's cumulative buckets grow on every sample)."""

    name = "waitslike"
    fields = (
        Field("waits", "/s", Kind.RATE, "waits per second"),
        Field("avg", "ms", Kind.GAUGE, "average wait", warn=2, crit=8),
        Field("hist", "ms", Kind.HISTOGRAM, "wait time histogram"),
        Field("note", "", Kind.TEXT, "free text, with, commas"),
    )

    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    def sample(self):
        self.n += 1
        n = self.n
        hist = [[1, 10 * n], [2, 5 * n], [4, n], [256, n // 2], [None, n // 3]]
        return {"log file sync": {"waits": 16 * n, "avg": 1.5 * n, "hist": hist, "note": "a,b"}}


class Broken(Collector):
    """A collector whose source fails: the others must go on."""

    name = "broken"
    fields = (Field("x", "", Kind.GAUGE, "never read"),)

    def sample(self):
        raise OSError("source went away")


def _local(name: str = "hostA", role: str = "primary", interval: float = 0.2, duration=1.0):
    cols = [registry.load(n)() for n in ("cpu", "disk")] + [WaitsLike(), Broken()]
    return LocalSource(cols, interval, name=name, role=role, duration=duration)


def _record(src, root: Path, **kw) -> ArchiveWriter:
    w = ArchiveWriter(root, src.schema, src.interval, **kw)
    stop = threading.Event()
    src.run(w, stop)
    src.close()
    w.close()
    return w


def _tables(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.csv"))}


def unit_stop_timeout() -> float:
    """TimeoutStopSec of the recorder's systemd unit in deploy/ (which stops it by SIGTERM):
    how long a stop may take before systemd SIGKILLs it."""
    unit = (REPO / "deploy" / "sgmon-record.service").read_text()
    assert re.search(r"^KillSignal=SIGTERM$", unit, re.M)
    [value] = re.findall(r"^TimeoutStopSec=(\d+)$", unit, re.M)
    return float(value)
