"""The probe's server side: receive messages, write and sync them when asked, acknowledge.

In ``sync`` mode each message is written to ``--write`` opened with O_DSYNC before the ack, as an
RFS process writes redo to a standby log (SYNC AFFIRM); ``apply`` adds a second write that depends
on the first (the Rdb "commit" level).  The ack carries both write times, so the client can tell
the network's share of the latency from the disk's.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

from sgmon.probe.protocol import (
    ACK,
    ACK_KIND,
    DATA,
    FIN,
    MODES,
    MSG,
    STATS,
    STATS_KIND,
    Hello,
    ProtocolError,
    answer,
    read_line,
    recv_exact,
)

WRAP = 64 * 1024 * 1024
"""The write file is reused circularly past this size, like a redo log, so it never fills a disk."""


class SyncedFile:
    """A file written at a moving offset with O_DSYNC: each write returns once it is on disk."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_DSYNC, 0o600)
        self._offset = 0
        self._lock = threading.Lock()

    def write(self, data: memoryview) -> float:
        """Append (circularly) and return the time the synced write took, in ms."""
        with self._lock:
            if self._offset + len(data) > WRAP:
                self._offset = 0
            offset = self._offset
            self._offset += len(data)
        t0 = time.perf_counter()
        os.pwrite(self.fd, data, offset)
        return (time.perf_counter() - t0) * 1000.0

    def close(self) -> None:
        """Close the file (kept on disk: the user named it)."""
        os.close(self.fd)


class ProbeServer:
    """Accepts probe clients until stopped; one thread per connection."""

    def __init__(
        self,
        host: str,
        port: int,
        write: Path | None = None,
        log: Callable[[str], None] = print,
    ) -> None:
        self.log = log
        self.listener = socket.create_server((host, port), reuse_port=False, backlog=64)
        self.listener.settimeout(0.2)
        self.address = self.listener.getsockname()[:2]
        self.log_file = SyncedFile(write) if write else None
        self.apply_file = SyncedFile(write.with_name(write.name + ".apply")) if write else None
        self.stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def serve(self, duration: float | None = None) -> None:
        """Accept and serve until ``stop`` is set or ``duration`` seconds have passed."""
        end = time.monotonic() + duration if duration else None
        try:
            while not self.stop.is_set() and (end is None or time.monotonic() < end):
                try:
                    conn, peer = self.listener.accept()
                except TimeoutError:
                    continue
                t = threading.Thread(target=self._serve_one, args=(conn, peer), daemon=True)
                t.start()
                self._threads.append(t)
        finally:
            self.stop.set()
            for t in self._threads:
                t.join(timeout=2)
            self.close()

    def close(self) -> None:
        """Release the listener and the files."""
        self.listener.close()
        for f in (self.log_file, self.apply_file):
            if f is not None:
                f.close()
        self.log_file = self.apply_file = None

    def _handshake(self, conn: socket.socket) -> Hello:
        req = read_line(conn)
        try:
            hello = Hello(**req)
        except TypeError as e:
            raise ProtocolError("the peer is not an sgmon probe client") from e
        error = ""
        if hello.mode not in MODES:
            error = f"unknown mode {hello.mode!r}"
        elif hello.mode in ("sync", "apply") and self.log_file is None:
            error = f"mode {hello.mode} needs a disk: restart the server with --write PATH"
        if hello.rcvbuf:
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, hello.rcvbuf)
        if hello.sndbuf:
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, hello.sndbuf)
        conn.sendall(answer(error))
        if error:
            raise ProtocolError(error)
        return hello

    def _serve_one(self, conn: socket.socket, peer: tuple) -> None:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        messages = nbytes = 0
        write_ms = 0.0
        hello: Hello | None = None
        try:
            conn.settimeout(5.0)
            hello = self._handshake(conn)
            conn.settimeout(0.5)
            buf = memoryview(bytearray(max(hello.length, 1)))
            while not self.stop.is_set():
                head = recv_exact(conn, MSG.size, stop=self.stop)
                kind, seq, length = MSG.unpack(head)
                if kind == FIN:
                    conn.sendall(STATS.pack(STATS_KIND, messages, nbytes))
                    break
                if kind != DATA or length > len(buf):
                    raise ProtocolError("unexpected message: the peer is not an sgmon probe")
                payload = recv_exact(conn, length, buf, self.stop)
                messages += 1
                nbytes += length + MSG.size
                if hello.mode == "async":
                    continue
                w = a = 0.0
                if hello.mode in ("sync", "apply") and self.log_file:
                    w = self.log_file.write(payload)
                    if hello.mode == "apply" and self.apply_file:
                        a = self.apply_file.write(payload)
                write_ms += w
                conn.sendall(ACK.pack(ACK_KIND, seq, w, a))
        except (ProtocolError, OSError) as e:
            self.log(f"{peer[0]}:{peer[1]}: {e}")
        finally:
            conn.close()
        if hello and messages:
            avg = f", disk-write {write_ms / messages:.3f} ms avg" if write_ms else ""
            self.log(
                f"{peer[0]}:{peer[1]}: mode {hello.mode}, {messages} messages, "
                f"{nbytes / 1048576:.1f} Mbytes{avg}"
            )
