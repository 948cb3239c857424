"""A cheap far side for measuring sgmon's own side of many remote hosts: it stands in for ssh
(a host's ``ssh_command``) and replays a canned stream of the installed agent or of the pump,
one tick a second on the wall-clock second, its clocks and numbers moved to now.

    ssh_command = ["python3", "-S", "bench/farside.py", "agent", "CANNED"]   # or "pump"

The arguments ssh would get (options, target, remote command) are ignored.  ``CANNED`` is what
``bench/record_hosts.py --capture`` saved of one real session: for ``agent`` the NDJSON lines
of ``sgmon agent`` (its header, then frames), for ``pump`` the bytes the pump wrote (its start,
its hello, then ticks).  Pings on stdin are answered with this machine's clock, so the
consumer's clock offset is about 0; the far side ends when its stdin closes.

It costs little (a sleep, one write a second): what a run measures is the consumer's side.
Standard library only, no site (``-S``), so 1,000 of them start in seconds.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import struct
import sys
import time

MAGIC = b"\0sgmon-pump\0"
CLOCKS = struct.Struct("<ddI")
"""The head of a pump tick: wall clock, monotonic clock, number (sgmon/remote/pump.py HEAD)."""
STAMP = re.compile(rb'"time":[-0-9.e+]+,"seq":[0-9]+')


def agent(path: str) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """The agent's header line, and each frame line split around its time and number."""
    with open(path, "rb") as f:
        header, *lines = [line for line in f.read().splitlines() if line.strip()]
    frames = []
    for line in lines:
        m = STAMP.search(line)
        if m is not None and line.startswith(b'{"v"'):
            frames.append((line[: m.start()], line[m.end() :]))
    if not frames:
        sys.exit(f"farside: no frame in {path}")
    return header + b"\n", frames


def pump(path: str) -> tuple[bytes, bytes, bytes]:
    """The pump's start and hello, its first tick (every file) and a later one (what a steady
    tick ships)."""
    with open(path, "rb") as f:
        data = f.read()
    pos = data.index(MAGIC) + len(MAGIC)
    messages = []
    while pos + 5 <= len(data):
        kind = data[pos : pos + 1]
        (size,) = struct.unpack_from(">I", data, pos + 1)
        messages.append((kind, data[pos : pos + 5 + size]))
        pos += 5 + size
    hello = next(m for k, m in messages if k == b"H")
    ticks = [m for k, m in messages if k == b"T"]
    if len(ticks) < 3:
        sys.exit(f"farside: fewer than 3 ticks in {path}")
    return MAGIC + hello, ticks[0], ticks[2]


def message(kind: bytes, payload: bytes) -> bytes:
    return kind + struct.pack(">I", len(payload)) + payload


def write(data: bytes) -> None:
    while data:
        data = data[os.write(1, data) :]


class Stdin:
    """The consumer's lines (after the pump's program and request, which are skipped)."""

    def __init__(self, skip_program: bool) -> None:
        self.buf = b""
        self.skip = skip_program

    def lines(self) -> list[bytes] | None:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            return None
        self.buf += chunk
        if self.skip:  # "<length>\n", the program, then one line of request
            head, nl, rest = self.buf.partition(b"\n")
            if not nl or len(rest) < int(head):
                return []
            rest = rest[int(head) :]
            if b"\n" not in rest:
                return []
            self.buf, self.skip = rest.partition(b"\n")[2], False
        *done, self.buf = self.buf.split(b"\n")
        return done


def main() -> None:
    mode, path = sys.argv[1], sys.argv[2]
    stdin = Stdin(skip_program=mode == "pump")
    if mode == "agent":
        header, frames = agent(path)
        write(header)
    else:
        start, first, steady = pump(path)
        write(start)
    seq = 0
    due = int(time.time()) + 1
    while True:
        wait = due - time.time()
        if wait > 0:
            if select.select([0], [], [], wait)[0]:
                lines = stdin.lines()
                if lines is None:
                    return
                for line in lines:
                    if line.startswith(b"ping "):
                        pong = json.dumps({"pong": float(line[5:]), "time": time.time()})
                        write(
                            pong.encode() + b"\n"
                            if mode == "agent"
                            else message(b"P", pong.encode())
                        )
            continue
        seq += 1
        if mode == "agent":
            before, after = frames[seq % len(frames)]
            write(before + b'"time":%.1f,"seq":%d' % (due, seq) + after + b"\n")
        else:
            tick = bytearray(first if seq == 1 else steady)
            CLOCKS.pack_into(tick, 5, time.time(), time.monotonic(), seq)
            write(bytes(tick))
        due = max(due + 1, int(time.time()) + 1)


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):  # the consumer went away
        main()
