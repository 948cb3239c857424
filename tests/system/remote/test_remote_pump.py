"""The pump that runs on a remote host without sgmon: the floor it must run on, and what it ships
read back by the local collectors.  The host here is this machine reached through a stand-in for
ssh that runs the remote command under ``env -i`` (no PYTHONPATH, no venv), so the pump runs
with the system python3 exactly as it would on the far side; the sshd in a network namespace is
tests/test_remote_pump_ssh.py."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from nslab import FAR_PYTHON, NsPair, ns_pair, require_root, run_source
from paths import REPO

from sgmon.config import Config, DbConfig, HostConfig
from sgmon.hosts.build import pumped_sockets, sources_from_config
from sgmon.hosts.remote import PumpSource, RemoteSource
from sgmon.readers.inet_diag import SOCK_DIAG_DUMP, parse_dump
from sgmon.remote.mirror import BOOTSTRAP, PREFIX, Mirror, Shipped, request
from sgmon.remote.pump import MAGIC
from sgmon.sim.standin import StandIn

REMOTE = REPO / "sgmon" / "remote" / "pump.py"
LOCAL_SSH = ("bash", "-c", 'exec env -i PATH=/usr/bin:/bin bash -c "${!#}"', "ssh")
"""``ssh`` for this machine: runs the last argument, the remote command, in a bare environment."""


def test_the_pump_runs_on_python_3_6():
    """vermin reads the pump and names the oldest Python that runs it; 3.6 is the floor (the
    platform-python of RHEL and Oracle Linux 8)."""
    vermin = shutil.which("vermin", path=str(Path(sys.executable).parent))
    if vermin is None:
        pytest.skip("vermin is not installed (pip install -e '.[test]')")
    out = subprocess.run(
        [vermin, "--target=3.6-", "--no-tips", "--violations", "--eval-annotations", str(REMOTE)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_pump_imports_only_the_standard_library():
    """No sgmon module, no third-party package: it runs under ``python3 -I`` on a bare host."""
    code = REMOTE.read_text()
    assert "sgmon" not in "".join(
        line for line in code.splitlines() if line.startswith(("import", "from"))
    )


def test_a_pumped_host_reads_as_the_local_one():
    """The Data Guard socket, the disks, the interfaces and the CPUs come through the pump, read
    by the same collectors as locally; the mirror is gone after close."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    port = srv.getsockname()[1]
    client = socket.create_connection(("127.0.0.1", port))
    accepted, _ = srv.accept()
    peer = f"127.0.0.1:{client.getsockname()[1]}"
    host = HostConfig(name="far", role="standby", ssh="far", ssh_command=LOCAL_SSH)
    [src] = sources_from_config(Config(hosts=(host,), ports=(port,)), interval=0.5)
    assert isinstance(src, PumpSource)

    def traffic() -> None:
        accepted.sendall(b"x" * 50000)
        client.recv(1 << 20)

    try:
        frames = run_source(src, 3.0, traffic)
    finally:
        for s in (client, accepted, srv):
            s.close()
    assert src.last_error is None
    assert src.python and src.python.startswith("3.")
    assert len(frames) >= 3
    f = frames[-1]
    assert f.host == "far" and f.role == "standby" and f.seq > 0
    assert abs(f.time - round(f.time * 2) / 2) < 0.05  # on this machine's 0.5 s boundaries
    for name in ("cpu", "paging", "disk", "netdev", "tcp"):
        assert f.collectors[name].status.value == "ok", (name, f.collectors[name].error)
    sockets = {k: v for k, v in f.rows("tcp").items() if k != "host"}
    assert list(sockets) == [f"127.0.0.1:{port}>{peer}"]  # a standby's: the accepted end
    assert next(iter(sockets.values()))["state"] == "ESTAB"
    sent = [
        r.get("bytes_acked") or 0 for g in frames for k, r in g.rows("tcp").items() if k != "host"
    ]
    assert max(sent) > 0
    assert "lo" not in f.rows("netdev") and f.rows("cpu")["all"]["usr"] is not None
    assert "sgmon installed" in (f.collectors["biolat"].error or "")
    assert not Path(src.mirror.root).exists()


