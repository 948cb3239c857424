"""Sink that publishes the latest state of each host for `sgmon status` (see ``sgmon.status``).

The work is done here, once per tick, so that the status command does none: the items of the
line are chosen and formatted, with the grades of the Judge (``sgmon.judgement``), and the file is
replaced atomically (write a temp file, ``os.replace``) so a reader never sees half of it.

The runtime directory (``sgmon.status.runtime_dir``: ``/tmp/sgmon-$UID`` without
``$XDG_RUNTIME_DIR``) may have been made, or symlinked, by someone else before sgmon ever ran: it
is used only when it is a directory of this user's of mode 0700, not a symlink
(``sgmon.safefs.private_dir``; otherwise one note, and nothing is published), and written by
descriptor, the temporary file under a name nobody could plant.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path

from sgmon.fields import DISK, ORACLE_WAITS, TCP
from sgmon.model import Frame, Status
from sgmon.readers.procfile import start_time
from sgmon.safefs import Dir, Refused, private_dir
from sgmon.sinks.archivedir import say
from sgmon.status import runtime_dir, state_text
from sgmon.units import fmt_num
from sgmon.verdicts import AnalysisState, Finding, Judgement

_TAG = {"primary": "P", "standby": "S"}

Item = tuple[str, str, str]
"""``(label, text, severity)`` of one item of a host's status line."""
CAUSE = "<-"
"""The label of the cause item, as in the finding titles: ``S aqu 68.8 <- standby disk sdb ...``."""
CAUSE_MAX = 60
"""Characters of a cause on the line (tmux's status-right is short: the README gives it 160)."""


def cause_item(state: AnalysisState | None) -> tuple[str, Item] | None:
    """The host and the item of the finding every reader leads with now: the first active
    warning or worse in the analysis's order (largest impact first, ``by_impact``), as its cause
    and value (``<- standby disk sdb await 77.1 ms vs svctm 1.23 ms, queue 62.8``); None when
    the analysis does not run here or nothing is at warn."""
    if state is None:
        return None
    for f in state.findings:
        if f.active and f.severity in ("warn", "crit"):
            return f.host, (CAUSE, _cause_text(f), f.severity)
    return None


def _cause_text(f: Finding) -> str:
    """A finding's cause with its value, without the symptom drawn before it (``... <-``) or
    the host and conclusion after it, cut at a word to ``CAUSE_MAX``."""
    text = f.title.split(" <- ", 1)[-1].split(f" ({f.host}", 1)[0]
    if len(text) <= CAUSE_MAX:
        return text
    return text[: CAUSE_MAX - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


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


PUBLISH_GAP = 0.001
"""Seconds between two rewrites of the state file at least, per host it holds: it holds every
host, and rewriting it after each frame cost each tick the square of the hosts (300 hosts: 300
files of 300 lines a second).  With a few hosts every frame is published; with 300, at most
every 0.3 s (a frame's figures show with the next rewrite; a reader calls a host stale only
after three intervals)."""


class StatePublisher:
    """Sink: rewrites ``state-<pid>.txt`` after a frame (``PUBLISH_GAP`` apart); removes it on
    close."""

    def __init__(
        self,
        directory: Path | None = None,
        name: str = "sgmon",
        warn: Callable[[str], None] = say,
    ) -> None:
        self.dir = Path(directory or runtime_dir())
        self.name = name
        """The configuration's name: `sgmon status --name` picks a publisher by it."""
        self.path = self.dir / f"state-{os.getpid()}.txt"
        self._start = start_time(os.getpid()) or "0"
        self._hosts: dict[str, dict] = {}
        self._cause: tuple[str, Item] | None = None
        """The host and item of the leading finding (``cause_item``), as of the latest frame
        that carried the analysis."""
        self._at = self._prepare(warn)
        self._next = 0.0  # monotonic time of the next publish

    def _prepare(self, warn: Callable[[str], None]) -> Dir | None:
        """The runtime directory, made 0700 when missing; None (said once when it is someone
        else's, open to others, or a symlink) when nothing may be published there."""
        try:
            return private_dir(str(self.dir), create=True)
        except Refused as e:
            warn(f"{e}, not a private directory; `sgmon status` does not show this run")
        except OSError:
            pass
        return None

    def __call__(self, frame: Frame, judgement: Judgement) -> None:
        """Update this host's entry and publish."""
        if self._at is None:
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
        if judgement.state is not None:
            self._cause = cause_item(judgement.state)
        now = time.monotonic()
        if now >= self._next:
            self._next = now + PUBLISH_GAP * len(self._hosts)
            self.publish()

    def publish(self) -> None:
        """Write the file atomically (temp + rename)."""
        if self._at is None:
            return
        hosts = self._hosts
        if self._cause is not None and self._cause[0] in hosts:
            host, item = self._cause
            hosts = dict(hosts, **{host: dict(hosts[host], items=[*hosts[host]["items"], item])})
        text = state_text(os.getpid(), self._start, hosts, self.name)
        with contextlib.suppress(OSError):  # a full tmpfs: the next tick tries again
            self._at.write_replace(self.path.name, text.encode(), sync=False)

    def close(self) -> None:
        """Withdraw the state (a stopped sgmon publishes nothing)."""
        if self._at is not None:
            with contextlib.suppress(OSError):
                self._at.unlink(self.path.name)
            self._at.close()
            self._at = None
