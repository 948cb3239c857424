"""A database's own ``oracle_dg`` row and its redo threads: its role, which RAC instance and
thread a host is, and a standby's per-thread lags."""

from __future__ import annotations

from sgmon.contract import Row
from sgmon.fields import ORACLE_DG
from sgmon.model import Frame

DB = ORACLE_DG.Rows.db.fixed
SPLIT_S = 1.0
"""Seconds between the most and the least behind thread for their lags to be told apart."""


def db_row(frame: Frame | None) -> Row | None:
    """The host's database row (``oracle_dg`` ``db``); None when it has none."""
    return frame.rows(ORACLE_DG.name).get(DB) if frame is not None else None


def db_role(frame: Frame | None) -> str:
    """The role the host's database reports (``primary``, ``standby``...), else empty."""
    return ORACLE_DG.role.at(frame, DB) or ""


def instance_text(frame: Frame | None) -> str:
    """``PROD1 (inst 1, thread 1)`` from a host's oracle_dg row; empty when not reported."""
    row = db_row(frame)
    name, inst = ORACLE_DG.instance_name.raw(row), ORACLE_DG.inst_id.raw(row)
    thread = ORACLE_DG.thread.raw(row)
    if inst is None and thread is None:
        return str(name or "")
    return f"{name or 'instance'} (inst {inst}, thread {thread})"


def thread_lags(frame: Frame | None) -> dict[str, float]:
    """A standby's per-thread lags (``thread_lag`` of its ``thread_<N>`` rows, thread -> s), only
    when they differ by ``SPLIT_S`` or more: one thread behind while another is current is what
    V$DATAGUARD_STATS' one transport lag hides; equal lags say nothing more than it does."""
    rows = frame.rows(ORACLE_DG.name) if frame is not None else {}
    lags = {
        t: v
        for t, r in ORACLE_DG.Rows.thread.idents(rows)
        if (v := ORACLE_DG.thread_lag.of(r)) is not None
    }
    if len(lags) < 2 or max(lags.values()) - min(lags.values()) < SPLIT_S:
        return {}
    return dict(sorted(lags.items(), key=lambda kv: int(kv[0]) if kv[0].isdigit() else 0))