def test_the_pump_tails_the_traces(tmp_path: Path) -> None:
    """LGWR's slow-write warnings in a trace on the far side reach the trace collector: the pump
    tails the files of the configured process (a respawned LGWR's new file included), and the
    collector reads them from the mirror.  The far side runs in a mount namespace where the
    trace directory holds what this side's copy of that path does not."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare for a mount namespace")
    real, far = tmp_path / "real", tmp_path / "diag"
    real.mkdir()
    far.mkdir()  # empty on this side
    first = real / "PROD_lgwr_1234.trc"
    first.write_text("*** 2026-11-27 09:00:00.000\nstarted\n")
    ssh = tmp_path / "ssh"
    ssh.write_text(
        '#!/bin/bash\nexec unshare -m bash -c \'mount --bind "$1" "$2" && '
        'exec env -i PATH=/usr/bin:/bin bash -c "$3"\' _ '
        f'{real} {far} "${{!#}}"\n'
    )
    ssh.chmod(0o755)
    host = HostConfig(name="far", role="primary", ssh="far", ssh_command=(str(ssh),))
    lgwr = str(far / first.name)
    config = Config(hosts=(host,), collectors={"oracle_trace": {"lgwr": lgwr, "rescan_s": 0.5}})
    [src] = sources_from_config(config, interval=0.5)
    assert isinstance(src, PumpSource)
    written = []

    def warn() -> None:
        n = len(written)
        if n < 20:
            target = first if n < 10 else real / "PROD_lgwr_5678.trc"  # LGWR respawned
            with open(target, "a") as f:
                f.write(f"*** 2026-11-27 09:00:{n:02d}.000\n")
                f.write(f"Warning: log write elapsed time {600 + n}ms, size 4KB\n")
            written.append(n)

    frames = run_source(src, 14.0, warn)
    assert src.last_error is None and not list(far.iterdir())
    counts = [r.get("slow_writes") for f in frames for r in f.rows("oracle_trace").values()]
    assert 10 in counts  # the respawned LGWR's file, found at the next listing, read whole
    assert sum(c or 0 for c in counts) > 10  # and the first file's warnings before it


def test_a_killed_sgmons_mirror_is_removed_by_the_next() -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    mine = Mirror("first", Shipped())
    left = Path(mine.root).with_name(f"{PREFIX}{dead.pid}-far-abc")
    left.mkdir()
    (left / "stat").write_text("cpu 1 2 3\n")
    try:
        second = Mirror("second", Shipped())
        assert not left.exists() and Path(mine.root).exists()  # ours is in use: kept
        second.close()
    finally:
        mine.close()
        shutil.rmtree(left, ignore_errors=True)


def test_a_host_without_python3_is_one_line() -> None:
    if os.path.exists("/usr/libexec/platform-python"):
        pytest.skip("this machine has platform-python, which the pump falls back to")
    bare = ("bash", "-c", 'exec env -i PATH=/nonexistent /bin/bash -c "${!#}"', "ssh")
    warnings: list[str] = []
    [src] = sources_from_config(
        Config(hosts=(HostConfig(name="far", ssh="far", ssh_command=bare),)), interval=0.5
    )
    assert isinstance(src, PumpSource)
    src.max_backoff, src.warn = 0.5, warnings.append
    run_source(src, 2.5)
    assert len(warnings) == 1, warnings  # one line, not one a retry
    assert "no python3 on this host" in warnings[0] and "3.6 or later" in warnings[0]


def test_an_installed_agents_host_gets_its_database_read_here(tmp_path: Path, monkeypatch):
    """sgmon_path keeps the installed agent; the host's database is still read from here by
    default, into the agent's frames of that host."""
    monkeypatch.setenv("H33_AGENT_PW", "pw")
    db = StandIn(str(tmp_path / "stby.db"), role="PHYSICAL STANDBY", db_unique_name="STBY")
    db.add_user("c##sgmon", "pw", admin=["sysdg"], grants=())
    db.publish_event("RFS write", 10, 5000.0)
    dsn = f"standin:{tmp_path / 'stby.db'}"
    host = HostConfig(
        name="stby", role="standby", ssh="far", ssh_command=LOCAL_SSH,
        sgmon_path=f"{sys.executable} -m sgmon",
        db=DbConfig(dsn=dsn, user="c##sgmon", mode="sysdg", password_env="H33_AGENT_PW"),
    )  # fmt: skip
    [src] = sources_from_config(Config(hosts=(host,)), interval=0.5)
    assert isinstance(src, RemoteSource)
    try:
        frames = run_source(src, 6.0)
    finally:
        db.close()
    whole = [f for f in frames if f.seq > 0 and "cpu" in f.collectors]
    assert whole, src.last_error
    f = whole[-1]
    assert f.collectors["cpu"].status.value == "ok"
    assert f.collectors["oracle_waits"].status.value == "ok"
    assert "RFS write" in f.rows("oracle_waits")


