"""The disk collector's device selection, option errors and counter edge cases."""

from __future__ import annotations

import contextlib
import os
import struct
import subprocess
import tempfile
import time
from pathlib import Path

import nslab
import pytest

from collectors.disk import DiskCollector


def _mbr(sectors: int) -> bytes:
    """A DOS partition table with one Linux partition from sector 2048 to the end."""
    entry = struct.pack("<B3sB3sII", 0, b"\0\0\0", 0x83, b"\0\0\0", 2048, sectors - 2048)
    return bytes(446) + entry + bytes(48) + b"\x55\xaa"


def _partition_shows(node: str) -> bool:
    """Whether the device node appears within 2 s (the kernel adds it a moment later)."""
    for _ in range(20):
        if os.path.exists(node):
            return True
        time.sleep(0.1)
    return False


@contextlib.contextmanager
def partitioned_loop():
    """A 16 MiB loop device with one partition (loopNp1); detached on exit."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
        img = Path(d) / "p.img"
        with open(img, "wb") as f:
            f.truncate(16 << 20)
            f.write(_mbr(16 << 11))
        dev = nslab.sh("losetup", "-f", "-P", "--show", str(img)).strip()
        try:
            # a kernel built without the DOS table parser (this one) adds no partition: partx
            # adds it by BLKPG (and fails harmlessly where the kernel already has)
            subprocess.run(["partx", "-a", dev], capture_output=True)
            yield Path(dev).name
        finally:
            subprocess.run(["losetup", "-d", dev], capture_output=True)


def _sample(opts: dict | None = None) -> dict:
    c = DiskCollector(opts)
    c.open()
    try:
        return c.sample()
    finally:
        c.close()


def _read_some(dev: str) -> None:
    fd = os.open(dev, os.O_RDONLY)
    try:
        os.read(fd, 4096)
    finally:
        os.close(fd)


def test_partitions_are_opt_in() -> None:
    nslab.require_root("losetup")
    with partitioned_loop() as loop:
        part = f"{loop}p1"
        if not _partition_shows(f"/dev/{part}"):
            pytest.skip("neither the kernel nor partx added a partition to a loop device")
        _read_some(f"/dev/{part}")
        seen = _sample()
        assert loop in seen and part not in seen
        assert {loop, part} <= set(_sample({"partitions": True}))
        assert set(_sample({"partitions": True, "include": ["loop*"]})) >= {loop, part}


def test_loop_devices_only_with_io_and_globs() -> None:
    nslab.require_root("losetup")
    with partitioned_loop() as loop:
        assert all(raw["rd_ios"] or raw["wr_ios"] for n, raw in _sample().items() if "loop" in n)
        _read_some(f"/dev/{loop}")
        assert loop in _sample()
        picked = _sample({"include": ["loop*"]})
        assert loop in picked and all(n.startswith("loop") for n in picked)
        assert not any(n.startswith("loop") for n in _sample({"exclude": ["loop*"]}))
        assert set(_sample({"include": [loop]})) == {loop}
