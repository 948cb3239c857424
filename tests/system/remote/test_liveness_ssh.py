"""A real agent over ssh whose link is cut: within two intervals its host is a critical finding
that names it, not only a stale panel (Debian's sshd in network namespaces, the link to the
standby's sshd dropped by an nftables rule, then restored)."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import nslab
import pytest
from test_remote_ssh import _host, _wait, sshd_pair

from sgmon.config import Config
from sgmon.hosts.remote import RemoteSource
from sgmon.judgement import judge_for
from sgmon.model import Frame
from sgmon.monitor import Monitor
from sgmon.verdicts import Finding, Judgement

PORT = 46329
TABLE = "h29bcut"
INTERVAL = 0.5


def _cut(pair: nslab.NsPair, side: str, cut: bool) -> None:
    """Drop every packet toward the side's sshd, or stop dropping."""
    if not cut:
        pair.run(side, "nft", "delete", "table", "inet", TABLE, check=False)
        return
    pair.run(side, "nft", "add", "table", "inet", TABLE)
    chain = "{ type filter hook input priority 0 ; }"
    pair.run(side, "nft", "add", "chain", "inet", TABLE, "in", chain)
    pair.run(side, "nft", "add", "rule", "inet", TABLE, "in", "tcp", "dport", str(PORT), "drop")


def test_a_cut_agent_link_is_a_crit_finding_within_two_intervals(tmp_path) -> None:
    import test_remote_ssh

    test_remote_ssh.PORT, saved = PORT, test_remote_ssh.PORT  # the helpers' port: not theirs
    try:
        with sshd_pair(tmp_path, "h29b") as (pair, user_key):
            _cut_and_restore(pair, user_key, tmp_path)
    finally:
        test_remote_ssh.PORT = saved


def _cut_and_restore(pair: nslab.NsPair, user_key: Path, tmp_path: Path) -> None:
    """Both agents stream; the standby's link is cut until the analysis names it, then
    restored until its frames flow again."""
    hosts = [
        _host("prim", "primary", pair.a_ip, pair.b, tmp_path, user_key),
        _host("stby", "standby", pair.b_ip, pair.a, tmp_path, user_key),
    ]
    sources = [
        RemoteSource(h, interval=INTERVAL, max_backoff=2, ping_every=1, warn=lambda m: None)
        for h in hosts
    ]
    prim, stby = sources
    judge = judge_for(Config(hosts=tuple(hosts)), sources)
    seen: list[tuple[float, Finding]] = []
    real: dict[str, int] = {}
    lock = threading.Lock()

    def sink(f: Frame, j: Judgement) -> None:
        with lock:
            if f.seq > 0:
                real[f.host] = real.get(f.host, 0) + 1
            for g in j.state.findings if j.state else ():
                if g.active and g.rule == "host_silent":
                    seen.append((time.monotonic(), g))

    mon = Monitor(sources, sinks=[sink], judge=judge)
    mon.start()
    try:
        _wait(lambda: min(real.get("prim", 0), real.get("stby", 0)) >= 4, 40, "frames")
        with lock:
            assert not seen, [g.title for _, g in seen]
        _cut(pair, "b", True)
        cut_at = time.monotonic()
        _wait(lambda: bool(seen), 15, "a finding about the silent standby")
        with lock:
            t, f = seen[0]
        took = t - cut_at
        print(f"cut -> finding {took:.2f} s: {f.title}")
        # two intervals without a frame, plus one check of the source's loop
        assert took <= 2 * INTERVAL + 1.5, took
        assert f.host == "stby" and f.severity == "crit"
        assert f.title.startswith("stby (") and "sent nothing for" in f.title
        _cut(pair, "b", False)
        n = real.get("stby", 0)
        _wait(lambda: real.get("stby", 0) > n + 3 and not stby.stale, 45, "recovery")
    finally:
        _cut(pair, "b", False)
        mon.stop(timeout=5)
    assert prim.dropped == 0


@pytest.fixture(autouse=True)
def _bounded():
    """Every ssh this module started is gone at the end."""
    yield
    out = subprocess.run(["pgrep", "-f", "--", f"-p {PORT}"], capture_output=True, text=True).stdout
    assert not out.strip(), "an ssh process outlived its test"
