"""The lab primary: committing sessions and a log writer shipping redo in SYNC AFFIRM mode.

Sessions append redo to a shared buffer and wait until the log writer has made it durable
(``log file sync``).  The log writer takes everything buffered (group commit), sends it to the
standby, writes it to the local log device meanwhile (``log file parallel write``), then waits
for the standby's acknowledgement (``SYNC Remote Write``) before waking the sessions.  So a
retransmission stall, a slow standby disk, a log switch or a starved CPU delay commits exactly
as in the seeds.  With ``--async-standby`` the same redo also goes to a second standby ASYNC,
from a thread of its own that no commit waits for (seed 003).  SIGUSR1 starts a burst of log
switches, SIGUSR2 ends it.

Run by the lab inside the primary namespace: ``python -m sgmon.lab.primary ...``.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import socket
import sys
import threading
import time
from collections import deque

from sgmon.lab.proc import LogDevice, bind_to_parent, device_size, name_thread, pin
from sgmon.lab.waits import WaitRecorder
from sgmon.lab.wire import ACK, HEAD, MAX_BATCH, PORT, REDO, SWITCH
from sgmon.probe.protocol import ProtocolError, recv_exact
from sgmon.sim.standin import StandIn

EVENTS = ("log file sync", "log file parallel write", "SYNC Remote Write", "Redo Transport MISC")
SWITCH_BYTES = 1 << 20  # written at each log switch (header and preformat of the new log)
SWITCH_EVERY = 0.5  # seconds between switches during a burst
SWITCH_BURST_MAX = 15.0  # a burst ends by itself after this long
ASYNC_BACKLOG = 100_000
"""Messages the ASYNC sender may fall behind by; past it new redo is merged into the last one
(a real TTnn then reads the online logs).  Bounds the lab's memory, never the log writer."""

SID = "PROD"
"""The instance's name: its V$ stand-in's DB_UNIQUE_NAME and its threads' comm names."""


class AsyncShipper:
    """The ASYNC transport (a TTnn): ships what the log writer wrote to a standby no commit
    waits for.

    The log writer only queues each write's size and stamp (``put`` never blocks); this thread
    sends them one by one and waits for each acknowledgement itself, so a slow standby holds
    back this thread alone and falls behind, as seed 003's capped ASYNC standby did.  Only the
    number of bytes matters to the standby's disk, so zeros are sent.
    """

    def __init__(self, sock: socket.socket, stop: threading.Event) -> None:
        self.sock = sock
        self.stop = stop
        self.cond = threading.Condition()
        self.queue: deque[tuple[int, float, int]] = deque()  # (kind, stamp, length)
        self.error: str | None = None

    def put(self, kind: int, stamp: float, length: int) -> None:
        """Queue one write of the log writer (or a log switch) for the standby."""
        with self.cond:
            if len(self.queue) < ASYNC_BACKLOG:
                self.queue.append((kind, stamp, length))
            else:
                last_kind, _, last = self.queue[-1]
                self.queue[-1] = (last_kind, stamp, min(MAX_BATCH, last + length))
            self.cond.notify()

    def run(self) -> None:
        """Send until stopped; a lost standby is recorded, commits go on (ASYNC)."""
        name_thread(f"ora_tt00_{SID}")
        zeros = bytes(MAX_BATCH)
        seq = 0
        try:
            while not self.stop.is_set():
                with self.cond:
                    if not self.queue:
                        self.cond.wait(0.2)
                        continue
                    kind, stamp, length = self.queue.popleft()
                seq += 1
                self.sock.sendall(HEAD.pack(kind, seq, length, stamp) + zeros[:length])
                recv_exact(self.sock, ACK.size, stop=self.stop)
        except (OSError, ProtocolError) as e:
            if not self.stop.is_set():
                self.error = f"lost the ASYNC standby: {e}"


