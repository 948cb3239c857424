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

from sgmon.fields import DISK, ORACLE_WAITS, TCP
from sgmon.model import Frame, Status
from sgmon.readers.procfile import start_time
from sgmon.status import runtime_dir, state_text
from sgmon.units import fmt_num
from sgmon.verdicts import Judgement

_TAG = {"primary": "P", "standby": "S"}

Item = tuple[str, str, str]
"""``(label, text, severity)`` of one item of a host's status line."""


def status_items(frame: Frame, judgement: Judgement) -> list[Item]:
    """``(label, text, severity)`` items of a host's status line, by its role.

    Primary: commit latency (log file sync avg/p99), SYNC Remote Write, the DG sockets' worst rto
    and their retransmits.  Standby: RFS write and the busiest disk's queue and write await.  A
    host without a role gets whatever of both it has.  Items without data are left out.  Each
    item's severity is the Judge's grade of the cells it shows (the worst of them).
    """
    items: list[Item | None] = []
    if frame.role != "standby":
        items.append(_wait_item(frame, judgement, "lfs", "log file sync", with_p99=True))
        items.append(_wait_item(frame, judgement, "srw", "SYNC Remote Write"))
        items += _socket_items(frame, judgement)
    if frame.role != "primary":
        items.append(_wait_item(frame, judgement, "rfs", "RFS write"))
        items += _disk_items(frame, judgement)
    return [i for i in items if i is not None]


def _wait_item(
    frame: Frame, judgement: Judgement, label: str, event: str, with_p99: bool = False
) -> Item | None:
    """A wait event's average (and p99) in ms; None when the event has no average."""
    row = ORACLE_WAITS.avg.row(frame, event)
    avg, p99 = ORACLE_WAITS.avg.of(row), ORACLE_WAITS.p99.of(row)
    if avg is None:
        return None
    cells = [ORACLE_WAITS.avg.path(event)]
    text = fmt_num(avg)
    if with_p99 and p99 is not None:
        text += "/" + fmt_num(p99)
        cells.append(ORACLE_WAITS.p99.path(event))
    return label, text + "ms", judgement.worst(cells)


def _socket_items(frame: Frame, judgement: Judgement) -> list[Item]:
    """The DG sockets' worst rto and their retransmits (the host-wide row left out)."""
    socks = {k: r for k, r in frame.rows(TCP.name).items() if not TCP.Rows.host.matches(k)}
    rtos = [v for r in socks.values() if (v := TCP.rto.of(r)) is not None]
    rtx = [v for r in socks.values() if (v := TCP.retransmits.of(r)) is not None]
    items = []
    if rtos:  # an idle socket's 200 ms rto is graded ok: it costs nothing (seed 001)
        sev = judgement.worst(TCP.rto.path(k) for k in socks)
        items.append(("rto", fmt_num(max(rtos)), sev))
    if rtx:
        sev = judgement.worst(TCP.retransmits.path(k) for k in socks)
        items.append(("rtx", fmt_num(sum(rtx)), sev))
    return items


def _disk_items(frame: Frame, judgement: Judgement) -> list[Item]:
    """The busiest disk's queue and write await (by queue size)."""
    disks = frame.rows(DISK.name)
    busiest = max(disks.items(), key=lambda kv: DISK.aqu_sz.of(kv[1]) or 0, default=None)
    if busiest is None:
        return []
    dev, row = busiest
    aqu = DISK.aqu_sz.of(row)
    if aqu is None:
        return []
    items = [("aqu", fmt_num(aqu), judgement.grade(*DISK.aqu_sz.path(dev)))]
    wa = DISK.w_await.of(row)
    if wa is not None:
        items.append(("await", fmt_num(wa) + "ms", judgement.grade(*DISK.w_await.path(dev))))
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
