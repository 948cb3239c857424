"""The stand-in's redo logs: the log history of each thread and its incarnation, the online
and standby log groups and their members."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sgmon.sim.standin.views import Tables, now_text, quoted

LOG_BYTES = 4 << 30
"""Online and standby redo log size: seed 000's "redo log size = 4GB" for most redo rates."""


class RedoLogs(Tables):
    """Publishing the redo log views (``StandIn``'s)."""

    db_unique_name: str
    """The database's name, in its log members' paths."""
    _seq: dict[int, int]
    """Each thread's current sequence in this incarnation."""
    _resetlogs: int
    """RESETLOGS_CHANGE# of the current incarnation."""

    def log_switch(self, thread: int = 1, when: float | None = None) -> int:
        """Add one V$LOG_HISTORY row (the next sequence of the thread); returns the sequence."""
        seq = self._seq.get(thread, 0) + 1
        self._seq[thread] = seq
        with self._lock:
            self._upsert(
                "v$log_history",
                [
                    {
                        "RECID": self._recid(),
                        "THREAD#": thread,
                        "SEQUENCE#": seq,
                        "first_time": now_text(when),
                        "RESETLOGS_CHANGE#": self._resetlogs,
                    }
                ],
            )
        return seq

    def _recid(self) -> int:
        return int(self._db.execute('SELECT COUNT(*) FROM "v$log_history"').fetchone()[0]) + 1

    def resetlogs(self, change: int | None = None) -> None:
        """OPEN RESETLOGS (a failover, a flashback): a new incarnation whose sequences start at 1
        again; the old incarnation's history stays in V$LOG_HISTORY, as on a real database."""
        self._resetlogs = change if change is not None else self._resetlogs + 1_000_000
        self._seq.clear()
        with self._lock:
            self._single("v$database", {"RESETLOGS_CHANGE#": self._resetlogs})

    def set_standby_logs(
        self,
        thread: int = 1,
        active: int = 1,
        groups: int = 4,
        size: int = LOG_BYTES,
        members: int = 1,
    ) -> None:
        """V$STANDBY_LOG: the thread's groups, now ``groups`` of ``size`` bytes, ``active`` of
        them ACTIVE; each with ``members`` V$LOGFILE rows of TYPE STANDBY (seed 000: one)."""
        numbers = [thread * 100 + g for g in range(groups)]
        rows = [
            {
                "GROUP#": n,
                "THREAD#": thread,
                "SEQUENCE#": self._seq.get(thread, 0) + 1 if g < active else 0,  # the current
                "bytes": size,
                "used": 0,
                "status": "ACTIVE" if g < active else "UNASSIGNED",
            }
            for g, n in enumerate(numbers)
        ]
        with self._lock:
            self._replace("v$standby_log", thread, rows)
            self._members(numbers, "STANDBY", members, f"srl_t{thread}")

    def set_online_logs(
        self, thread: int = 1, groups: int = 3, size: int = LOG_BYTES, members: int = 1
    ) -> None:
        """V$LOG: the thread's online log groups, now ``groups`` of ``size`` bytes (the first one
        CURRENT, the others the sequences before it), each with ``members`` V$LOGFILE rows of
        TYPE ONLINE."""
        numbers = [(thread - 1) * groups + 1 + g for g in range(groups)]
        rows = [
            {
                "GROUP#": n,
                "THREAD#": thread,
                "SEQUENCE#": max(0, self._seq.get(thread, 0) + 1 - g),
                "bytes": size,
                "blocksize": 512,
                "members": members,
                "archived": "NO" if g == 0 else "YES",
                "status": "CURRENT" if g == 0 else "INACTIVE",
            }
            for g, n in enumerate(numbers)
        ]
        with self._lock:
            self._replace("v$log", thread, rows)
            self._members(numbers, "ONLINE", members, f"redo_t{thread}")

    def _replace(self, view: str, thread: int, rows: Iterable[Mapping[str, object]]) -> None:
        """Under the lock: a thread's log groups (and their members) replaced by ``rows``."""
        where = f'FROM {quoted(view)} WHERE "THREAD#" = ?'
        self._db.execute(
            f'DELETE FROM {quoted("v$logfile")} WHERE "GROUP#" IN (SELECT "GROUP#" {where})',
            (thread,),
        )
        self._db.execute(f"DELETE {where}", (thread,))
        self._upsert(view, rows)

    def _members(self, groups: list[int], kind: str, members: int, stem: str) -> None:
        """Under the lock: each group's V$LOGFILE rows, ``members`` of them (the first on
        +REDO, further ones on +RECO, as a multiplexed group is laid out)."""
        self._upsert(
            "v$logfile",
            (
                {
                    "GROUP#": g,
                    "status": None,  # NULL: the member is in use
                    "type": kind,
                    "member": f"+{'REDO' if m == 0 else 'RECO'}/{self.db_unique_name}/"
                    f"onlinelog/{stem}_g{g}_m{m + 1}.log",
                    "is_recovery_dest_file": "NO",
                }
                for g in groups
                for m in range(members)
            ),
        )