class LogWriter:
    """Group commit: one writer, many waiting sessions (see the module docstring)."""

    def __init__(
        self,
        log: LogDevice,
        sock: socket.socket,
        rec: WaitRecorder,
        standin: StandIn,
        shipper: AsyncShipper | None = None,
    ) -> None:
        self.log = log
        self.sock = sock
        self.shipper = shipper
        self.rec = rec
        self.standin = standin
        self.stop = rec.stop
        self.cond = threading.Condition()
        self.buffer = bytearray()
        self.generated = 0  # commits handed to the writer
        self.durable = 0  # commits written locally and acknowledged by the standby
        self.seq = 0
        self.burst_until = 0.0
        self.next_switch = 0.0
        self.error: str | None = None

    def commit(self, redo: bytes) -> None:
        """A session's commit: hand over the redo and wait until it is durable on both sides."""
        t0 = time.perf_counter()
        with self.cond:
            self.buffer += redo
            self.generated += 1
            mine = self.generated
            self.cond.notify_all()
            while self.durable < mine and not self.stop.is_set():
                self.cond.wait(0.5)
        us = (time.perf_counter() - t0) * 1e6
        self.rec.wait("log file sync", us)
        self.rec.add("user commits", 1)
        self.rec.add("redo synch writes", 1)
        self.rec.add("redo synch time (usec)", us)
        self.rec.add("redo size", len(redo))

    def run(self) -> None:
        """The writer loop; on a lost standby it records why and stops the primary."""
        name_thread(f"ora_lgwr_{SID}")
        try:
            while not self.stop.is_set():
                with self.cond:
                    while not self.buffer and not self._switch_due() and not self.stop.is_set():
                        self.cond.wait(0.05)
                    batch = bytes(self.buffer)
                    self.buffer.clear()
                    target = self.generated
                if self._switch_due():
                    self._switch()
                if batch:
                    self._ship(batch, time.time())
                with self.cond:
                    self.durable = target
                    self.cond.notify_all()
        except (OSError, ProtocolError) as e:
            if not self.stop.is_set():
                self.error = f"lost the standby: {e}"
                self.stop.set()

    def _ship(self, batch: bytes, stamp: float) -> None:
        self.seq += 1
        if self.shipper is not None:
            self.shipper.put(REDO, stamp, len(batch))
        t_send = time.perf_counter()
        self.sock.sendall(HEAD.pack(REDO, self.seq, len(batch), stamp) + batch)
        t0 = time.perf_counter()
        self.log.write(batch)
        lfpw = (time.perf_counter() - t0) * 1e6
        recv_exact(self.sock, ACK.size, stop=self.stop)
        srw = (time.perf_counter() - t_send) * 1e6
        self.rec.wait("log file parallel write", lfpw)
        self.rec.wait("SYNC Remote Write", srw)
        self.rec.wait("Redo Transport MISC", srw)
        self.rec.add("redo writes", 1)
        self.rec.add("redo write time (usec)", lfpw)

    def _switch_due(self) -> bool:
        now = time.monotonic()
        return now < self.burst_until and now >= self.next_switch

    def _switch(self) -> None:
        """A log switch: preformat the next log locally and on the standby, then go on."""
        self.next_switch = time.monotonic() + SWITCH_EVERY
        self.seq += 1
        stamp = time.time()
        if self.shipper is not None:
            self.shipper.put(SWITCH, stamp, 0)
        self.sock.sendall(HEAD.pack(SWITCH, self.seq, 0, stamp))
        self.log.offset = 0
        chunk = bytes(256 * 1024)
        for _ in range(SWITCH_BYTES // len(chunk)):
            self.log.write(chunk)
        recv_exact(self.sock, ACK.size, stop=self.stop)
        self.standin.log_switch(thread=1)

    def burst(self, on: bool) -> None:
        """Start (or end) a burst of log switches."""
        now = time.monotonic()
        self.burst_until = now + SWITCH_BURST_MAX if on else 0.0
        self.next_switch = now
        with self.cond:
            self.cond.notify_all()


def session(lw: LogWriter, seed: int, think: float) -> None:
    """One committing session: think, generate 0.5-4 KiB of redo, commit."""
    rnd = random.Random(seed)
    redo = os.urandom(4096)
    while not lw.stop.is_set():
        time.sleep(think * rnd.uniform(0.5, 1.5))
        lw.commit(redo[: rnd.randint(512, 4096)])


def connect(addr: str, port: int, stop: threading.Event) -> socket.socket:
    """A connection to a standby, retried for up to 10 s while it starts."""
    deadline = time.monotonic() + 10
    while True:
        try:
            sock = socket.create_connection((addr, port), timeout=1)
            break
        except OSError as e:
            if time.monotonic() > deadline or stop.is_set():
                raise OSError(f"cannot reach the standby at {addr}: {e}") from None
            time.sleep(0.1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.settimeout(0.5)
    return sock


def main(argv: list[str] | None = None) -> int:
    """Connect to the standbys, then run sessions and the log writer until stopped."""
    p = argparse.ArgumentParser(prog="python -m sgmon.lab.primary")
    p.add_argument("--standby", required=True, help="SYNC standby address")
    p.add_argument("--standby-name", required=True, help="its DB_UNIQUE_NAME")
    p.add_argument("--async-standby", help="ASYNC standby address")
    p.add_argument("--async-name", help="its DB_UNIQUE_NAME")
    p.add_argument("--port", type=int, default=PORT)
    p.add_argument("--log", required=True, help="local log device")
    p.add_argument("--standin", required=True, help="V$ stand-in database file")
    p.add_argument("--sessions", type=int, default=8)
    p.add_argument("--think", type=float, default=0.01, help="seconds between a session's commits")
    p.add_argument("--cpu", type=int, help="CPU to run on")
    p.add_argument("--duration", type=float, required=True)
    a = p.parse_args(argv)
    stop = bind_to_parent(a.duration)
    pin(a.cpu)
    name_thread(f"ora_u001_{SID}")  # threaded_execution's container: LGWR is one thread of it
    standin = StandIn(a.standin, role="PRIMARY", db_unique_name=SID)
    # V$ARCHIVE_DEST as LOG_ARCHIVE_DEST_n says it: the topology maps each to its host by name
    standin.set_dest(
        2, db_unique_name=a.standby_name, transmit_mode="SYNCHRONOUS", affirm="YES", net_timeout=30
    )
    if a.async_standby:
        standin.set_dest(
            3,
            db_unique_name=a.async_name,
            transmit_mode="ASYNCHRONOUS",
            affirm="NO",
            net_timeout=30,
        )
    rec = WaitRecorder(standin, stop)
    rec.start(EVENTS)
    try:
        sock = connect(a.standby, a.port, stop)
        shipper = (
            AsyncShipper(connect(a.async_standby, a.port, stop), stop) if a.async_standby else None
        )
    except OSError as e:
        print(f"sgmon lab: {e}", file=sys.stderr)
        return 3
    log = LogDevice(a.log, device_size(a.log), a.sessions * 4096 + SWITCH_BYTES)
    lw = LogWriter(log, sock, rec, standin, shipper)
    signal.signal(signal.SIGUSR1, lambda *_: lw.burst(True))
    signal.signal(signal.SIGUSR2, lambda *_: lw.burst(False))
    threads = [threading.Thread(target=lw.run, daemon=True)]
    if shipper is not None:
        threads.append(threading.Thread(target=shipper.run, daemon=True))
    threads += [
        threading.Thread(target=session, args=(lw, i, a.think), daemon=True)
        for i in range(a.sessions)
    ]
    for t in threads:
        t.start()
    print("ready", flush=True)
    while not stop.wait(0.2):
        pass
    for t in threads:
        t.join(timeout=2)
    rec.publish()
    sock.close()
    if shipper is not None:
        shipper.sock.close()
    log.close()
    failed = [why for why in (lw.error, shipper and shipper.error) if why]
    for why in failed:
        print(f"sgmon lab: {why}", file=sys.stderr)
    return 3 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
