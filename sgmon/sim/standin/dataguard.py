"""The stand-in's Data Guard views: the destinations and their status, the broker's members,
the response histogram, the lags, the apply and RFS processes, the gaps."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sgmon.sim.standin.views import Tables, now_text, quoted


class DataGuard(Tables):
    """Publishing the Data Guard views (``StandIn``'s)."""

    def set_dest(self, dest_id: int, **cols: object) -> None:
        """A remote destination: V$ARCHIVE_DEST and V$ARCHIVE_DEST_STATUS columns together."""
        status_cols = {"gap_status", "synchronized", "type", "ARCHIVED_THREAD#", "ARCHIVED_SEQ#"}
        uname = str(cols.get("db_unique_name", "STBY"))
        dest: dict[str, object] = {
            "dest_id": dest_id,
            "dest_name": f"LOG_ARCHIVE_DEST_{dest_id}",
            "status": "VALID",
            "target": "STANDBY",
            "transmit_mode": "SYNCHRONOUS",
            "affirm": "YES",
            "net_timeout": 30,
            "db_unique_name": uname,
            "error": "",
            "destination": uname.lower(),  # a TNS alias, as LOG_ARCHIVE_DEST_n SERVICE= names it
            "valid_role": "ALL_ROLES",
            "valid_now": "YES",
        }
        st: dict[str, object] = {
            "dest_id": dest_id,
            "status": "VALID",
            "type": "PHYSICAL",
            "gap_status": "NO GAP",
            "error": "",
            "synchronized": "YES",
            "ARCHIVED_THREAD#": 1,
            "ARCHIVED_SEQ#": 0,
        }
        for k, v in cols.items():
            (st if k in status_cols else dest)[k] = v
        st["status"], st["error"] = dest["status"], dest["error"]
        with self._lock:
            self._upsert("v$archive_dest", [dest])
            self._upsert("v$archive_dest_status", [st])

    def set_broker_member(
        self,
        database: str,
        connect_identifier: str,
        role: str = "PHYSICAL STANDBY",
        enabled: str = "TRUE",
        status: int = 0,
        severity: str = "SUCCESS",
    ) -> None:
        """A row of V$DG_BROKER_CONFIG (23ai): one member of the broker's configuration."""
        row = {
            "database": database,
            "connect_identifier": connect_identifier,
            "dataguard_role": role,
            "redo_source": "",
            "enabled": enabled,
            "status": status,
            "severity": severity,
        }
        with self._lock:
            self._upsert("v$dg_broker_config", [row])

    def set_archived(self, dest_id: int, seq: int, thread: int = 1) -> None:
        """V$ARCHIVE_DEST_STATUS: the last sequence the destination has archived."""
        with self._lock:
            self._db.execute(
                f'UPDATE {quoted("v$archive_dest_status")} SET "ARCHIVED_THREAD#" = ?, '
                '"ARCHIVED_SEQ#" = ? WHERE dest_id = ?',
                (thread, seq, dest_id),
            )

    def publish_resp_hist(self, dest_id: int, freq: Mapping[int, int]) -> None:
        """Cumulative V$REDO_DEST_RESP_HISTOGRAM frequencies per 1-second duration bucket."""
        with self._lock:
            self._upsert(
                "v$redo_dest_resp_histogram",
                (
                    {"dest_id": dest_id, "time": now_text(), "duration": d, "frequency": f}
                    for d, f in freq.items()
                ),
            )

    def set_dg_stats(
        self,
        transport_lag: float | None,
        apply_lag: float | None,
        datum_time: str = "",
        computed: str | None = None,
        upper: bool = False,
    ) -> None:
        """V$DATAGUARD_STATS lags (seconds, shown as Oracle's interval text).

        As real standbys show it: names in lower case ("transport lag", as SQL*Plus prints them
        from 10.2 to 19c; ``upper`` for the upper case the reference pages write), a lag of None
        is a NULL VALUE (transport stopped), and ``computed`` (TIME_COMPUTED, default: the datum
        time) moves on while a ``datum_time`` that stays put says nothing arrives.
        """
        rows = []
        for name, lag in (("transport lag", transport_lag), ("apply lag", apply_lag)):
            rows.append(
                {
                    "name": name.upper() if upper else name,
                    "value": _interval(lag),
                    "unit": "day(2) to second(0) interval",
                    "time_computed": datum_time if computed is None else computed,
                    "datum_time": datum_time,
                }
            )
        with self._lock:
            self._upsert("v$dataguard_stats", rows)

    def set_apply(self, state: str | None) -> None:
        """MRP0's state (APPLYING_LOG, WAIT_FOR_LOG ...), or None for no MRP at all: in
        V$DATAGUARD_PROCESS from 12.2, in V$MANAGED_STANDBY before 21c."""
        with self._lock:
            for view, name in (("v$dataguard_process", "name"), ("v$managed_standby", "process")):
                if self.columns(view):
                    self._db.execute(f"DELETE FROM {quoted(view)} WHERE {name} LIKE 'MRP%'")
            if state is None:
                return
            if self.columns("v$dataguard_process"):
                row = {"name": "MRP0", "pid": 4242, "role": "managed recovery", "action": state}
                self._upsert("v$dataguard_process", [row])
            if self.columns("v$managed_standby"):
                row = {"process": "MRP0", "pid": 4242, "status": state, "THREAD#": 1}
                self._upsert("v$managed_standby", [row])

    def set_receiving(self, thread: int, seq: int | None, block: int = 0) -> None:
        """The RFS process receiving a thread (one per sending primary instance) at ``seq`` and
        ``block``; ``seq`` None: it is gone (its instance's transport stopped).  19c names it
        "rfs" in V$DATAGUARD_PROCESS, as real standbys print it; V$MANAGED_STANDBY says RFS."""
        pid = 5000 + thread
        with self._lock:
            for view, name in (("v$dataguard_process", "name"), ("v$managed_standby", "process")):
                if self.columns(view):
                    self._db.execute(
                        f"DELETE FROM {quoted(view)} WHERE UPPER({name}) = 'RFS' AND pid = ?",
                        (pid,),
                    )
            if seq is None:
                return
            at = {"pid": pid, "THREAD#": thread, "SEQUENCE#": seq, "BLOCK#": block}
            if self.columns("v$dataguard_process"):
                row = {"name": "rfs", "role": "RFS sync", "action": "RECEIVING", **at}
                self._upsert("v$dataguard_process", [row])
            if self.columns("v$managed_standby"):
                self._upsert("v$managed_standby", [{"process": "RFS", "status": "RECEIVING", **at}])

    def set_gap(self, gaps: Iterable[tuple[int, int, int]] = ()) -> None:
        """V$ARCHIVE_GAP rows (thread, low sequence, high sequence); none: no gap."""
        with self._lock:
            self._db.execute(f"DELETE FROM {quoted('v$archive_gap')}")
            self._upsert(
                "v$archive_gap",
                ({"THREAD#": t, "LOW_SEQUENCE#": lo, "HIGH_SEQUENCE#": hi} for t, lo, hi in gaps),
            )


def _interval(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    s = round(seconds)
    d, s = divmod(s, 86400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    return f"+{d:02d} {h:02d}:{m:02d}:{s:02d}"
