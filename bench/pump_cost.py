"""What watching a host costs that host: the pump sent over ssh, the installed agent, and sadc.

In ONE run, side by side over the same window, beside bench/overhead.py's socket farm (2,000
loopback sockets, of which ``--dg-connections`` connections are on the Data Guard port):

- the pump as it runs on a remote host: ``ssh`` to a loopback sshd of its own, which runs the
  system ``/usr/bin/python3 -I -c <bootstrap>``, fed sgmon/remote/pump.py and its request on
  stdin, at 1 Hz;
- the installed agent, ``sgmon agent --interval 1`` (this checkout's interpreter), through its
  own loopback sshd the same way;
- ``sadc 1 N`` (sar's collector with its default activities) and ``sadc -S XALL 1 N``.

CPU is scheduler run time (/proc/PID/task/*/schedstat, ns) over the window after ``--warmup``
seconds, per tick: for each sgmon side, its program and, apart, the sshd processes of its session
(they run on the database host too: encrypting and sending what the program writes).  On loopback
the receiving side's TCP work is also charged to sshd, so its figure is an upper bound.  Bytes per
tick are what each program writes to ssh (ssh's own compression is off by default).  Without
/usr/sbin/sshd (or not root) the programs run without ssh and the sshd column says so.

The host is a primary (its Data Guard connections are the ones it opens to the DG port).
``--client-rate R``: R client connections a second opened and closed meanwhile, from another
network namespace (a primary whose clients log on while its standby is away: with
``--dg-connections 0``, the state in which the pump used to walk every socket each tick).

    .venv/bin/python bench/pump_cost.py [--samples 60] [--warmup 5] [--rounds 3]
        [--dg-connections 8] [--client-rate 0]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from overhead import SADC, socket_farm, task_run

from sgmon.config import Config, HostConfig
from sgmon.hosts.build import pumped_processes, pumped_sockets, pumped_trace, shipped
from sgmon.lab.kernel import sh, unique
from sgmon.remote.mirror import BOOTSTRAP, request

DG_PORT = 46335
SSHD = "/usr/sbin/sshd"
SSH_PORT = 30340
"""One sshd per sgmon side from here: below the ephemeral range, where the socket farm's client
ends could hold a port."""


@dataclass
class Contender:
    """One program measured: its command, the sshd carrying it (if any), what it wrote, and
    its CPU and its sshd's at the window's ends."""

    name: str
    argv: list[str]
    stdin: bytes | None = None
    sshd: subprocess.Popen | None = None
    proc: subprocess.Popen | None = None
    wrote: int = 0
    marks: list[tuple[float, float, int]] = field(default_factory=list)  # (cpu, sshd cpu, bytes)


def _count(c: Contender) -> None:
    """Read a contender's stdout to its end, counting bytes."""
    out = c.proc.stdout if c.proc else None
    if out is not None:
        for chunk in iter(lambda: out.read1(65536), b""):
            c.wrote += len(chunk)


def _ping(c: Contender, stop: threading.Event) -> None:
    """Keep the pump's consumer alive, as sgmon does (a ping every 5 s)."""
    while not stop.wait(5.0):
        with contextlib.suppress(OSError, ValueError):
            assert c.proc is not None and c.proc.stdin is not None
            c.proc.stdin.write(f"ping {time.time():.6f}\n".encode())
            c.proc.stdin.flush()


