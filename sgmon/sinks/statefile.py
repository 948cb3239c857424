"""Sink that publishes the latest state of each host for `sgmon status` (see ``sgmon.status``).

The work is done here, once per tick, so that the status command does none: the items of the
line are chosen, formatted and graded against the fields' warn/crit thresholds, and the file is
replaced atomically (write a temp file, ``os.replace``) so a reader never sees half of it.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from sgmon.analysis.thresholds import WAIT_CRIT_MS, WAIT_WARN_MS
from sgmon.model import Field, Frame, Schema, Status
from sgmon.status import STATE_FORMAT, runtime_dir
from sgmon.units import fmt_num

_SEVERITY = ("ok", "warn", "crit")
_TAG = {"primary": "P", "standby": "S"}


def grade(f: Field | None, value: float | None) -> str:
    """``ok``, ``warn`` or ``crit`` for one value against its field's static thresholds."""
    if f is None or not isinstance(value, int | float):
        return "ok"
    sign = 1 if f.higher_is_worse else -1
    if f.crit is not None and sign * value >= sign * f.crit:
        return "crit"
    if f.warn is not None and sign * value >= sign * f.warn:
        return "warn"
    return "ok"


def _wait_grade(ms: float) -> str:
    return "crit" if ms >= WAIT_CRIT_MS else "warn" if ms >= WAIT_WARN_MS else "ok"


def _worst(*sevs: str) -> str:
    return max(sevs, key=_SEVERITY.index)


def _field(schema: Schema, collector: str, name: str) -> Field | None:
    return next((f for f in schema.get(collector, ()) if f.name == name), None)


def _num(v: object) -> float | None:
    return v if isinstance(v, int | float) and not isinstance(v, bool) else None


def status_items(frame: Frame, schema: Schema) -> list[tuple[str, str, str]]:
    """``(label, text, severity)`` items of a host's status line, by its role.

    Primary: commit latency (log file sync avg/p99), SYNC Remote Write, the DG sockets' worst rto
    and their retransmits.  Standby: RFS write and the busiest disk's queue and write await.  A
    host without a role gets whatever of both it has.  Items without data are left out.
    """
    items: list[tuple[str, str, str]] = []
    waits = frame.rows("oracle_waits")

    def wait_item(label: str, event: str, with_p99: bool = False) -> None:
        row = waits.get(event, {})
        avg, p99 = _num(row.get("avg")), _num(row.get("p99"))
        if avg is None:
            return
        sev = _wait_grade(avg)
        text = fmt_num(avg)
        if with_p99 and p99 is not None:
            text += "/" + fmt_num(p99)
            sev = _worst(sev, _wait_grade(p99))
        items.append((label, text + "ms", sev))

    role = frame.role
    if role != "standby":
        wait_item("lfs", "log file sync", with_p99=True)
        wait_item("srw", "SYNC Remote Write")
        socks = {k: r for k, r in frame.rows("tcp").items() if k != "host"}
        rtos = [v for r in socks.values() if (v := _num(r.get("rto"))) is not None]
        rtx = [v for r in socks.values() if (v := _num(r.get("retransmits"))) is not None]
        if rtos:
            # a 200 ms rto costs nothing until a segment is retransmitted (seed 001)
            rto = max(rtos)
            sev = grade(_field(schema, "tcp", "rto"), rto) if sum(rtx) else "ok"
            items.append(("rto", fmt_num(rto), sev))
        if rtx:
            n = sum(rtx)
            items.append(("rtx", fmt_num(n), grade(_field(schema, "tcp", "retransmits"), n)))
    if role != "primary":
        wait_item("rfs", "RFS write")
        disks = frame.rows("disk")
        busiest = max(disks.items(), key=lambda kv: _num(kv[1].get("aqu_sz")) or 0, default=None)
        if busiest is not None and _num(busiest[1].get("aqu_sz")) is not None:
            aqu = _num(busiest[1].get("aqu_sz"))
            items.append(("aqu", fmt_num(aqu), grade(_field(schema, "disk", "aqu_sz"), aqu)))
            wa = _num(busiest[1].get("w_await"))
            if wa is not None:
                items.append(
                    ("await", fmt_num(wa) + "ms", grade(_field(schema, "disk", "w_await"), wa))
                )
    return items


class StatePublisher:
    """Sink: rewrites ``state-<pid>.json`` after every frame; removes it on close."""

    def __init__(self, schema_of: Callable[[str], Schema], directory: Path | None = None) -> None:
        self.schema_of = schema_of
        self.dir = Path(directory or runtime_dir())
        self.path = self.dir / f"state-{os.getpid()}.json"
        self._hosts: dict[str, dict] = {}
        self._ok = self._prepare()

    def _prepare(self) -> bool:
        try:
            self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            st = self.dir.stat()
        except OSError:
            return False
        return st.st_uid == os.getuid()  # never publish into a directory someone else made

    def __call__(self, frame: Frame) -> None:
        """Update this host's entry and publish."""
        if not self._ok:
            return
        schema = self.schema_of(frame.host)
        bad = sorted(
            n for n, r in frame.collectors.items() if r.status in (Status.STALE, Status.ERROR)
        )
        self._hosts[frame.host] = {
            "role": frame.role,
            "tag": _TAG.get(frame.role, frame.host),
            "time": frame.time,
            "written": time.time(),
            "interval": frame.interval,
            "items": status_items(frame, schema),
            "failing": bad,
        }
        self.publish()

    def publish(self) -> None:
        """Write the file atomically (temp + rename)."""
        state = {"format": STATE_FORMAT, "pid": os.getpid(), "hosts": self._hosts}
        tmp = self.path.with_name(f".{self.path.name}.tmp")
        try:
            tmp.write_text(json.dumps(state, separators=(",", ":")))
            os.replace(tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()

    def close(self) -> None:
        """Withdraw the state (a stopped sgmon publishes nothing)."""
        with contextlib.suppress(OSError):
            self.path.unlink()
