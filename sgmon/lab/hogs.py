"""The lab's noisy neighbours: a CPU hog, and concurrent synced writers on a log device.

``cpu``: busy loops pinned to one CPU (the log writer's), so the writer waits for the CPU.
``io``: writers doing 8 KiB O_DIRECT|O_DSYNC writes to a device region the standby log does not
use; under an IOPS cap they fill the device's queue, so await and aqu-sz rise as in seed 003.
Run by the lab: ``python -m sgmon.lab.hogs cpu|io ...``; each worker is its own process.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sys

from sgmon.lab.proc import LogDevice, bind_to_parent, device_size, pin

IO_SIZE = 8192


def _spin(cpu: int, duration: float) -> None:
    stop = bind_to_parent(duration)
    pin(cpu)
    while not stop.is_set():
        for _ in range(100_000):
            pass


def _write(device: str, start: int, length: int, duration: float) -> None:
    stop = bind_to_parent(duration)
    log = LogDevice(device, start + length, IO_SIZE)
    block = bytes(IO_SIZE)
    log.offset = start
    while not stop.is_set():
        if log.offset + IO_SIZE > start + length:
            log.offset = start
        log.write(block)
    log.close()


def main(argv: list[str] | None = None) -> int:
    """Start the workers and wait for them (they stop at --duration, on SIGTERM or with us)."""
    p = argparse.ArgumentParser(prog="python -m sgmon.lab.hogs")
    p.add_argument("kind", choices=("cpu", "io"))
    p.add_argument("--workers", type=int, default=3)
    p.add_argument("--cpu", type=int, default=0, help="cpu: the CPU to hog")
    p.add_argument("--device", help="io: the device to write to")
    p.add_argument("--duration", type=float, required=True)
    a = p.parse_args(argv)
    stop = bind_to_parent(a.duration)
    ctx = mp.get_context("fork")
    if a.kind == "cpu":
        procs = [ctx.Process(target=_spin, args=(a.cpu, a.duration)) for _ in range(a.workers)]
    else:
        size = device_size(a.device)
        region = size // 2 // a.workers  # the upper half: the standby log wraps in the lower
        region -= region % IO_SIZE
        procs = [
            ctx.Process(target=_write, args=(a.device, size // 2 + i * region, region, a.duration))
            for i in range(a.workers)
        ]
    for proc in procs:
        proc.start()
    while not stop.wait(0.2):
        pass
    for proc in procs:
        proc.terminate()
    for proc in procs:
        proc.join(timeout=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