def _tree(pid: int) -> list[int]:
    """A process and its descendants."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        with contextlib.suppress(OSError):
            for task in os.listdir(f"/proc/{p}/task"):
                with contextlib.suppress(OSError):
                    todo += map(int, Path(f"/proc/{p}/task/{task}/children").read_text().split())
    return out


def _cpu(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError):
            total += task_run(pid)
    return total


def _mark(c: Contender) -> tuple[float, float, int]:
    """(the program's CPU, its sshd processes' CPU, bytes written so far)."""
    assert c.proc is not None
    if c.sshd is None:
        return _cpu([c.proc.pid]), 0.0, c.wrote
    session = _tree(c.sshd.pid)[1:]  # not the listener, which only waits for connections
    ours = {p for p in session if Path(f"/proc/{p}/comm").read_text().strip() != "sshd"}
    return _cpu(sorted(ours)), _cpu([p for p in session if p not in ours]), c.wrote


@contextlib.contextmanager
def _sshd(tmp: Path, port: int) -> Iterator[tuple[subprocess.Popen, list[str]]]:
    """A loopback sshd taking this bench's key, and the ssh command line that reaches it."""
    for name in ("key", "host_key"):
        if not (tmp / name).exists():
            subprocess.run(
                ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp / name)], check=True
            )
    (tmp / "authorized").write_text((tmp / "key.pub").read_text())
    cfg = tmp / f"sshd_{port}"
    cfg.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {tmp / 'host_key'}\n"
        f"AuthorizedKeysFile {tmp / 'authorized'}\nPidFile none\nUsePAM no\nStrictModes no\n"
        "PermitRootLogin prohibit-password\nPasswordAuthentication no\nLogLevel ERROR\n"
    )
    Path("/run/sshd").mkdir(exist_ok=True)
    log = tmp / f"sshd_{port}.log"
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [SSHD, "-D", "-e", "-f", str(cfg)], stderr=err, start_new_session=True
        )
    ssh = [
        "ssh", "-F", "/dev/null", "-p", str(port), "-i", str(tmp / "key"), "-o", "BatchMode=yes",
        "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
        "-o", "LogLevel=ERROR", "root@127.0.0.1",
    ]  # fmt: skip
    try:
        deadline = time.monotonic() + 10
        while subprocess.run([*ssh, "true"], capture_output=True, timeout=10).returncode:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the bench's sshd did not start: {log.read_text().strip()}")
            time.sleep(0.2)
        yield proc, ssh
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(10)


LOGONS = """
import socket, sys, time
host, port, rate = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
end = time.monotonic() + 1800  # bounded, though the bench kills it at the round's end
while time.monotonic() < end:
    with socket.create_connection((host, port), timeout=5):
        pass
    time.sleep(1 / rate)
"""
"""The clients: a logon (a connection opened and closed) ``rate`` times a second."""


@contextlib.contextmanager
def client_churn(rate: float) -> Iterator[None]:
    """``rate`` client connections a second, each opened, accepted and closed, for the block;
    none for a rate of 0.  The clients run in a network namespace of their own joined to this
    one by a veth pair, as application servers on other hosts: on loopback each logon would
    also count as a connection this host opened (ActiveOpens), which a primary's own
    connection to its standby is.  Addresses in 198.18.0.0/15 (RFC 2544's benchmarking
    range); the namespace, and its veth pair with it, removed at the end."""
    if rate <= 0:
        yield
        return
    tag = unique("")[:5]
    ns, net = f"pumpcost{tag}", f"198.18.{int(tag, 16) % 250}"
    try:
        sh("ip", "netns", "add", ns)
        sh("ip", "link", "add", f"pch{tag}", "type", "veth", "peer", "name", f"pcn{tag}",
           "netns", ns)  # fmt: skip
        sh("ip", "addr", "add", f"{net}.1/30", "dev", f"pch{tag}")
        sh("ip", "link", "set", f"pch{tag}", "up")
        sh("ip", "addr", "add", f"{net}.2/30", "dev", f"pcn{tag}", ns=ns)
        sh("ip", "link", "set", f"pcn{tag}", "up", ns=ns)
        with socket.create_server((f"{net}.1", 0)) as listener:
            port = str(listener.getsockname()[1])
            argv = ["ip", "netns", "exec", ns, sys.executable, "-c", LOGONS, f"{net}.1", port]
            clients = subprocess.Popen([*argv, str(rate)])
            stop = threading.Event()

            def accept() -> None:
                listener.settimeout(1.0)
                while not stop.is_set():
                    with contextlib.suppress(TimeoutError):
                        listener.accept()[0].close()

            thread = threading.Thread(target=accept, daemon=True)
            thread.start()
            try:
                yield
            finally:
                stop.set()
                clients.kill()
                clients.wait(10)
                thread.join(10)
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)


def _sent() -> bytes:
    """What sgmon sends the pump for a primary with the bench's DG port: its files, the tcp
    collector's sockets, the procs collector's processes and (as root) the retrans collector's
    tracepoints."""
    config = Config(ports=(DG_PORT,))
    host = HostConfig(name="bench", role="primary")
    return request(
        1.0,
        shipped(),
        pumped_sockets(config, host),
        trace=pumped_trace(config, host),
        processes=pumped_processes(config, host),
    )


