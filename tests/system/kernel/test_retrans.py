"""retrans against the kernel's own counts, on a real lossy link between two namespaces.

A request/ack sender in namespace ``a`` (one 1000-byte write in flight at a time, the shape of a
SYNC redo write) talks to a server on port 1522 in ``b``; nftables drops 10 % of the packets
arriving at ``b`` (a high rate keeps the test short), and ``a``'s route has rto_min 10 ms so each
loss costs ~10 ms instead of ~200.  The collector runs in the test process: tracepoints see every
namespace, and its kernel filter keeps port 1522.  Only the events of this test's socket (its
10.x.0.y addresses are unique to the run) are compared, so a parallel run elsewhere cannot count.

Truth: the sender's own ``TCP_INFO`` before and after (tcpi_total_retrans, tcpi_total_rto) and
TCPLossProbes of namespace ``a`` (/proc/net/netstat is per namespace).  Then the clean-up
(close, kill -9, mount), the fallback, the raw reader on the kernel's own pages, and `sgmon
record` / `sgmon check` end to end (the finding on hand-built frames: test_retrans_finding.py).
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from nslab import FAR_SSH, NsPair, ns_pair, require_root, run_source
from paths import REPO
from test_tcp_accuracy import SERVER

from collectors.retrans import RetransCollector
from sgmon.collector import Unavailable
from sgmon.config import Config, HostConfig
from sgmon.fields import RETRANS
from sgmon.hosts.build import sources_from_config
from sgmon.readers.tcp_info import TcpInfo, decode_tcp_info
from sgmon.readers.tracefs import TRACEFS, TraceInstance, mount

PORT = 1522
MSG = 1000  # one segment per write: one retransmission is one retransmitted segment
LOSS_PERMILLE = 100
WRITES = 600
TTL = "60"  # seconds: every helper process ends by itself even if the test hangs

CLIENT = r"""
import socket, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
info = lambda: s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 248).hex()
print(s.getsockname()[1], info(), flush=True)
sys.stdin.readline()
msg, end = b"m" * int(sys.argv[4]), time.monotonic() + 20
sent = 0
while sent < int(sys.argv[3]) and time.monotonic() < end:
    s.sendall(msg)
    if not s.recv(1):
        break
    sent += 1
