"""Sink that publishes the latest state of each host for `sgmon status` (see ``sgmon.status``).

The work is done here, once per tick, so that the status command does none: the items of the
line are chosen and formatted, with the grades of the Judge (``sgmon.judgement``), and the file is
replaced atomically (write a temp file, ``os.replace``) so a reader never sees half of it.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from sgmon.model import Frame, Status, number
from sgmon.readers.procfile import start_time
from sgmon.status import runtime_dir, state_text
from sgmon.units import fmt_num
from sgmon.verdicts import Judgement

_TAG = {"primary": "P", "standby": "S"}


def status_items(frame: Frame, judgement: Judgement) -> list[tuple[str, str, str]]:
    """``(label, text, severity)`` items of a host's status line, by its role.

    Primary: commit latency (log file sync avg/p99), SYNC Remote Write, the DG sockets' worst rto
    and their retransmits.  Standby: RFS write and the busiest disk's queue and write await.  A
    host without a role gets whatever of both it has.  Items without data are left out.  Each
    item's severity is the Judge's grade of the cells it shows (the worst of them).
    """
    items: list[tuple[str, str, str]] = []
    waits = frame.rows("oracle_waits")

    def wait_item(label: str, event: str, with_p99: bool = False) -> None:
        row = waits.get(event, {})
        avg, p99 = number(row.get("avg")), number(row.get("p99"))
        if avg is None:
            return
        cells = [("oracle_waits", event, "avg")]
        text = fmt_num(avg)
        if with_p99 and p99 is not None:
            text += "/" + fmt_num(p99)
            cells.append(("oracle_waits", event, "p99"))
        items.append((label, text + "ms", judgement.worst(cells)))

    role = frame.role
    if role != "standby":
        wait_item("lfs", "log file sync", with_p99=True)
        wait_item("srw", "SYNC Remote Write")
        socks = {k: r for k, r in frame.rows("tcp").items() if k != "host"}
        rtos = [v for r in socks.values() if (v := number(r.get("rto"))) is not None]
        rtx = [v for r in socks.values() if (v := number(r.get("retransmits"))) is not None]
        if rtos:  # an idle socket's 200 ms rto is graded ok: it costs nothing (seed 001)
            sev = judgement.worst(("tcp", k, "rto") for k in socks)
            items.append(("rto", fmt_num(max(rtos)), sev))
        if rtx:
            sev = judgement.worst(("tcp", k, "retransmits") for k in socks)
            items.append(("rtx", fmt_num(sum(rtx)), sev))
    if role != "primary":
        wait_item("rfs", "RFS write")
        disks = frame.rows("disk")
        busiest = max(disks.items(), key=lambda kv: number(kv[1].get("aqu_sz")) or 0, default=None)
        if busiest is not None and number(busiest[1].get("aqu_sz")) is not None:
            dev = busiest[0]
            aqu = number(busiest[1].get("aqu_sz"))
            items.append(("aqu", fmt_num(aqu), judgement.grade("disk", dev, "aqu_sz")))
            wa = number(busiest[1].get("w_await"))
            if wa is not None:
                items.append(("await", fmt_num(wa) + "ms", judgement.grade("disk", dev, "w_await")))
    return items


class StatePublisher:
    """Sink: rewrites ``state-<pid>.txt`` after every frame; removes it on close."""

    def __init__(self, directory: Path | None = None, name: str = "sgmon") -> None:
        self.dir = Path(directory or runtime_dir())
        self.name = name
        """The configuration's name: `sgmon status --name` picks a publisher by it."""
        self.path = self.dir / f"state-{os.getpid()}.txt"
        self._start = start_time(os.getpid()) or "0"
        self._hosts: dict[str, dict] = {}
        self._ok = self._prepare()

    def _prepare(self) -> bool:
        try:
            self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            st = self.dir.stat()
        except OSError:
            return False
        return st.st_uid == os.getuid()  # never publish into a directory someone else made

    def __call__(self, frame: Frame, judgement: Judgement) -> None:
        """Update this host's entry and publish."""
        if not self._ok:
            return
        bad = sorted(
            n for n, r in frame.collectors.items() if r.status in (Status.STALE, Status.ERROR)
        )
        self._hosts[frame.host] = {
            "role": frame.role,
            "tag": _TAG.get(frame.role, frame.host),
            "time": frame.time,
            "written": time.time(),
            "interval": frame.interval,
            "items": status_items(frame, judgement),
            "failing": bad,
        }
        self.publish()

    def publish(self) -> None:
        """Write the file atomically (temp + rename)."""
        tmp = self.path.with_name(f".{self.path.name}.tmp")
        try:
            tmp.write_text(state_text(os.getpid(), self._start, self._hosts, self.name))
            os.replace(tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()

    def close(self) -> None:
        """Withdraw the state (a stopped sgmon publishes nothing)."""
        with contextlib.suppress(OSError):
            self.path.unlink()
