"""The pump over real ssh: Debian's sshd in two network namespaces whose python3 sees no
site-packages and has no sgmon, the link cut with nftables and restored.  Frames must flow from
both hosts, each with its own interface and its own Data Guard socket (here: the ssh connection
itself, as its port is the one watched), the cut host must go stale while the other goes on, and
come back without a restart; the pump of the dead session must end by itself; ``record`` and
``check`` must work on such hosts from the command line."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import nslab
import pytest
from kits.sshd import bare_python
from test_remote_ssh import _keygen, _sshd, _wait, survive_a_cut

from sgmon.config import Config, DbConfig, HostConfig
from sgmon.hosts.build import sources_from_config
from sgmon.hosts.remote import PumpSource
from sgmon.model import Frame
from sgmon.monitor import Monitor
from sgmon.sim.standin import StandIn

PORT = 46333
PW = "H33_SSH_PW"
PUMP = "-I -c import sys;b=sys.stdin.buffer;sys.version_info"
"""What the pump's command line holds (its bootstrap, unquoted: not ssh's command line)."""


def _ssh_options(tmp: Path, key: Path) -> list[str]:
    return [
        "-F", "/dev/null", "-p", str(PORT), "-i", str(key), "-o", "IdentitiesOnly=yes",
        "-o", f"UserKnownHostsFile={tmp / 'known_hosts'}", "-o", "StrictHostKeyChecking=yes",
        "-o", "ConnectTimeout=3",
    ]  # fmt: skip


def _cut(pair: nslab.NsPair, side: str, cut: bool) -> None:
    """Drop every packet toward the side's sshd."""
    table = "h33cut"
    if not cut:
        pair.run(side, "nft", "delete", "table", "inet", table, check=False)
        return
    pair.run(side, "nft", "add", "table", "inet", table)
    pair.run(
        side, "nft", "add", "chain", "inet", table, "in", "{ type filter hook input priority 0 ; }"
    )
    pair.run(side, "nft", "add", "rule", "inet", table, "in", "tcp", "dport", str(PORT), "drop")


def _pumps(ns: str) -> set[str]:
    """The pumps running in a namespace."""
    inside = set(
        subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()
    )
    found = subprocess.run(
        ["pgrep", "-f", "--", PUMP], capture_output=True, text=True
    ).stdout.split()
    return inside & set(found)


@pytest.fixture
def lab(tmp_path: Path):
    """Two namespaces, an sshd in each with a bare python3 first on PATH, and hosts for them:
    ``prim`` (10.x.0.1, reached from b) and ``stby`` (10.x.0.2, reached from a)."""
    nslab.require_root("ip", "nft", "ssh", "ssh-keygen", "/usr/sbin/sshd", "pgrep")
    key = tmp_path / "user_key"
    authorized = tmp_path / "authorized_keys"
    authorized.write_text(_keygen(key) + "\n")
    bare = bare_python(tmp_path)
    with nslab.ns_pair("h33") as pair:
        procs = []
        try:
            known = ""
            for side, ip in (("a", pair.a_ip), ("b", pair.b_ip)):
                # a HOME of its own: root's shell start-up files here put a pyenv first
                extra = f"SetEnv PATH={bare}:/usr/bin:/bin HOME={tmp_path}\n"
                p, line = _sshd(pair, side, ip, tmp_path, authorized, extra, PORT)
                procs.append(p)
                known += line
            (tmp_path / "known_hosts").write_text(known)
            hosts = (
                HostConfig(
                    name="prim", role="primary", ssh=f"root@{pair.a_ip}",
                    ssh_command=("ip", "netns", "exec", pair.b, "ssh"),
                    ssh_options=tuple(_ssh_options(tmp_path, key)),
                ),
                HostConfig(
                    name="stby", role="standby", ssh=f"root@{pair.b_ip}",
                    ssh_command=("ip", "netns", "exec", pair.a, "ssh"),
                    ssh_options=tuple(_ssh_options(tmp_path, key)),
                ),
            )  # fmt: skip
            yield pair, hosts, tmp_path
        finally:
            for p in procs:
                p.kill()
                p.wait(5)