print(sent, info(), flush=True)
sys.stdin.readline()
"""


def dg_server(pair: NsPair) -> subprocess.Popen:
    """The server on PORT in ``b``, listening (it ends by itself after TTL seconds)."""
    server = pair.popen(
        "b", sys.executable, "-c", SERVER.replace("8192", str(MSG)), str(PORT), TTL,
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert server.stdout is not None and server.stdout.readline().strip() == "listening"
    return server


@contextlib.contextmanager
def lossy_sender(writes: int) -> Iterator[tuple[NsPair, Any, str, TcpInfo]]:
    """The request/ack sender in ``a`` connected to the server in ``b`` across the lossy link
    (LOSS_PERMILLE toward b, rto_min 10 ms in a), waiting for "go" to make ``writes`` writes:
    (the pair, the sender, its socket's key as retrans keys it, its TCP_INFO before); both
    processes killed after."""
    with ns_pair("rt") as pair:
        server = dg_server(pair)
        client = None
        try:
            pair.add_loss("b", LOSS_PERMILLE, PORT)
            pair.set_rto_min("a", 10)
            client = pair.popen(
                "a", sys.executable, "-c", CLIENT, pair.b_ip, str(PORT), str(writes), str(MSG),
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            assert client.stdin is not None and client.stdout is not None
            port, hexinfo = client.stdout.readline().split()
            key = f"{pair.a_ip}:{port}>{pair.b_ip}:{PORT}"
            yield pair, client, key, decode_tcp_info(bytes.fromhex(hexinfo))
        finally:
            for p in (client, server):
                if p is not None:
                    p.kill()
                    p.wait(5)


def kernel_at_least(major: int, minor: int) -> bool:
    parts = platform.release().split(".")
    return (int(parts[0]), int(parts[1].split("-")[0])) >= (major, minor)


def loss_probes(pair: NsPair) -> int:
    """TcpExt TCPLossProbes of namespace ``a``."""
    lines = pair.run("a", "cat", "/proc/net/netstat").splitlines()
    for names, values in zip(lines[::2], lines[1::2], strict=False):
        if names.startswith("TcpExt:"):
            return int(dict(zip(names.split(), values.split(), strict=False))["TCPLossProbes"])
    raise AssertionError("no TcpExt line in /proc/net/netstat")


def instances() -> set[str]:
    return {n for n in os.listdir(f"{TRACEFS}/instances") if n.startswith("sgmon-")}


def global_settings() -> dict[str, str]:
    """Every tcp event's enable and filter in the global instance."""
    out = {}
    for event in sorted(Path(f"{TRACEFS}/events/tcp").iterdir()):
        for name in ("enable", "filter"):
            if (event / name).exists():
                out[f"{event.name}/{name}"] = (event / name).read_text()
    return out


@pytest.fixture
def tracing() -> Iterator[None]:
    """tracefs mounted for the test (and unmounted after it if the test mounted it and no
    instance is left), with the tcp tracepoints; skipped with the reason otherwise."""
    require_root("ip", "nft")
    try:
        mounted = mount()
    except Exception as e:
        pytest.skip(f"no tracefs here: {e}")
    try:
        if not os.path.isdir(f"{TRACEFS}/events/tcp/tcp_retransmit_skb"):
            pytest.skip("this kernel has no tcp:tcp_retransmit_skb tracepoint")
        yield
    finally:
        if mounted and not os.listdir(f"{TRACEFS}/instances"):
            subprocess.run(["umount", TRACEFS], capture_output=True)


@pytest.mark.root
def test_events_match_the_kernels_counts_under_loss(tracing: None) -> None:
    coll = RetransCollector({"ports": [PORT]})
    with lossy_sender(WRITES) as (pair, client, key, before):
        try:
            coll.open()
            probes0 = loss_probes(pair)
            client.stdin.write("go\n")
            client.stdin.flush()
            ticks = []  # (read started, read ended, rows, events)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                started = time.time()
                rows = coll.sample()
                ended = time.time()
                ticks.append((started, ended, rows, coll.take_events()))
                if client.poll() is not None or _done(client):
                    break
                time.sleep(0.25)
            sent, hexinfo = client.stdout.readline().split()
            after = decode_tcp_info(bytes.fromhex(hexinfo))
            time.sleep(0.1)
            ticks.append((time.time(), time.time(), coll.sample(), coll.take_events()))
            probes = loss_probes(pair) - probes0
        finally:
            coll.close()
    assert int(sent) == WRITES
    retrans = after.total_retrans - before.total_retrans
    assert retrans >= 20, f"the loss rule dropped too little: {retrans} retransmissions"
    ours = [(t0, t1, rows.get(key), [e for e in evs if e.instance == key])
            for t0, t1, rows, evs in ticks]  # fmt: skip
    events = [e for *_, evs in ours for e in evs]
    counted = {f: sum(r[f] for _, _, r, _ in ours if r) for f in ("retransmits", "tlp", "rto")}
    expiries = sum(r["rto_expiries"] for _, _, r, _ in ours if r)
    # One event per retransmitted segment: the kernel's count, within 10 %.
    assert len(events) == counted["retransmits"]
    assert abs(len(events) - retrans) <= 0.1 * retrans, (len(events), retrans)
    assert counted["tlp"] + counted["rto"] <= counted["retransmits"]  # the rest: fast
    # Each event inside its tick: after the previous read began, before this read ended.
    previous_start = ticks[0][0] - 1.0
    for t0, t1, _, evs in ours:
        for e in evs:
            assert previous_start - 0.002 <= e.time <= t1 + 0.002, (previous_start, e.time, t1)
        previous_start = t0
    assert all(e.text.startswith(f"retransmit {key}: ") for e in events)
    # TLP: one write in flight and nothing queued, so every probe is a retransmission.
    assert counted["tlp"] > 0
    assert abs(counted["tlp"] - probes) <= max(2, 0.1 * probes), (counted["tlp"], probes)
    # RTO: entries into Loss against tcpi_total_rto (kernel >= 6.7); each expiry of a lone
    # segment retransmits it once, in Loss.
    if kernel_at_least(6, 7):
        rtos = after.total_rto - before.total_rto
        assert abs(expiries - rtos) <= max(1, 0.1 * rtos), (expiries, rtos)
        assert abs(counted["rto"] - rtos) <= max(1, 0.1 * rtos), (counted["rto"], rtos)
    last = next(r for *_, r, _ in reversed(ours) if r)
    assert last["state"] == "ESTAB" and last["last_kind"] in ("tlp", "rto", "fast")
    assert last["last_at"] == max(e.time for e in events)


STALLS = r"""
import json, socket, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
limit = float(sys.argv[5]) if len(sys.argv) > 5 else 20.0  # seconds, at most 20
msg, end, stalls = b"m" * int(sys.argv[4]), time.monotonic() + min(limit, 20.0), []
for _ in range(int(sys.argv[3])):
    if time.monotonic() > end:
        break
    t0 = time.time()
    s.sendall(msg)
    s.recv(1)
    t1 = time.time()
    if t1 - t0 > 0.1:
        stalls.append((t0, t1))
print(s.getsockname()[1], json.dumps(stalls), flush=True)
"""


@pytest.mark.root
def test_lone_write_stalls_at_default_rto_min_are_tail_loss_probes(tracing: None) -> None:
    """Issue 17 item 5: with one write in flight and the default rto_min, the ~205 ms stalls
    end mostly with a tail-loss probe (2 x RTT + rto_min), the congestion state never in Loss."""
    with ns_pair("rt") as pair:
        server = dg_server(pair)
        client = None
        coll = RetransCollector({"ports": [PORT]})
        try:
            pair.add_loss("b", 30, PORT)
            coll.open()
            client = pair.popen(
                "a", sys.executable, "-c", STALLS, pair.b_ip, str(PORT), "500", str(MSG),
                stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            assert client.stdout is not None
            port, text = client.stdout.readline().split(None, 1)
            coll.sample()
            key = f"{pair.a_ip}:{port}>{pair.b_ip}:{PORT}"
            events = [e for e in coll.take_events() if e.instance == key]
        finally:
            coll.close()
            for p in (client, server):
                if p is not None:
                    p.kill()
                    p.wait(5)
    stalls = [tuple(s) for s in json.loads(text)]
    assert len(stalls) >= 3, f"too few losses to judge: {stalls}"
    kinds = []
    for t0, t1 in stalls:
        if t1 - t0 < 0.19:
            continue  # not a loss (a probe or an RTO waits >= 200 ms): a busy shared machine
        # The stall ends with its repair: a retransmission ~200 ms after the write began (the
        # ack may reach the busy client a few ms later).
        repair = [e for e in events if t0 + 0.19 <= e.time <= t1 + 0.002]
        assert repair, f"no retransmission ends the stall {t0:.3f}-{t1:.3f}"
        if t1 - t0 < 0.3:  # one loss: a lost probe would have doubled it
            assert 0.2 <= repair[0].time - t0 <= 0.23
            kinds.append(repair[0].text.split(": ", 1)[1])
    # A probe in Open, or (when a probe is still outstanding from the last loss, so none may
    # be sent) the RTO, in Loss: the same ~205 ms either way, which is why the event says which.
    assert set(kinds) <= {
        "tail-loss probe (ESTAB, congestion Open)",
        "RTO (ESTAB, congestion Loss)",
    }
    assert kinds.count("tail-loss probe (ESTAB, congestion Open)") >= len(kinds) / 2 > 1, kinds


def _done(client: subprocess.Popen) -> bool:
    """Whether the client has printed its final line (without consuming it)."""
    import select

    assert client.stdout is not None
    return bool(select.select([client.stdout], [], [], 0)[0])


@pytest.mark.root
def test_close_removes_every_setting(tracing: None) -> None:
    settings, mine_before = global_settings(), instances()
    coll = RetransCollector({"ports": [PORT], "role": "primary"})
    coll.open()
    try:
        made = instances() - mine_before
        assert len(made) == 1
        path = f"{TRACEFS}/instances/{made.pop()}"
        assert (Path(path) / "trace_clock").read_text().count("[mono]") == 1
        for event in ("tcp_retransmit_skb", "tcp_cong_state_set"):
            assert (Path(path) / f"events/tcp/{event}/enable").read_text().strip() == "1"
            assert "dport == 1522" in (Path(path) / f"events/tcp/{event}/filter").read_text()
        assert "sport" not in (Path(path) / "events/tcp/tcp_cong_state_set/filter").read_text()
        assert global_settings() == settings, "the global instance is never touched"
        rows = coll.sample()
        assert rows["host"]["source"] == f"tracefs {Path(path).name}"
    finally:
        coll.close()
    coll.close()  # idempotent
    assert not os.path.exists(path)
    assert instances() == mine_before
    assert global_settings() == settings


@pytest.mark.root
def test_kill9_leaves_an_instance_the_next_start_removes(tracing: None, tmp_path: Path) -> None:
    settings = global_settings()
    config = tmp_path / "sgmon.toml"
    config.write_text(f'interval = "200ms"\n[dataguard]\nports = [{PORT}]\n')
    sgmon = Path(sys.executable).with_name("sgmon")
    env = {**os.environ, "SGMON_RUNTIME_DIR": str(tmp_path)}
    child = subprocess.Popen(
        [str(sgmon), "record", "--quiet", "--config", str(config), "--dir", str(tmp_path / "a"),
         "--duration", "60s"],
        env=env, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and child.poll() is None:
            theirs = {n for n in instances() if n.startswith(f"sgmon-{child.pid}-")}
            if theirs:
                break
            time.sleep(0.1)
        assert theirs, f"sgmon record made no trace instance (exit {child.poll()})"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(5)
    assert theirs <= instances(), "SIGKILL leaves the instance behind"
    coll = RetransCollector({"ports": [PORT]})
    coll.open()
    try:
        assert not theirs & instances()
        cleanups = [e.text for e in coll.take_events() if e.kind == "cleanup"]
        assert any(name in t for t in cleanups for name in theirs), cleanups
    finally:
        coll.close()
    assert global_settings() == settings


@pytest.mark.root
def test_unavailable_without_root_names_the_fallback(tracing: None) -> None:
    script = (
        "from collectors.retrans import RetransCollector as C\n"
        "from sgmon.collector import Unavailable\n"
        "c = C({'ports': [1522]})\n"
        "try:\n    c.open()\nexcept Unavailable as e:\n    print(e)\nelse:\n    c.close()\n"
    )
    root = REPO
    python = shutil.which("python3", path="/usr/bin:/bin")  # not under root's home
    if python is None:
        pytest.skip("needs a system python3 that user nobody may run")
    out = subprocess.run(
        [python, "-c", script], user=65534, group=65534, capture_output=True,
        text=True, timeout=30, cwd="/", env={**os.environ, "PYTHONPATH": str(root)},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "needs root" in out.stdout, out.stdout
    assert "tcp collector's counters" in out.stdout


def test_root_option_is_unavailable(tmp_path: Path) -> None:
    (tmp_path / "proc").mkdir()
    with pytest.raises(Unavailable, match="this machine's kernel only"):
        RetransCollector({"root": str(tmp_path)}).open()


MOUNT_SCRIPT = """
import ctypes, os
from collectors.retrans import RetransCollector
from sgmon.readers.tracefs import TRACEFS
libc = ctypes.CDLL(None, use_errno=True)
while os.path.ismount(TRACEFS):  # this mount namespace's copy only
    assert libc.umount2(TRACEFS.encode(), 2) == 0, os.strerror(ctypes.get_errno())
c = RetransCollector({"ports": [1522]})
c.open()
print("open", os.path.ismount(TRACEFS))
others = len(os.listdir(TRACEFS + "/instances")) > 1  # someone else's: then it stays mounted
c.close()
print("closed", os.path.ismount(TRACEFS) != others)
"""


@pytest.mark.root
def test_mounts_tracefs_when_absent_and_unmounts_what_it_mounted(tracing: None) -> None:
    """In a private mount namespace (the host's tracefs stays as it is): with nothing mounted,
    open mounts tracefs and close unmounts it, unless another instance lives under it."""
    require_root("unshare")
    root = REPO
    out = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", sys.executable, "-c", MOUNT_SCRIPT],
        capture_output=True, text=True, timeout=30, env={**os.environ, "PYTHONPATH": str(root)},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["open", "True", "closed", "False"], out.stdout


@pytest.mark.root
def test_a_stale_looking_instance_held_open_is_left_alone(tracing: None) -> None:
    """An instance whose pid is not alive here but whose files someone holds open (an sgmon in
    another PID namespace) keeps its settings; once released, the next start removes it."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    path = Path(f"{TRACEFS}/instances/sgmon-{gone.pid}-1-0")
    path.mkdir()
    try:
        (path / "events/tcp/tcp_retransmit_skb/enable").write_text("1")
        held = os.open(path / "per_cpu/cpu0/trace_pipe_raw", os.O_RDONLY | os.O_NONBLOCK)
        try:
            coll = RetransCollector({"ports": [PORT]})
            coll.open()
            coll.close()
            assert (path / "events/tcp/tcp_retransmit_skb/enable").read_text().strip() == "1"
        finally:
            os.close(held)
        coll = RetransCollector({"ports": [PORT]})
        coll.open()
        coll.close()
        assert not path.exists()
    finally:
        if path.exists():
            path.rmdir()


@pytest.mark.root
def test_an_overrun_buffer_counts_what_it_lost(tracing: None) -> None:
    """A 4 KB buffer (7 KB per CPU as the kernel rounds it) read once after ~250
    retransmissions (~35 KB of records): the oldest records are overwritten,
    and ``dropped`` says how many, so events + dropped still cover the kernel's count."""
    coll = RetransCollector({"ports": [PORT], "role": "primary", "buffer_kb": 4})
    with lossy_sender(2500) as (_, client, key, before):
        try:
            coll.open()
            client.stdin.write("go\n")
            client.stdin.flush()
            _, hexinfo = client.stdout.readline().split()
            after = decode_tcp_info(bytes.fromhex(hexinfo))
            rows = coll.sample()
        finally:
            coll.close()
    retrans = after.total_retrans - before.total_retrans
    seen = rows[key]["retransmits"] if key in rows else 0
    assert rows["host"]["dropped"] > 0 and seen < retrans, (rows["host"], seen, retrans)
    if seen + rows["host"]["dropped"] < retrans:  # docs/limits.md
        pytest.xfail(
            f"this run: {seen} traced + {rows['host']['dropped']} dropped of the kernel's "
            f"{retrans} retransmissions (kernel {platform.release()}).  The pages' stored "
            "missed-event counts fell short of what the overrun lost in 3 or 4 of 9 runs on "
            "6.18.44-fc-v657 (80 + 105 of 268, 88 + 152 of 296), where earlier runs of this "
            "test had always been covered"
        )


@pytest.mark.root
def test_an_ipv4_mapped_socket_is_keyed_as_tcp_keys_it(tracing: None) -> None:
    """An AF_INET6 socket talking to an IPv4 peer (``::ffff:a.b.c.d``) records family AF_INET6;
    its row is keyed with the IPv4 addresses, as the `tcp` collector shows the socket."""
    with ns_pair("rt") as pair:
        server = dg_server(pair)
        client = None
        coll = RetransCollector({"ports": [PORT]})
        try:
            pair.add_loss("b", LOSS_PERMILLE, PORT)
            pair.set_rto_min("a", 10)
            coll.open()
            client = pair.popen(
                "a", sys.executable, "-c", STALLS, f"::ffff:{pair.b_ip}", str(PORT), "300",
                str(MSG), stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            assert client.stdout is not None
            port = client.stdout.readline().split()[0]
            rows = coll.sample()
        finally:
            coll.close()
            for p in (client, server):
                if p is not None:
                    p.kill()
                    p.wait(5)
    key = f"{pair.a_ip}:{port}>{pair.b_ip}:{PORT}"
    assert rows[key]["retransmits"] > 0, sorted(rows)
    assert not [k for k in rows if "ffff" in k]


@pytest.mark.root
def test_record_archives_each_retransmission_with_its_time(tracing: None, tmp_path: Path) -> None:
    """`sgmon record` end to end: each retransmission of the DG socket is a line of events.csv
    stamped to the millisecond inside the tick that carried it, and the retrans CSV's counts
    add up to the same number."""
    config = tmp_path / "sgmon.toml"
    config.write_text(f'interval = "500ms"\n[dataguard]\nports = [{PORT}]\n')
    sgmon = Path(sys.executable).with_name("sgmon")
    env = {**os.environ, "SGMON_RUNTIME_DIR": str(tmp_path)}
    with ns_pair("rt") as pair:
        server = dg_server(pair)
        record = client = None
        try:
            pair.add_loss("b", LOSS_PERMILLE, PORT)
            pair.set_rto_min("a", 10)
            record = subprocess.Popen(
                [str(sgmon), "record", "--quiet", "--config", str(config), "--dir",
                 str(tmp_path / "rec"), "--duration", "5s"], env=env,
            )  # fmt: skip
            time.sleep(1.5)  # the recorder's first ticks: its trace instance is in place
            client = pair.popen(
                "a", sys.executable, "-c", STALLS, pair.b_ip, str(PORT), "300", str(MSG),
                stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            assert client.stdout is not None
            port = client.stdout.readline().split()[0]
            assert record.wait(30) == 0
        finally:
            for p in (client, server, record):
                if p is not None and p.poll() is None:
                    p.kill()
                    p.wait(5)
    key = f"{pair.a_ip}:{port}>{pair.b_ip}:{PORT}"
    (host,) = (d for d in (tmp_path / "rec").iterdir() if d.is_dir())
    with open(host / "events.csv", newline="") as f:
        events = [
            r for r in csv.DictReader(f) if r["kind"] == "retransmit" and r["instance"] == key
        ]
    counts = []
    for path in host.glob("retrans_*.csv"):
        with open(path, newline="") as f:
            counts += [int(r["retransmits"]) for r in csv.DictReader(f) if r["instance"] == key]
    assert len(events) >= 5 and len(events) == sum(counts), (len(events), counts)
    for e in events:
        at, tick = (datetime.fromisoformat(e[k]).timestamp() for k in ("time", "tick"))
        assert re.fullmatch(r".*T\d\d:\d\d:\d\d\.\d{3}\+00:00", e["time"])
        assert tick - 1.0 <= at <= tick + 0.002, (e["time"], e["tick"])  # within its tick


@pytest.mark.root
def test_raw_pages_decode_short_long_and_time_extended_records(tracing: None) -> None:
    """The binary reader on the kernel's own pages: trace_marker writes into the private
    instance give short records and long ones (over 112 bytes: the length in a second word),
    and a pause over 2**27 ns puts a time-extend entry before the next; each comes back whole,
    stamped between the clock readings around its write."""
    trace = TraceInstance({})
    trace.open()
    try:
        written = []
        for text in ("short", "L" * 300, "after a pause", "x" * 120):
            if text == "after a pause":
                time.sleep(0.2)
            before = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            Path(f"{trace.path}/trace_marker").write_text(text)
            written.append((before, time.clock_gettime_ns(time.CLOCK_MONOTONIC), text))
        records, lost = trace.read()
    finally:
        trace.close()
    assert lost == 0 and len(records) == len(written)
    for (ts, rec), (before, after, text) in zip(records, written, strict=True):
        assert text.encode() in rec, (text, rec[:40])
        assert before <= ts <= after, (before, ts, after)


@pytest.mark.root
def test_check_names_what_repaired_the_stall_end_to_end(tracing: None, tmp_path: Path) -> None:
    """`sgmon record` inside the sender's namespace (so `tcp` sees the socket), 3 % loss at the
    default rto_min for 6 s (a state that holds more than 3 ticks, as findings require), then
    `sgmon check --from`: the rto_stall finding cites a retransmission of the recording, to the
    millisecond, as the kind the recording's event says it was."""
    config = tmp_path / "sgmon.toml"
    config.write_text(f'interval = "1s"\n[dataguard]\nports = [{PORT}]\n')
    sgmon = str(Path(sys.executable).with_name("sgmon"))
    env = {**os.environ, "SGMON_RUNTIME_DIR": str(tmp_path)}
    with ns_pair("rt") as pair:
        server = dg_server(pair)
        record = client = None
        try:
            pair.add_loss("b", 30, PORT)
            record = pair.popen(
                "a", sgmon, "record", "--quiet", "--config", str(config), "--dir",
                str(tmp_path / "rec"), "--duration", "10s", env=env,
            )  # fmt: skip
            time.sleep(1.5)
            client = pair.popen(
                "a", sys.executable, "-c", STALLS, pair.b_ip, str(PORT), "100000", str(MSG), "6",
                stdout=subprocess.PIPE, text=True,
            )  # fmt: skip  # losses for 6 s: a state that holds, not a burst of 2 s
            assert client.stdout is not None
            port = client.stdout.readline().split()[0]
            assert record.wait(30) == 0
        finally:
            for p in (client, server, record):
                if p is not None and p.poll() is None:
                    p.kill()
                    p.wait(5)
    out = subprocess.run(
        [sgmon, "check", "--from", str(tmp_path / "rec"), "--format", "json"],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    report = json.loads(out.stdout)
    (stall,) = [f for f in report["findings"] if f["rule"] == "rto_stall"]
    (cited,) = [e for e in stall["evidence"] if e.startswith("retransmit at ")]
    key = f"{pair.a_ip}:{port}>{pair.b_ip}:{PORT}"
    (host,) = (d for d in (tmp_path / "rec").iterdir() if d.is_dir())
    with open(host / "events.csv", newline="") as f:
        events = [
            r for r in csv.DictReader(f) if r["kind"] == "retransmit" and r["instance"] == key
        ]
    said = {  # local HH:MM:SS.mmm, as the finding prints it -> what the event says it was
        time.strftime("%H:%M:%S", time.localtime(datetime.fromisoformat(e["time"]).timestamp()))
        + e["time"][19:23]: e["text"].split(": ", 1)[1].split(" (")[0]
        for e in events
    }
    at = cited.split()[2].rstrip(",")
    assert at in said, (cited, sorted(said))
    what = {"tail-loss probe": "a tail-loss probe", "RTO": "an RTO expiry"}.get(said[at], "?")
    assert re.search(rf", RTO 2\d\d ms: {re.escape(what)}", cited), cited  # rto_min + RTT terms


@pytest.mark.root
def test_a_pumped_hosts_retransmissions_come_through_its_pump(tracing: None) -> None:
    """A host reached over ssh with nothing installed: its pump makes the trace instance
    there and ships the raw pages each tick; the retrans collector here decodes them.  One
    event per retransmission of the socket (the kernel's own count, within 10 %), each at a
    time inside the run; the pump's instance is gone once the session ends."""
    before_instances = instances()
    with lossy_sender(300) as (_, client, key, before):
        host = HostConfig(name="far", role="primary", ssh="far", ssh_command=FAR_SSH)
        [src] = sources_from_config(Config(hosts=(host,), ports=(PORT,)), interval=0.5)
        started, go = time.time(), time.monotonic() + 2.0  # the pump traces by then
        stdin = client.stdin

        def start_writing() -> None:
            if time.monotonic() > go and not stdin.closed:
                stdin.write("go\n")
                stdin.close()

        frames = run_source(src, 10.0, start_writing)
        ended = time.time()
        sent, hexinfo = client.stdout.readline().split()
        after = decode_tcp_info(bytes.fromhex(hexinfo))
    assert src.last_error is None and int(sent) == 300
    assert frames[-1].collectors["retrans"].status.value == "ok"
    assert RETRANS.Rows.host.fixed in frames[-1].rows("retrans")
    retrans = after.total_retrans - before.total_retrans
    assert retrans >= 10, f"the loss rule dropped too little: {retrans} retransmissions"
    events = [e for f in frames for e in f.events if e.instance == key]
    counted = sum(RETRANS.retransmits.of(f.rows("retrans").get(key, {})) or 0 for f in frames)
    assert len(events) == counted
    assert abs(len(events) - retrans) <= 0.1 * retrans, (len(events), retrans)
    assert all(started <= e.time <= ended for e in events)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _stale(instances() - before_instances):
        time.sleep(0.1)
    assert not _stale(instances() - before_instances)


def _stale(names: set[str]) -> list[str]:
    """The instances of those whose process is gone (another sgmon's, running, may come)."""
    return [n for n in names if not os.path.exists(f"/proc/{n.split('-')[1]}")]
