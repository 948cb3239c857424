"""The lab standby: receive redo, write it to the standby log device, acknowledge.

Each batch is written with O_DIRECT|O_DSYNC to a loop device (``RFS write``) before the ack, as
an RFS process writes a standby redo log in SYNC AFFIRM mode; the lab caps that device's IOPS to
reproduce seed 003.  The transport lag (V$DATAGUARD_STATS) is how old the newest redo was when
it reached the standby log: about nothing for the SYNC standby, which the primary waits for, and
growing for an ASYNC one that cannot keep up.  The lab runs one per standby namespace:
``python -m sgmon.lab.standby --sid STBY ...``.
"""

from __future__ import annotations

import argparse
import socket
import sys
import threading
import time

from sgmon.lab.primary import SWITCH_BYTES
from sgmon.lab.proc import LogDevice, bind_to_parent, device_size, name_thread, pin
from sgmon.lab.waits import WaitRecorder
from sgmon.lab.wire import ACK, HEAD, MAX_BATCH, PORT, SWITCH
from sgmon.probe.protocol import ProtocolError, recv_exact
from sgmon.sim.standin import StandIn, dg_stamp

SID = "STBY"
"""The SYNC standby's instance name: its V$ stand-in's DB_UNIQUE_NAME and its threads' comm
names (``--sid`` names another standby)."""
LAG_EVERY = 1.0
"""Seconds between updates of V$DATAGUARD_STATS (its lags are whole seconds)."""


class Lag:
    """The standby's transport (and, with no apply, apply) lag and its datum time."""

    def __init__(self, standin: StandIn) -> None:
        self.standin = standin
        self.lag = 0.0
        self.datum = ""

    def arrived(self, stamp: float) -> None:
        """Redo the log writer took at ``stamp`` is on the standby log now."""
        now = time.time()
        self.lag = max(0.0, now - stamp)
        self.datum = dg_stamp(now)

    def publish(self) -> None:
        """Into V$DATAGUARD_STATS, computed now."""
        computed = dg_stamp()
        self.standin.set_dg_stats(self.lag, self.lag, self.datum or computed, computed)


def receive(
    conn: socket.socket, log: LogDevice, rec: WaitRecorder, standin: StandIn, lag: Lag
) -> None:
    """Serve one primary connection until it closes or the lab stops."""
    conn.settimeout(0.5)
    buf = memoryview(bytearray(MAX_BATCH))
    while not rec.stop.is_set():
        kind, seq, length, stamp = HEAD.unpack(recv_exact(conn, HEAD.size, stop=rec.stop))
        if length > MAX_BATCH:
            raise ProtocolError(f"batch of {length} bytes exceeds {MAX_BATCH}")
        payload = recv_exact(conn, length, buf, rec.stop) if length else b""
        t0 = time.perf_counter()
        if kind == SWITCH:
            log.offset = 0
            for _ in range(SWITCH_BYTES // (256 * 1024)):
                log.write(bytes(256 * 1024))
            standin.log_switch(thread=1)
        else:
            log.write(payload)
            rec.wait("RFS write", (time.perf_counter() - t0) * 1e6)
            rec.add("redo size", length)
        lag.arrived(stamp)
        conn.sendall(ACK.pack(seq))


def main(argv: list[str] | None = None) -> int:
    """Listen on the Data Guard port and serve the primary until stopped."""
    p = argparse.ArgumentParser(prog="python -m sgmon.lab.standby")
    p.add_argument("--port", type=int, default=PORT)
    p.add_argument("--log", required=True, help="standby log device")
    p.add_argument("--standin", required=True, help="V$ stand-in database file")
    p.add_argument("--sid", default=SID, help="instance name and DB_UNIQUE_NAME")
    p.add_argument("--cpu", type=int, help="CPU to run on")
    p.add_argument("--duration", type=float, required=True)
    a = p.parse_args(argv)
    stop = bind_to_parent(a.duration)
    pin(a.cpu)
    standin = StandIn(a.standin, role="PHYSICAL STANDBY", db_unique_name=a.sid)
    standin.set_standby_logs(thread=1, active=1)
    lag = Lag(standin)
    lag.publish()
    rec = WaitRecorder(standin, stop)
    rec.start(("RFS write",))
    srv = socket.create_server(("0.0.0.0", a.port))
    srv.settimeout(0.2)
    log = LogDevice(a.log, device_size(a.log) // 2, MAX_BATCH)  # the upper half: io hogs
    print("ready", flush=True)
    published = time.monotonic()
    while not stop.is_set():
        if time.monotonic() - published >= LAG_EVERY:
            lag.publish()
            published = time.monotonic()
        try:
            conn, _ = srv.accept()
        except TimeoutError:
            continue
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        args = (conn, log, rec, standin, lag, a.sid)
        threading.Thread(target=_serve, args=args, daemon=True).start()
    rec.publish()
    return 0


def _serve(
    conn: socket.socket, log: LogDevice, rec: WaitRecorder, standin: StandIn, lag: Lag, sid: str
) -> None:
    name_thread(f"ora_rfs_{sid}")  # the thread that receives and writes redo: RFS
    try:
        receive(conn, log, rec, standin, lag)
    except (OSError, ProtocolError):
        pass
    finally:
        conn.close()


if __name__ == "__main__":
    sys.exit(main())