PY = (sys.executable, "-c")
ACCEPT = (
    "import socket\ns = socket.create_server(('', 1521))\nwhile 1:\n"
    "    c = s.accept()[0]\n    c.recv(1)\n    c.close()\n"
)
STANDBY = (
    "import socket, time\ns = socket.create_server(('', 1521))\nc = s.accept()\ntime.sleep(30)"
)
HOLD = """
import socket, sys, time
c = socket.create_connection((sys.argv[1], 1521))
print(1, flush=True)
time.sleep(30)
"""
LOGONS = """
import socket, sys, time
end = time.monotonic() + 40
while time.monotonic() < end:
    with socket.create_connection((sys.argv[1], 1521), timeout=5):
        time.sleep(0.2)
"""
"""Helpers run in the namespaces: the primary's listener for its clients, the standby's
listener, the primary's connection to it, and clients logging on five times a second."""


def _pumped(pair: NsPair) -> subprocess.Popen:
    """The pump in namespace ``a`` (the far side's python3), asked for a primary's DG sockets
    on 1521 at 0.5 s ticks."""
    host = HostConfig(name="prim", role="primary", ssh="far")
    selection = pumped_sockets(Config(hosts=(host,), ports=(1521,)), host)
    python = shutil.which("python3", path=FAR_PYTHON or None) or "python3"
    argv = ["ip", "netns", "exec", pair.a, python, "-I", "-c", BOOTSTRAP]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(request(0.5, Shipped(), selection))
    proc.stdin.flush()
    proc.stdout.read(len(MAGIC))
    return proc


def _diag_pieces(proc: subprocess.Popen, mirror: Mirror, seconds: float) -> Iterator[bytes]:
    """The sockets' piece of each tick the pump sends for ``seconds``."""
    assert proc.stdout is not None
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        head = proc.stdout.read(5)
        assert len(head) == 5, "the pump ended"
        kind, size = struct.unpack(">cI", head)
        payload = proc.stdout.read(size)
        if kind == b"T":
            mirror.apply(payload)
            yield Path(mirror.local("/" + SOCK_DIAG_DUMP)).read_bytes()


def _kinds(piece: bytes) -> list[int]:
    """The netlink message types in a piece of sock_diag replies."""
    out, pos = [], 0
    while pos + 16 <= len(piece):
        length, kind = struct.unpack_from("=IH", piece, pos)
        out.append(kind)
        pos += max(16, (length + 3) & ~3)
    return out


def test_a_primarys_client_logons_do_not_walk_its_sockets() -> None:
    """A primary with no Data Guard connection whose clients log on to its listener's port (the
    Data Guard port too) five times a second from another host: the pump looks for its sockets
    once at the start, not again for the logons (each dump walks the kernel's whole socket
    hash), and never reads the clients' connections; the connection it then opens to
    the standby's listener shows within two seconds.  Real sockets across two namespaces."""
    require_root("ip")
    with contextlib.ExitStack() as stack:
        pair = stack.enter_context(ns_pair("pd"))  # a: the primary, b: clients and standby
        helpers = [pair.popen("a", *PY, ACCEPT), pair.popen("b", *PY, STANDBY)]
        time.sleep(0.5)
        helpers.append(pair.popen("b", *PY, LOGONS, pair.a_ip))
        for p in helpers:
            stack.callback(p.kill)
        pump = _pumped(pair)
        stack.callback(pump.kill)
        mirror = stack.enter_context(contextlib.closing(Mirror("prim", Shipped())))
        pieces = list(_diag_pieces(pump, mirror, 12.0))
        dumps = [3 in _kinds(piece) for piece in pieces]
        assert dumps[0] and not any(dumps[1:]), dumps  # on main: 1, 2, 4, 8 s apart
        clients = [s for piece in pieces for s in parse_dump(piece) if s.sport == 1521]
        assert not clients, clients  # the database's own port: its clients are not read
        helpers.append(pair.popen("a", *PY, HOLD, pair.b_ip, stdout=subprocess.PIPE))
        stack.callback(helpers[-1].kill)
        assert helpers[-1].stdout is not None and helpers[-1].stdout.readline()  # connected
        opened = time.monotonic()
        for piece in _diag_pieces(pump, mirror, 10.0):
            found = [s.dport for s in parse_dump(piece)]
            if found:
                break
        assert found == [1521]
        assert time.monotonic() - opened <= 2.5
