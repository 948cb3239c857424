"""The lab's fault injectors, each switchable on and off while the lab runs.

Each one reproduces a seed incident with the real kernel mechanism, not a simulation:

* ``loss``: random packet loss toward the standby's port (nftables ``numgen random``); tail
  losses wait for the 200 ms minimum RTO (seed 001).
* ``rto_min``: ``ip route change ... rto_min 10ms`` on the primary's route to the standby, the
  fix of seed 001.
* ``iops``: an IOPS cap on the standby log device's backing disk (cgroup v1 blkio) with
  concurrent synced writers, so await and aqu-sz rise on the standby log device (seed 003).
* ``iops_async``: the same on the ASYNC standby's log device (seed 003's capped ASYNC standby:
  it falls behind, commits do not slow); only in a lab with an ASYNC standby.
* ``cpu``: busy loops pinned to the log writer's CPU (primary CPU starvation, seed 000).
* ``switches``: a burst of log switches, one every 0.5 s (seed 000: log switches as outliers).
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sgmon.lab.kernel import ThrottledLoop
    from sgmon.lab.run import Lab

FAULTS: dict[str, str] = {
    "loss": "packet loss toward the standby (nftables numgen), RTO stalls on the primary",
    "silent": "every packet toward the standby's DG port dropped, with no reset: commits hang "
    "while the primary's socket backs its RTO off",
    "rto_min": "rto_min 10ms on the primary's route to the standby (the fix for 200 ms RTO stalls)",
    "iops": "IOPS cap on the standby log device with concurrent synced writers",
    "iops_async": "the same on the ASYNC standby's log device (implies --async-standby)",
    "cpu": "CPU hog pinned to the primary log writer's CPU",
    "switches": "a burst of log switches on the primary",
}
ASYNC_FAULTS = ("iops_async",)
"""Faults on the ASYNC standby: a lab scheduled with one of them gets that standby."""


@dataclass
class Fault:
    """One injector: what it does, and whether it is on."""

    name: str
    on_: Callable[[], None]
    off_: Callable[[], None]
    active: bool = False

    def set(self, on: bool) -> None:
        """Switch on or off (idempotent)."""
        if on == self.active:
            return
        (self.on_ if on else self.off_)()
        self.active = on


def build(lab: Lab) -> dict[str, Fault]:
    """The lab's injectors, bound to its namespaces, devices and processes."""
    o = lab.opts
    hogs: dict[str, subprocess.Popen] = {}

    def start_hog(
        name: str, kind: str, side: str, *args: str, cap: ThrottledLoop | None = None
    ) -> None:
        proc = lab.spawn(side, "sgmon.lab.hogs", kind, *args, "--duration", str(o.duration))
        if cap is not None:  # its writers write under the cap, beside the standby's RFS
            cap.add_pid(proc.pid)
        hogs[name] = proc

    def stop_hog(name: str) -> None:
        proc = hogs.pop(name, None)
        if proc is not None:
            lab.end(proc)

    def iops(name: str, side: str, log: ThrottledLoop) -> Fault:
        """The cap on one standby's log device, with the hogs writing under it."""

        def on() -> None:
            log.set_write_iops(o.iops)
            start_hog(
                name, "io", side, "--device", log.device, "--workers", str(o.io_writers), cap=log
            )

        def off() -> None:
            stop_hog(name)
            log.set_write_iops(None)

        return Fault(name, on, off)

    def signal_primary(sig: int) -> None:
        os.kill(lab.primary.pid, sig)

    pair = lab.pair
    out = {
        "loss": Fault(
            "loss",
            lambda: pair.add_loss("b", o.loss_permille, o.port),
            lambda: pair.clear_loss("b"),
        ),
        "silent": Fault(
            "silent",
            lambda: pair.add_loss("b", 1000, o.port),
            lambda: pair.clear_loss("b"),
        ),
        "rto_min": Fault(
            "rto_min",
            lambda: pair.set_rto_min("a", o.rto_min_ms),
            lambda: pair.set_rto_min("a", None),
        ),
        "iops": iops("iops", "b", lab.standby_log),
        "cpu": Fault(
            "cpu",
            lambda: start_hog(
                "cpu", "cpu", "a", "--cpu", str(lab.primary_cpu), "--workers", str(o.cpu_hogs)
            ),
            lambda: stop_hog("cpu"),
        ),
        "switches": Fault(
            "switches",
            lambda: signal_primary(signal.SIGUSR1),
            lambda: signal_primary(signal.SIGUSR2),
        ),
    }
    if lab.async_log is not None:
        out["iops_async"] = iops("iops_async", "c", lab.async_log)
    return out