def one_round(
    samples: int, warmup: int, connections: int, tmp: Path, ssh: bool, rate: float = 0.0
) -> list[Contender]:
    """All contenders at once over one window."""
    total = warmup + samples + 5
    agent = f"SGMON_RUNTIME_DIR={shlex.quote(str(tmp))} {shlex.quote(sys.executable)} -m sgmon"
    agent += f" agent --interval 1 --config {shlex.quote(str(tmp / 'sgmon.toml'))}"
    (tmp / "sgmon.toml").write_text(f"[dataguard]\nports = [{DG_PORT}]\n")
    pump = f"/usr/bin/python3 -I -c {shlex.quote(BOOTSTRAP)}"
    contenders = [
        Contender(
            "pump (python3 -I, on the host)",
            ["sh", "-c", pump],
            _sent(),
        ),
        Contender("installed agent (sgmon agent)", ["sh", "-c", agent]),
        Contender("sadc 1", [SADC, "1", str(total), str(tmp / "sa-default")]),
        Contender("sadc -S XALL 1", [SADC, "-S", "XALL", "1", str(total), str(tmp / "sa-xall")]),
    ]
    stop = threading.Event()
    threads = []
    with contextlib.ExitStack() as stack:
        stack.enter_context(socket_farm(DG_PORT, connections))
        stack.enter_context(client_churn(rate))
        for i, c in enumerate(contenders[:2] if ssh else ()):
            c.sshd, command = stack.enter_context(_sshd(tmp, SSH_PORT + i))
            c.argv = [*command, c.argv[-1]]
        try:
            for c in contenders:
                c.proc = subprocess.Popen(
                    c.argv,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
                assert c.proc.stdin is not None
                if c.stdin is not None:
                    c.proc.stdin.write(c.stdin)
                    c.proc.stdin.flush()
                threads.append(threading.Thread(target=_count, args=(c,), daemon=True))
                if c.stdin is not None:
                    threads.append(threading.Thread(target=_ping, args=(c, stop), daemon=True))
            for t in threads:
                t.start()
            t0 = time.monotonic()
            for at in (warmup, warmup + samples):
                time.sleep(max(0.0, t0 + at - time.monotonic()))
                for c in contenders:
                    c.marks.append(_mark(c))
        finally:
            stop.set()
            for c in contenders:
                if c.proc is not None and c.proc.poll() is None:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(c.proc.pid, signal.SIGTERM)
                    c.proc.wait(10)
    return contenders


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--samples", type=int, default=60)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--dg-connections", type=int, default=8)
    p.add_argument("--client-rate", type=float, default=0.0, help="client connections a second")
    a = p.parse_args()
    ssh = os.geteuid() == 0 and os.path.exists(SSHD) and shutil.which("ssh") is not None
    per: dict[str, list[tuple[float, float, float]]] = {}
    for r in range(a.rounds):
        with tempfile.TemporaryDirectory(prefix="sgmon-pumpcost-") as tmp:
            for c in one_round(
                a.samples, a.warmup, a.dg_connections, Path(tmp), ssh, a.client_rate
            ):
                (c0, s0, b0), (c1, s1, b1) = c.marks
                ms, sshd_ms = (c1 - c0) * 1000 / a.samples, (s1 - s0) * 1000 / a.samples
                per.setdefault(c.name, []).append((ms, sshd_ms, (b1 - b0) / a.samples))
                print(f"round {r + 1}: {c.name}: {ms:.3f} + sshd {sshd_ms:.3f} ms", file=sys.stderr)
    print(
        f"\n{a.rounds} rounds x {a.samples} ticks at 1 Hz, {a.warmup} s warm-up, "
        f"2,000 loopback sockets, {a.dg_connections} DG connections"
        + (f", {a.client_rate:g} client connections a second" if a.client_rate else "")
        + ("" if ssh else "; no sshd here: the programs ran without ssh")
        + "\n"
    )
    print("| contender | CPU ms a tick, min / median / max | its sshd, median | total, median "
          "| bytes a tick to ssh |")  # fmt: skip
    print("|---|---|---|---|---|")
    for name, rows in per.items():
        cpu = sorted(r[0] for r in rows)
        sshd = statistics.median(r[1] for r in rows)
        total = statistics.median(r[0] + r[1] for r in rows)
        wire = statistics.median(r[2] for r in rows)
        carried = sshd or name.startswith(("pump", "installed"))
        print(
            f"| {name} | {cpu[0]:.3f} / {statistics.median(cpu):.3f} / {cpu[-1]:.3f} | "
            + (f"{sshd:.3f} | {total:.3f} | {wire:,.0f} |" if carried else "- | "
               f"{total:.3f} | (its file) |")
        )  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
