"""What retransmission events cost: ``RetransCollector.sample`` CPU per quiet tick and per event.

Quiet: ``--ticks`` samples of the open collector while no DG socket retransmits (thread CPU per
sample, after 3 warm-up samples), against the same loop with the collector off (an empty tick:
what "nothing measurable" is measured against), plus a lossless request/ack run between two
namespaces timed with the collector off and on (the tracepoints then fire for no packet: the
kernel filter costs nothing while nothing is retransmitted).

Per event: the same link with 10 % loss and rto_min 10 ms, ``--writes`` 1000-byte writes with
one in flight, run once per read interval of ``--every`` (0.25 s, then the dashboard's 1 s).
The collector reads meanwhile, each read cold (caches gone after the sleep); the quiet ticks'
cost is subtracted and the rest divided by the retransmissions counted (the congestion-state
records read with them included).  Issue 17's target: <= 20 us per event.

    python bench/retrans_cost.py [--ticks 200] [--writes 1500] [--every 0.25 1]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PORT = 1522
SERVER = r"""
import socket, sys, time
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("0.0.0.0", int(sys.argv[1])))
srv.listen(4)
srv.settimeout(60)
print("listening", flush=True)
while True:
    c, _ = srv.accept()
    c.settimeout(60)
    while True:
        data = c.recv(1000, socket.MSG_WAITALL)
        if not data:
            break
        c.send(b"k")
"""
CLIENT = r"""
import socket, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
msg, end, n = b"m" * 1000, time.monotonic() + 30, 0
t0 = time.perf_counter()
while n < int(sys.argv[3]) and time.monotonic() < end:
    s.sendall(msg)
    s.recv(1)
    n += 1
print(n, time.perf_counter() - t0, flush=True)
"""


def run_client(pair, writes: int) -> tuple[int, float]:
    """Writes acknowledged and the seconds they took."""
    out = pair.run("a", sys.executable, "-c", CLIENT, pair.b_ip, str(PORT), str(writes), timeout=40)
    n, secs = out.split()
    return int(n), float(secs)


def lossy_run(pair, c, writes: int, every: float) -> tuple[tuple[int, float], int, float, int, int]:
    """The writes through the lossy link, the collector read every ``every`` s meanwhile:
    (writes, seconds), reads, their thread CPU (us), retransmissions counted, events emitted."""
    client = pair.popen(
        "a", sys.executable, "-c", CLIENT, pair.b_ip, str(PORT), str(writes), stdout=subprocess.PIPE
    )
    reads, cpu, counted, events = 0, 0.0, 0, 0
    try:
        while True:
            done = client.poll() is not None
            time.sleep(every)
            t0 = time.thread_time_ns()
            rows = c.sample()
            cpu += (time.thread_time_ns() - t0) / 1000
            reads += 1
            events += len(c.take_events())
            counted += sum(r.get("retransmits", 0) for k, r in rows.items() if k != "host")
            if done:
                break
        assert client.stdout is not None
        n, secs = client.stdout.read().split()
    finally:
        client.kill()
        client.wait(5)
    return (int(n), float(secs)), reads, cpu, counted, events


def quiet_ticks(sample, ticks: int) -> list[float]:
    """Thread CPU (us) of ``ticks`` calls, after 3 warm-up calls."""
    for _ in range(3):
        sample()
    per = []
    for _ in range(ticks):
        t0 = time.thread_time_ns()
        sample()
        per.append((time.thread_time_ns() - t0) / 1000)
    return per


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticks", type=int, default=200)
    ap.add_argument("--writes", type=int, default=1500)
    ap.add_argument(
        "--every", type=float, nargs="+", default=[0.25, 1.0], help="seconds between reads"
    )
    args = ap.parse_args()
    from collectors.retrans import RetransCollector
    from sgmon.lab.kernel import ns_pair

    with ns_pair("rb") as pair:
        server = pair.popen("b", sys.executable, "-c", SERVER, str(PORT), stdout=subprocess.PIPE)
        try:
            assert server.stdout is not None and server.stdout.readline().strip() == b"listening"
            c = RetransCollector({"ports": [PORT], "role": "primary"})  # dport: the sender
            off = quiet_ticks(lambda: {}, args.ticks)
            lossless_off = run_client(pair, args.writes)
            c.open()
            try:
                on = quiet_ticks(c.sample, args.ticks)
                lossless_on = run_client(pair, args.writes)
                c.sample()
                c.take_events()
                pair.add_loss("b", 100, PORT)
                pair.set_rto_min("a", 10)
                lossy = [lossy_run(pair, c, args.writes, every) for every in args.every]
            finally:
                c.close()
        finally:
            server.kill()
            server.wait(5)
    q_on, q_off = statistics.median(on), statistics.median(off)
    print(f"quiet tick, sample() thread CPU over {args.ticks} ticks (median):")
    print(f"  collector on {q_on:.1f} us, off {q_off:.1f} us: {q_on - q_off:.1f} us per tick")
    print(f"  = {(q_on - q_off) / 1e4:.4f} % of one CPU at 1 Hz")
    print(f"lossless {args.writes} request/ack writes between two namespaces:")
    print(f"  off {lossless_off[1]:.3f} s, on {lossless_on[1]:.3f} s")
    print(f"  ratio on/off {lossless_on[1] / lossless_off[1]:.3f}")
    for every, ((n, secs), reads, burst, counted, events) in zip(args.every, lossy, strict=True):
        print(f"10 % loss, read every {every:g} s: {n} writes in {secs:.2f} s, {reads} reads")
        print(f"  {counted} retransmissions ({events} events) cost {burst:.0f} us of sample() CPU")
        if counted:
            per = (burst - reads * q_on) / counted
            print(f"  = {per:.2f} us per event (target <= 20 us): ratio to target {per / 20:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