def test_the_far_python_has_no_site_packages_and_no_sgmon(lab) -> None:
    _, hosts, _ = lab
    stby = hosts[1]
    probe = "import sys; print([p for p in sys.path if 'packages' in p]); import sgmon"
    out = subprocess.run(
        [*stby.ssh_command, *stby.ssh_options, stby.ssh, f'python3 -I -c "{probe}"'],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.stdout.strip() == "[]"
    assert "No module named 'sgmon'" in out.stderr


def test_pumped_hosts_survive_a_cut_link(lab) -> None:
    pair, hosts, _ = lab
    config = Config(hosts=hosts, ports=(PORT,))
    prim, stby = sources_from_config(config, interval=0.5)
    assert isinstance(prim, PumpSource) and isinstance(stby, PumpSource)
    warnings: list[str] = []
    for s in (prim, stby):
        s.max_backoff, s.ping_every, s.warn = 2, 1, warnings.append

    def orphan_ends() -> None:  # the cut session's pump hears no ping any more and ends
        _wait(lambda: not _pumps(pair.b), 20, "the pump of the cut session to end")

    def one_pump_left() -> None:
        assert stby.python and stby.python.startswith("3.")
        assert len(_pumps(pair.b)) == 1

    def cut(down: bool) -> None:
        _cut(pair, "b", down)

    pair.set_rto_min("b", 10)  # the standby's route to the primary: seed 001's fix, read there
    frames = survive_a_cut(pair, prim, stby, cut, orphan_ends, one_pump_left)
    _wait(lambda: not _pumps(pair.a) and not _pumps(pair.b), 15, "no pump left behind")
    rows = [f for f in frames if f.host == "stby"][-1].rows("tcp")
    sockets = {k: r for k, r in rows.items() if k != "host"}
    assert sockets and all(k.startswith(f"{pair.b_ip}:{PORT}>") for k in sockets)
    assert {r["rto_min"] for r in sockets.values()} == {10}
    assert prim.dropped == 0 and stby.dropped == 0


def _toml(hosts: tuple[HostConfig, ...], standby_db: Path) -> str:
    """The pair as a DBA writes it; the standby's database a mounted stand-in read as SYSDG."""
    out = f'interval = "1s"\n[dataguard]\nports = [{PORT}]\n'
    for h in hosts:
        out += (
            f'[[host]]\nname = "{h.name}"\nrole = "{h.role}"\nssh = "{h.ssh}"\n'
            f"ssh_command = {list(h.ssh_command)!r}\nssh_options = {list(h.ssh_options)!r}\n"
        ).replace("'", '"')
    return out + (
        f'[host.db]\ndsn = "standin:{standby_db}"\nuser = "c##sgmon"\nmode = "sysdg"\n'
        f'password_env = "{PW}"\n'
    )


def _sgmon(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sgmon", *args], capture_output=True, text=True, timeout=120
    )


def test_record_and_check_on_pumped_hosts(lab, monkeypatch) -> None:
    """The standby's database, read from here, is recorded in the standby's own folder."""
    pair, hosts, tmp = lab
    monkeypatch.setenv(PW, "pw")
    db = StandIn(str(tmp / "stby.db"), role="PHYSICAL STANDBY", db_unique_name="STBY")
    db.add_user("c##sgmon", "pw", admin=["sysdg"], grants=())
    db.publish_event("RFS write", 10, 5000.0)
    cfg = tmp / "sgmon.toml"
    cfg.write_text(_toml(hosts, tmp / "stby.db"))
    archive = tmp / "archive"
    try:
        r = _sgmon("record", "--config", str(cfg), "--dir", str(archive), "--duration", "6s")
    finally:
        db.close()
    assert r.returncode == 0, r.stderr
    for host, mine in (("prim", pair.a_if), ("stby", pair.b_if)):
        netdev = next((archive / host).glob("netdev*.csv")).read_text()
        assert mine in netdev and netdev.count("\n") >= 4, (host, netdev[:300])
        assert next((archive / host).glob("cpu*.csv")).read_text().count("\n") >= 4
    assert "RFS write" in next((archive / "stby").glob("oracle_waits*.csv")).read_text()
    assert not list((archive / "prim").glob("oracle_*.csv"))
    r = _sgmon("check", "--config", str(cfg), "--seconds", "5", "--format", "json")
    assert r.returncode in (0, 1), r.stderr
    assert '"prim"' in r.stdout and '"stby"' in r.stdout
    assert not _pumps(pair.a) and not _pumps(pair.b)


def _ok(f: Frame, collector: str) -> bool:
    r = f.collectors.get(collector)
    return r is not None and r.status.value == "ok"


def test_a_member_down_never_stops_the_rest(lab, monkeypatch) -> None:
    """Each host's database is read from here (a stand-in: the primary open, the standby
    mounted and read as SYSDG) into the host's own frames; the standby's database is taken away
    and the primary's ssh link cut at once: each shows as such while the rest keeps updating,
    and both come back without a restart."""
    pair, hosts, tmp = lab
    monkeypatch.setenv(PW, "pw")
    files = {"prim": tmp / "prim.db", "stby": tmp / "stby.db"}
    prim_db = StandIn(str(files["prim"]))
    prim_db.add_user("c##sgmon", "pw")
    stby_db = StandIn(str(files["stby"]), role="PHYSICAL STANDBY", db_unique_name="STBY")
    stby_db.add_user("c##sgmon", "pw", admin=["sysdg"], grants=())
    dbs = {
        h: DbConfig(dsn=f"standin:{files[h]}", user="c##sgmon", password_env=PW, mode=mode)
        for h, mode in (("prim", "normal"), ("stby", "sysdg"))
    }
    config = Config(hosts=tuple(replace(h, db=dbs[h.name]) for h in hosts), ports=(PORT,))
    sources = sources_from_config(config, interval=0.5)
    for s in sources:
        assert isinstance(s, PumpSource)
        s.max_backoff, s.ping_every = 2, 1
    frames: list[Frame] = []
    lock = threading.Lock()

    def sink(f: Frame, _judgement) -> None:
        with lock:
            frames.append(f)

    def last(host: str) -> Frame | None:
        with lock:
            mine = [f for f in frames if f.host == host]
        return mine[-1] if mine else None

    def shows(host: str, **status: bool) -> Callable[[], bool]:
        def cond() -> bool:
            f = last(host)
            return f is not None and all(_ok(f, c) == want for c, want in status.items())

        return cond

    mon = Monitor(sources, sinks=[sink])
    mon.start()
    try:
        for host in ("prim", "stby"):  # one host: its OS and its database in the same frames
            _wait(shows(host, cpu=True, oracle_waits=True, oracle_dg=True), 40, f"{host} whole")
        files["stby"].rename(tmp / "away.db")
        _cut(pair, "a", True)  # toward the primary's sshd
        t0 = time.monotonic()
        _wait(shows("stby", cpu=True, oracle_waits=False), 10, "the standby's database down")
        down_after = time.monotonic() - t0
        _wait(shows("prim", cpu=False, oracle_waits=True), 15, "the primary's OS side stale")
        n = len(frames)
        time.sleep(1.5)
        assert shows("stby", cpu=True)() and shows("prim", oracle_waits=True)()
        assert len(frames) > n
        (tmp / "away.db").rename(files["stby"])
        _cut(pair, "a", False)
        for host in ("prim", "stby"):
            _wait(shows(host, cpu=True, oracle_waits=True), 45, f"{host} back")
    finally:
        mon.stop(timeout=5)
        prim_db.close()
        stby_db.close()
    assert down_after < 2 * 0.5 + 1.0, down_after  # two intervals and a sample's bound
    with lock:
        errors = {f.collectors["oracle_waits"].error or "" for f in frames if f.host == "stby"}
    assert any("ORA-03113" in e or "ORA-12541" in e for e in errors), errors
