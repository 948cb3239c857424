"""Each file of a recording damaged in each way: every table of a host, its findings and events
files and meta.json, cut mid-row, cut inside a UTF-8 character, with NUL bytes, a 2 MB line, a
wrong header, emptied, overwritten with random bytes, or replaced by a symlink to a file outside,
a FIFO, a device node, a directory.  ``replay --summary`` (and, for meta.json and one table,
``check --from``) runs in-process on each (tests/system/hostile/inproc.py) and must: end in time
without a traceback, say what it skipped and where in ``sgmon:`` lines, print nothing raw, keep
the other host whole (a damaged meta.json never hides a host), and leave everything outside the
archive as it was."""

from __future__ import annotations

import os
import random
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from inproc import bound, run, sound, tree

from sgmon.archive import EVENT_COLUMNS
from sgmon.hosts.replay import ReplaySource

pytestmark = pytest.mark.timeout(60)

VICTIM = b"the user's own file, outside the archive\n"
HOSTS = ("primary", "standby")


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Ten simulated seconds of the healthy pair, one table per collector."""
    root = tmp_path_factory.mktemp("base") / "arch"
    r = subprocess.run(
        [sys.executable, "-m", "sgmon", "record", "--simulate", "healthy", "--speed", "20",
         "--duration", "10s", "--dir", str(root), "--quiet", "--rotate", "1d"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    (root / "primary" / "events.csv").write_text(
        ",".join(EVENT_COLUMNS)
        + "\n"
        + "".join(
            f"{t},primary,disk,note,sdb,event {i},{i},{t}\n"
            for i, t in enumerate(_times(root, "primary")[:5])
        )
    )
    return root


def _times(root: Path, host: str) -> list[str]:
    cpu = next((root / host).glob("cpu_*.csv"))
    return sorted({line.split(",", 1)[0] for line in cpu.read_text().splitlines()[1:]})


def _counts(root: Path) -> dict[str, int]:
    """Frames per host, as a replay reads them."""
    with bound(20):
        src = ReplaySource(root, speed=0)
        return {h.name: len(src.frames(h.name)) for h in src.hosts}


def _files() -> list[str]:
    """meta.json and every file of the primary's directory that a replay reads, as the base
    recording makes them (names without their hour stamp: ``disk_*``); findings.csv is the
    recorder's output, read by nothing of sgmon's."""
    names = ["meta.json", "primary/events.csv"]
    names += [
        f"primary/{c}_*.csv"
        for c in [
            "cpu",
            "disk",
            "netdev",
            "oracle_dg",
            "oracle_redo",
            "oracle_trace",
            "oracle_waits",
            "paging",
            "procs",
            "tcp",
        ]
    ]
    return names


def _mid_row(p: Path) -> None:
    data = p.read_bytes()
    p.write_bytes(data[: len(data) * 3 // 5])


def _utf8_cut(p: Path) -> None:
    lines = p.read_bytes().split(b"\n")
    lines.insert(2, lines[1][: len(lines[1]) // 2] + b"\xc3\xa9\xe2\x82")
    p.write_bytes(b"\n".join(lines))


def _nul(p: Path) -> None:
    data = bytearray(p.read_bytes())
    mid = len(data) // 2
    data[mid : mid + 64] = b"\0" * 64
    p.write_bytes(bytes(data))


def _huge_line(p: Path) -> None:
    lines = p.read_bytes().split(b"\n")
    lines.insert(2, b"2026-11-29T08:00:00.000+00:00," + b"y" * (2 << 20))
    p.write_bytes(b"\n".join(lines))


def _wrong_header(p: Path) -> None:
    lines = p.read_bytes().split(b"\n")
    lines[0] = b"when,who,what,how_much_pct"
    p.write_bytes(b"\n".join(lines))


def _empty(p: Path) -> None:
    p.write_bytes(b"")


def _random(p: Path) -> None:
    p.write_bytes(random.Random(p.name).randbytes(max(4096, p.stat().st_size)))


def _symlink_out(p: Path) -> None:
    p.unlink()
    p.symlink_to(p.parents[2 if p.parent.name in HOSTS else 1] / "outside" / "victim.csv")


def _fifo(p: Path) -> None:
    p.unlink()
    os.mkfifo(p)


def _device(p: Path) -> None:
    p.unlink()
    os.mknod(p, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # what /dev/zero is


def _directory(p: Path) -> None:
    p.unlink()
    p.mkdir()
    (p / "inside.csv").write_text("time,host\n")


DAMAGE: dict[str, Callable[[Path], None]] = {
    "cut-mid-row": _mid_row,
    "cut-in-utf8": _utf8_cut,
    "nul-bytes": _nul,
    "2mb-line": _huge_line,
    "wrong-header": _wrong_header,
    "emptied": _empty,
    "random-bytes": _random,
    "symlink-outside": _symlink_out,
    "fifo": _fifo,
    "char-device": _device,
    "directory": _directory,
}
CHECKED = {"meta.json", "primary/disk_*.csv"}
"""The files whose damage ``check --from`` reads too (a what-if costs a second a run)."""


def _damaged(base: Path, tmp: Path, name: str, how: str) -> tuple[Path, Path]:
    root = tmp / "arch"
    shutil.copytree(base, root)
    outside = tmp / "outside"
    outside.mkdir()
    (outside / "victim.csv").write_bytes(VICTIM)
    path = next(root.glob(name))
    DAMAGE[how](path)
    return root, path


@pytest.mark.parametrize("how", sorted(DAMAGE))
@pytest.mark.parametrize("name", _files())
def test_a_damaged_file_is_read_around(capfd, base, tmp_path, name, how):
    root, path = _damaged(base, tmp_path, name, how)
    before = tree(tmp_path, skip=(root,))
    whole = _counts(base)
    r = run(capfd, "replay", str(root), "--summary")
    sound(r, codes=(0, 1, 3))
    said = r.err
    if name in CHECKED:
        c = run(capfd, "check", "--from", str(root), "--format", "json")
        sound(c)
        assert c.out.startswith("{"), c.err
        said += c.err
    assert path.name in said or (how == "emptied" and path.name == "events.csv"), said
    assert tree(tmp_path, skip=(root,)) == before, "something outside the archive changed"
    kept = _counts(root)
    assert kept.get("standby") == whole["standby"], (kept, whole, said)
    if name == "meta.json":
        assert kept.get("primary") == whole["primary"], (kept, whole, said)
