"""One sgmon command run in this interpreter, as the hostile corpus runs most of its cases: a
fresh ``python -m sgmon`` costs 0.5-1 s of start-up, which 800 cases cannot pay in CI.

``run`` calls ``sgmon.cli.main`` with the arguments, under a time bound (SIGALRM, raised as
``Hang`` out of whatever the command was blocked in: an open of a FIFO, a read, a sleep), with
stdout and stderr captured by the caller's ``capfd``.  An exception that escapes ``main`` is a
traceback the user would have seen: the result holds it, and ``sound`` fails on it."""

from __future__ import annotations

import os
import signal
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import pytest

from sgmon.cli import main

CONTROL = {chr(c) for c in [*range(0, 9), *range(11, 32), 127, *range(0x80, 0xA0)]}
"""What must never reach a terminal raw: C0 controls but tab and newline, DEL, C1 controls."""


class Hang(Exception):
    """The command did not end within its bound."""


@dataclass
class Result:
    rc: int | None
    out: str
    err: str
    escaped: BaseException | None

    def notes(self) -> list[str]:
        return [x for x in self.err.splitlines() if x.strip()]


@contextmanager
def bound(seconds: float) -> Iterator[None]:
    """Raise ``Hang`` in the main thread after ``seconds``."""

    def ring(signum: int, frame: FrameType | None) -> None:
        raise Hang(f"no end after {seconds}s")

    before = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)


def run(capfd: pytest.CaptureFixture[str], *argv: str, seconds: float = 20) -> Result:
    """``sgmon ARGV`` in-process: exit code, stdout, stderr and what escaped ``main``."""
    capfd.readouterr()
    rc: int | None = None
    escaped: BaseException | None = None
    try:
        with bound(seconds):
            rc = main(list(argv))
    except SystemExit as e:  # argparse's --help; a command never exits so
        rc = e.code if isinstance(e.code, int) else 2
    except BaseException as e:  # a Hang, or the traceback a user would see
        escaped = e
    out, err = capfd.readouterr()
    return Result(rc, out, err, escaped)


def sound(r: Result, *secrets: str, codes: tuple[int, ...] = (0, 1, 2, 3)) -> None:
    """What every case holds: no hang, no traceback, a known exit code, every stderr line an
    ``sgmon:`` line, no raw control character and no secret in any output."""
    assert not isinstance(r.escaped, Hang), f"hung: {r.err[-2000:]}"
    assert r.escaped is None, f"traceback: {r.escaped!r}"
    assert "Traceback" not in r.err + r.out, r.err
    assert r.rc in codes, (r.rc, r.err[-2000:])
    assert all(x.startswith("sgmon: ") for x in r.notes()), r.err[-2000:]
    raw = CONTROL & set(r.out + r.err)
    assert not raw, f"raw control characters {sorted(map(hex, map(ord, raw)))}: {r.err[-500:]}"
    for s in secrets:
        assert s not in r.out + r.err, f"the secret {s!r} was printed"


def tree(root: Path, skip: tuple[Path, ...] = ()) -> dict[str, tuple[int, int, int, bytes]]:
    """Every entry under ``root`` but ``skip``: kind, mode, link count and (a regular file's)
    content or (a symlink's) target, never following a link: what a case compares before and
    after, so that nothing outside its archive was written, deleted or changed."""
    out: dict[str, tuple[int, int, int, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = [n for n in dirnames if here / n not in skip]
        for n in [*dirnames, *filenames]:
            p = here / n
            if p in skip:
                continue
            st = p.lstat()
            body = b""
            if stat.S_ISREG(st.st_mode) and st.st_size > 1 << 20:
                body = f"{st.st_size} {st.st_mtime_ns}".encode()
            elif stat.S_ISREG(st.st_mode) and st.st_mode & 0o400:
                body = p.read_bytes()
            elif stat.S_ISLNK(st.st_mode):
                body = os.readlink(p).encode()
            out[str(p.relative_to(root))] = (stat.S_IFMT(st.st_mode), st.st_mode, st.st_nlink, body)
    return out
