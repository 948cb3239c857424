"""Remote hosts for real: Debian's sshd in two network namespaces, `sgmon agent` on the far side,
the link cut with nftables and restored.  The consumer must recover, never hang, and never put a
frame on the wrong host (each namespace sees only its own veth end, so the netdev rows tell)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import nslab
import pytest
from kits.sshd import keygen as _keygen
from kits.sshd import sshd

from sgmon.config import HostConfig
from sgmon.hosts.remote import RemoteSource
from sgmon.model import Frame
from sgmon.monitor import Monitor

PORT = 46322


def _sshd(
    pair: nslab.NsPair, side: str, ip: str, tmp: Path, authorized: Path, extra: str = "",
    port: int = PORT,
):  # fmt: skip
    ns = pair.a if side == "a" else pair.b
    return sshd(ns, ip, port, tmp / f"sshd_{side}", authorized, extra)


def _host(name: str, role: str, ip: str, client_ns: str, tmp: Path, user_key: Path) -> HostConfig:
    return HostConfig(
        name=name,
        role=role,
        ssh=f"root@{ip}",
        sgmon_path=f"{sys.executable} -m sgmon",
        ssh_command=("ip", "netns", "exec", client_ns, "ssh"),
        ssh_options=(
            "-F", "/dev/null", "-p", str(PORT), "-i", str(user_key), "-o", "IdentitiesOnly=yes",
            "-o", f"UserKnownHostsFile={tmp / 'known_hosts'}", "-o", "StrictHostKeyChecking=yes",
            "-o", "ConnectTimeout=3",
        ),
    )  # fmt: skip


def _cut(pair: nslab.NsPair, side: str, cut: bool) -> None:
    """Drop every packet toward the side's sshd (nslab's loss rule tops out at 99.9 %)."""
    if not cut:
        pair.run(side, "nft", "delete", "table", "inet", "sgmoncut", check=False)
        return
    pair.run(side, "nft", "add", "table", "inet", "sgmoncut")
    chain = "{ type filter hook input priority 0 ; }"
    pair.run(side, "nft", "add", "chain", "inet", "sgmoncut", "in", chain)
    pair.run(
        side, "nft", "add", "rule", "inet", "sgmoncut", "in", "tcp", "dport", str(PORT), "drop"
    )


def _wait(cond, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def survive_a_cut(
    pair: nslab.NsPair, prim, stby, cut: Callable[[bool], None], during=None, after=None
):
    """Frames from both hosts; the link toward the standby cut (``cut(True)``): it goes stale,
    with all-stale frames, while the primary goes on; restored, it comes back.  ``during`` runs
    while the link is down, ``after`` once it is back, before the sources stop.  Every frame
    carries its own side's interface (each namespace sees only its own veth end) and its
    configured role.  The frames."""
    frames: list[Frame] = []
    lock = threading.Lock()

    def sink(f: Frame, _judgement) -> None:
        with lock:
            frames.append(f)

    def real(host: str) -> list[Frame]:
        with lock:
            return [f for f in frames if f.host == host and f.seq > 0]

    mon = Monitor([prim, stby], sinks=[sink])
    mon.start()
    try:
        _wait(lambda: len(real("prim")) >= 3 and len(real("stby")) >= 3, 40, "frames")
        assert prim.clock_offset is not None and abs(prim.clock_offset) < 0.5
        cut(True)
        _wait(lambda: stby.stale, 15, "the standby marked stale")
        cut_at = len(real("stby"))
        n_prim = len(real("prim"))
        time.sleep(2)
        assert len(real("prim")) > n_prim  # the other host goes on
        with lock:
            stale = [f for f in frames if f.host == "stby" and f.seq == 0]
        assert stale and all(
            r.status.value == "stale" for f in stale for r in f.collectors.values()
        )
        if during is not None:
            during()
        cut(False)
        _wait(lambda: len(real("stby")) > cut_at + 3 and not stby.stale, 45, "recovery")
        if after is not None:
            after()
    finally:
        t0 = time.monotonic()
        mon.stop(timeout=5)
        assert time.monotonic() - t0 < 15  # nothing hangs
    for host, mine, other in (("prim", pair.a_if, pair.b_if), ("stby", pair.b_if, pair.a_if)):
        for f in real(host):
            ifs = f.rows("netdev")
            assert mine in ifs and other not in ifs, f"{host} got a frame of the other side"
            assert f.role == ("primary" if host == "prim" else "standby")
    return [f for f in frames if f.seq > 0]


@contextlib.contextmanager
def sshd_pair(tmp_path: Path, prefix: str) -> Iterator[tuple[nslab.NsPair, Path]]:
    """Two namespaces, each with an sshd that takes one new user key (and its path); the
    known_hosts file lists both; the sshds are killed at the end."""
    nslab.require_root("ip", "nft", "ssh", "ssh-keygen", "/usr/sbin/sshd")
    user_key = tmp_path / "user_key"
    authorized = tmp_path / "authorized_keys"
    authorized.write_text(_keygen(user_key) + "\n")
    with nslab.ns_pair(prefix) as pair:
        procs = []
        try:
            known = ""
            for side, ip in (("a", pair.a_ip), ("b", pair.b_ip)):
                p, line = _sshd(pair, side, ip, tmp_path, authorized, port=PORT)
                procs.append(p)
                known += line
            (tmp_path / "known_hosts").write_text(known)
            yield pair, user_key
        finally:
            for p in procs:
                p.kill()
                p.wait(5)


def test_agents_over_ssh_survive_a_cut_link(tmp_path):
    with sshd_pair(tmp_path, "sr") as (pair, user_key):
        warnings: list[str] = []
        prim = RemoteSource(
            _host("prim", "primary", pair.a_ip, pair.b, tmp_path, user_key),
            interval=0.5, max_backoff=2, ping_every=1, warn=warnings.append,
        )  # fmt: skip
        stby = RemoteSource(
            _host("stby", "standby", pair.b_ip, pair.a, tmp_path, user_key),
            interval=0.5, max_backoff=2, ping_every=1, warn=warnings.append,
        )  # fmt: skip
        survive_a_cut(pair, prim, stby, lambda cut: _cut(pair, "b", cut))
        assert prim.dropped == 0


def test_refused_or_password_only_target_is_one_line(tmp_path):
    nslab.require_root("ip", "ssh", "ssh-keygen", "/usr/sbin/sshd")
    user_key = tmp_path / "user_key"
    _keygen(user_key)
    authorized = tmp_path / "authorized_keys"
    authorized.write_text("")  # our key is not accepted: ssh would ask for a password
    with nslab.ns_pair("sp") as pair:
        proc, line = _sshd(pair, "b", pair.b_ip, tmp_path, authorized)
        try:
            (tmp_path / "known_hosts").write_text(line)
            for ip, expect in ((pair.b_ip, "Permission denied"), (pair.a_ip, "refused")):
                warnings: list[str] = []
                src = RemoteSource(
                    _host("stby", "standby", ip, pair.a, tmp_path, user_key),
                    interval=0.5, max_backoff=0.5, warn=warnings.append,
                )  # fmt: skip
                stop = threading.Event()
                t = threading.Thread(target=src.run, args=(lambda f: None, stop))
                t.start()
                try:
                    _wait(lambda s=src: s.last_error is not None, 20, "the ssh error")
                    time.sleep(1.5)  # a few retries: still one line
                finally:
                    stop.set()
                    t.join(10)
                    src.close()
                assert not t.is_alive()
                assert len(warnings) == 1 and expect in warnings[0], warnings
                assert "\n" not in warnings[0]
                if expect == "Permission denied":
                    assert "BatchMode" in warnings[0]
        finally:
            proc.kill()
            proc.wait(5)


@pytest.fixture(autouse=True)
def _bounded():
    """Every ssh this module started is gone at the end."""
    yield
    out = subprocess.run(["pgrep", "-f", "--", f"-p {PORT}"], capture_output=True, text=True).stdout
    assert not out.strip(), "an ssh process outlived its test"
