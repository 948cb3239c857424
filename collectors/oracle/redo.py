"""`oracle_redo`: redo and commit statistics per second from V$SYSSTAT (instance ``db``).

Times use the ``(usec)`` statistics where the version has them and the centisecond ones
otherwise (11.2).  ``redo_write_size`` is the average LGWR write (redo size / redo writes, the
size ``oratcptest -mode=sync`` should use); ``redo_size_lwd`` and ``phys_reads_cache`` show the
DB_LOST_WRITE_PROTECT load that capped the standby's IOPS in seed 003.  ``redo_synch_polls`` (and
poll writes) show adaptive log file sync polling: log file sync then includes the poll sleeps;
``redo_synch_overhead`` ('redo synch time overhead (usec)') is the commit's wait beyond the write
itself, the budget's LGWR overhead leg as the database measures it.  ``redo_bcast_ack`` is RAC's
broadcast on commit (seed 000 commit steps 4 and 9): 'redo write broadcast ack time', the
latency of the other instances' SCN acks beyond the log write in microseconds (as the statistic
is described on oracle-l, 2012; 0 on a single instance), per redo write.
"""

from __future__ import annotations

from collections.abc import Mapping

from collectors.oracle.base import OracleCollector
from sgmon.contract import RowKind
from sgmon.model import Field, Kind, Rows, Value
from sgmon.oracle.session import Session
from sgmon.rates import counter_delta

G, R = Kind.GAUGE, Kind.RATE

FIELDS = (
    Field("redo_size", "B/s", R, "redo generated per second ('redo size')"),
    Field("redo_writes", "/s", R, "LGWR writes per second ('redo writes')"),
    Field(
        "redo_write_size",
        "kB",
        G,
        "average LGWR write: redo size / redo writes",
        combine="per:redo_writes",
    ),
    Field("redo_write_time", "ms/s", R, "LGWR write time per second ('redo write time')"),
    Field("redo_synch_writes", "/s", R, "synchronous redo writes (commits waiting) per second"),
    Field(
        "redo_synch_time",
        "ms",
        G,
        "average time per redo synch write (commit wait)",
        combine="per:redo_synch_writes",
    ),
    Field("user_commits", "/s", R, "user commits per second (transactions)"),
    Field("user_rollbacks", "/s", R, "user rollbacks per second"),
    Field(
        "redo_size_lwd",
        "B/s",
        R,
        "redo for lost write detection per second (DB_LOST_WRITE_PROTECT)",
    ),
    Field("phys_reads_cache", "/s", R, "physical reads into the buffer cache per second"),
    Field("redo_synch_polls", "/s", R, "commits that polled for LGWR, not posted (adaptive sync)"),
    Field("redo_synch_poll_writes", "/s", R, "redo synch writes that used polling per second"),
    Field(
        "redo_synch_overhead",
        "ms",
        G,
        "average post/poll overhead per commit wait (12.1+)",
        combine="per:redo_synch_writes",
    ),
    # warn: above a healthy local write (seed 000: ~0.4 ms); crit: seed 000 Table 5's outlier
    Field(
        "redo_bcast_ack",
        "ms",
        G,
        "RAC: LGWR's wait for the other instances' SCN acks beyond its write, per redo write",
        1.0,
        8.0,
        combine="per:redo_writes",
    ),
)

# field -> (statistic, multiplier to the field's unit), first available wins
SOURCES: dict[str, tuple[tuple[str, float], ...]] = {
    "redo_size": (("redo size", 1.0),),
    "redo_writes": (("redo writes", 1.0),),
    "redo_write_time": (("redo write time (usec)", 0.001), ("redo write time", 10.0)),
    "redo_synch_writes": (("redo synch writes", 1.0),),
    "redo_synch_time": (("redo synch time (usec)", 0.001), ("redo synch time", 10.0)),
    "user_commits": (("user commits", 1.0),),
    "user_rollbacks": (("user rollbacks", 1.0),),
    "redo_size_lwd": (("redo size for lost write detection", 1.0),),
    "phys_reads_cache": (("physical reads cache", 1.0),),
    "redo_synch_polls": (("redo synch polls", 1.0),),
    "redo_synch_poll_writes": (("redo synch poll writes", 1.0),),
    "redo_synch_overhead": (("redo synch time overhead (usec)", 0.001),),
    "redo_bcast_ack": (("redo write broadcast ack time", 0.001),),
}


class OracleRedoCollector(OracleCollector):
    """Redo rate, LGWR writes and commit counts (V$SYSSTAT)."""

    name = "oracle_redo"
    rows = (RowKind("db", fixed="db"),)
    description = "Oracle redo and commit statistics per second (V$SYSSTAT)"
    fields = FIELDS

    def read(self, s: Session) -> Rows:
        """Cumulative statistics, in the fields' units, on one row ``db``."""
        return raw_rows(dict(s.query("sysstat") or ()))

    def compute(self, prev: Rows | None, cur: Rows, dt: float) -> Rows:
        """Rates, plus the two averages that divide one counter by another."""
        out = super().compute(prev, cur, dt)
        raw, before = cur.get("db"), (prev or {}).get("db")
        if raw is None or "db" not in out:
            return out
        b = before or {}

        def delta(name: str) -> float | None:
            return counter_delta(b.get(name), raw.get(name))  # type: ignore[arg-type]

        size, writes = delta("redo_size"), delta("redo_writes")
        out["db"]["redo_write_size"] = (
            round(size / writes / 1024, 3) if size is not None and writes else None
        )
        if "redo_bcast_ack" in raw:  # per redo write, not per second
            ack = delta("redo_bcast_ack")
            out["db"]["redo_bcast_ack"] = (
                round(ack / writes, 4) if ack is not None and writes else None
            )
        swrites = delta("redo_synch_writes")
        for name in ("redo_synch_time", "redo_synch_overhead"):  # per commit wait, not per second
            total = delta(name)
            if name in raw:
                out["db"][name] = (
                    round(total / swrites, 4) if total is not None and swrites else None
                )
        return out


def raw_rows(stats: Mapping[str, float | None]) -> Rows:
    """Statistic name -> cumulative value, as the fields' cumulative values on one row ``db``
    (the first available statistic of each field); shared with the AWR importer."""
    row: dict[str, Value] = {}
    for field, choices in SOURCES.items():
        for stat, mult in choices:
            value = stats.get(stat)
            if value is not None:
                row[field] = value * mult
                break
    return {"db": row} if row else {}
