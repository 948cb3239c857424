"""Real test hosts: network namespaces joined by veth, packet loss, rto_min, throttled loop disks.

The machinery lives in ``sgmon.lab.kernel`` (``sgmon lab`` builds the same hosts for a DBA); this
module adds what only tests need: skipping, with the reason, where root, a tool or a kernel
feature is missing.  Every resource is removed by the context manager that made it, also when the
test fails, and names carry a per-process suffix so parallel runs never collide.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from sgmon.hosts import Source
from sgmon.lab import kernel
from sgmon.lab.kernel import (  # noqa: F401  (re-exported for the tests)
    LoopDevice,
    NsPair,
    ThrottledLoop,
    hold_loopback,
    loop_device,
    ns_pair,
    sh,
    unique,
)

FAR_PYTHON = os.environ.get("SGMON_TEST_PYTHON3_DIR", "")
"""A directory holding the ``python3`` a far host runs the pump with (a CPython 3.6: the floor
it must run on), else the system's."""
FAR_SSH = ("bash", "-c", f'exec env -i PATH={FAR_PYTHON}:/usr/bin:/bin bash -c "${{!#}}"', "ssh")
"""``ssh`` to this machine as a far host with nothing installed: runs the remote command in a
bare environment (no venv, no PYTHONPATH)."""


def run_source(src: Source, seconds: float, during: Callable[[], object] | None = None) -> list:
    """The frames a source emits in ``seconds`` (``during`` called every 0.1 s meanwhile); the
    source closed after."""
    frames: list = []
    stop = threading.Event()
    t = threading.Thread(target=src.run, args=(frames.append, stop))
    t.start()
    try:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if during:
                during()
            time.sleep(0.1)
    finally:
        stop.set()
        t.join(10)
        src.close()
    assert not t.is_alive()
    return frames


def require_root(*tools: str) -> None:
    """Skip the test, with the reason, unless root and the given tools are present."""
    reason = kernel.missing(*tools)
    if reason:
        pytest.skip(reason)


def require_lab() -> None:
    """Skip, with the reason, where ``sgmon lab`` cannot run (root, tools, netns, blkio)."""
    require_root("ip", "nft", "losetup", "dd", "findmnt", "lsblk")
    if not os.path.exists("/proc/self/ns/net"):
        pytest.skip("needs network namespaces (CONFIG_NET_NS)")
    if not kernel.blkio_available():
        pytest.skip("needs cgroup v1 blkio throttling (/sys/fs/cgroup/blkio)")


@contextlib.contextmanager
def throttled_loop(write_iops: int | None, size_mb: int = 64) -> Iterator[ThrottledLoop]:
    """``sgmon.lab.kernel.throttled_loop``, skipping the test where cgroup v1 blkio is absent."""
    if not kernel.blkio_available():
        pytest.skip("needs cgroup v1 blkio throttling (/sys/fs/cgroup/blkio)")
    with kernel.throttled_loop(write_iops, size_mb) as loop:
        yield loop


# ~400 random 8 KiB O_DIRECT reads per second for at most `seconds`
READER = """
import mmap, os, random, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
buf, end = mmap.mmap(-1, 8192), time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    os.preadv(fd, [buf], random.randrange(8192) * 8192)
    time.sleep(0.0025)
"""


@contextlib.contextmanager
def disk_load(loop: ThrottledLoop, n: int, seconds: int):
    """``n`` dd processes writing 8 KiB O_DIRECT|O_DSYNC blocks under the throttle, one reader."""
    procs: list[subprocess.Popen] = []
    try:
        procs.append(subprocess.Popen([sys.executable, "-c", READER, loop.device, str(seconds)]))
        for i in range(n):
            procs.append(
                subprocess.Popen(
                    [
                        "timeout", str(seconds), "dd", "if=/dev/zero", f"of={loop.device}",
                        "bs=8k", "count=100000", f"seek={i * 512}", "oflag=direct,dsync",
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    preexec_fn=lambda: loop.add_pid(0),  # 0: the child itself
                )
            )  # fmt: skip
        yield procs
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
