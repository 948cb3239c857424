"""`sgmon config --check`: provenance of each value, one line per problem, and every host and
login tried: ``ok`` only when all of them answered (exit 3 and a count otherwise), each failure
named for what it is, never a promise to retry; ``--offline`` checks the file alone."""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from sgmon.config import parse_config
from sgmon.errors import ConfigError

GOOD = """\
interval = "500ms"
[dataguard]
ports = [1522]
[[host]]
name = "prim1"
role = "primary"
devices = ["sdb"]
[host.db]
dsn = "prim1:1521/PROD"
password_env = "SGMON_TEST_PW"
[[host]]
name = "stby1"
role = "standby"
ssh = "oracle@stby1"
[thresholds]
"disk.aqu_sz" = { warn = 1, crit = 4 }
"""

BAD = """\
intervall = "1s"
[dataguard]
ports = [1521, "x"]
[[host]]
name = "prim1"
role = "stanby"
devices = "sdb"
[host.db]
dsn = "prim1:1521/PROD"
pasword = "x"
[collectors.dsik]
exclude = ["loop*"]
[thresholds]
"disk.nope" = { warn = 1 }
"""


def _check(path, *flags: str, **env) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if not k.startswith("SGMON_")}
    e.update(env)
    return subprocess.run(
        [sys.executable, "-m", "sgmon", "config", "--check", "--config", str(path), *flags],
        capture_output=True, text=True, timeout=60, env=e,
    )  # fmt: skip


def _origin(out: str, key: str) -> str:
    line = next(x for x in out.splitlines() if x.strip().startswith(key + " "))
    return line.rsplit("(", 1)[1].rstrip(")")


def test_good_file_shows_where_values_come_from(tmp_path):
    p = tmp_path / "sgmon.toml"
    p.write_text(GOOD)
    p.chmod(0o600)
    r = _check(p, "--offline", SGMON_NAME="PRODX", SGMON_TEST_PW="secret")
    assert r.returncode == 0 and r.stderr == "" and r.stdout.rstrip().endswith("ok")
    assert "not tried (--offline): ssh to stby1; database logins prim1" in r.stdout
    assert _origin(r.stdout, "interval") == f"file {p}"
    assert _origin(r.stdout, "name") == "env SGMON_NAME" and "PRODX" in r.stdout
    assert _origin(r.stdout, "host[prim1].db.mode") == "default"
    assert "from $SGMON_TEST_PW (set)" in r.stdout and "secret" not in r.stdout
    assert "ssh oracle@stby1" in r.stdout


def test_every_problem_is_one_line_and_exit_2(tmp_path):
    p = tmp_path / "sgmon.toml"
    p.write_text(BAD)
    r = _check(p)
    assert r.returncode == 2
    lines = r.stderr.splitlines()
    assert all(x.startswith("sgmon: ") for x in lines)
    text = r.stderr
    for expect in (
        'intervall: unknown key; did you mean "interval"?',
        "dataguard.ports: 'x' is not a port number",
        "role: 'stanby'",
        "devices: 'sdb' should be a list",
        'db.pasword: unknown key; did you mean "password"?',
        "collectors.dsik: no such collector",
        "disk has no field 'nope'",
    ):
        assert sum(expect in x for x in lines) == 1, (expect, text)


def test_world_readable_password_and_bad_toml(tmp_path):
    p = tmp_path / "sgmon.toml"
    p.write_text(GOOD.replace('password_env = "SGMON_TEST_PW"', 'password = "tiger"'))
    p.chmod(0o644)
    r = _check(p)
    assert r.returncode == 2
    assert sum("world-readable" in x and "chmod 600" in x for x in r.stderr.splitlines()) == 1
    assert "tiger" not in r.stderr + r.stdout
    p.chmod(0o600)
    assert "world-readable" not in _check(p).stderr
    p.write_text("interval = [")
    r = _check(p)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not valid TOML" in r.stderr
    r = _check(tmp_path / "missing.toml")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not found" in r.stderr


def test_a_role_other_than_primary_or_standby_is_refused_on_load() -> None:
    """The role picks a host's DG sockets and goes on the agent's ssh command line."""
    with pytest.raises(ConfigError, match=r'host\[a\].role: .primary; true.: use "primary"'):
        parse_config({"host": [{"name": "a", "role": "primary; true"}]})
    assert parse_config({"host": [{"name": "a", "role": "standby"}]}).hosts[0].role == "standby"


def test_ok_only_when_every_host_and_login_answered(tmp_path):
    """Neither the ssh host nor the database resolves: each is tried, each failure is one line,
    and the last line counts them (the old check said ok, exit 0, with ssh not even tried)."""
    p = tmp_path / "sgmon.toml"
    p.write_text(GOOD)
    p.chmod(0o600)
    r = _check(p, SGMON_TEST_PW="secret")
    assert r.returncode == 3, r.stderr
    assert not r.stdout.rstrip().endswith("ok")
    assert "stby1: ssh oracle@stby1: ssh: Could not resolve hostname stby1" in r.stdout
    lines = r.stderr.splitlines()
    assert lines[-1] == "sgmon: 2 of 2 checks failed: ssh stby1, database prim1", lines
    assert all(x.startswith("sgmon: ") for x in lines) and len(lines) == 3, lines
    assert "secret" not in r.stdout + r.stderr


def _serve(reply: bytes | None) -> tuple[int, threading.Event]:
    """A TCP port on 127.0.0.1 that reads what comes and answers ``reply``, then closes (None:
    a port nothing listens on); the event stops it."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port, stop = sock.getsockname()[1], threading.Event()
    if reply is None:  # bound, never listening: the port refuses, and stays ours
        threading.Thread(target=lambda: (stop.wait(60), sock.close()), daemon=True).start()
        return port, stop
    sock.listen(8)
    sock.settimeout(0.2)

    def answer() -> None:
        with sock:
            while not stop.is_set():
                try:
                    conn, _ = sock.accept()
                except TimeoutError:
                    continue
                with conn:
                    conn.settimeout(2)
                    with contextlib.suppress(OSError):
                        conn.recv(65536)
                        conn.sendall(reply)

    threading.Thread(target=answer, daemon=True).start()
    return port, stop


def _tns_refuse(err: int) -> bytes:
    """A TNS REFUSE packet as a listener sends it for a service it does not know (ERR=12514):
    the 8-byte header (length, checksum, type 4, flags, header checksum), then the reasons, the
    length of the data and the data."""
    data = f"(DESCRIPTION=(TMP=)(VSNNUM=0)(ERR={err})(ERROR_STACK=(ERROR=(CODE={err}))))".encode()
    body = struct.pack(">BBH", 34, 0, len(data)) + data
    return struct.pack(">HHBBH", 8 + len(body), 0, 4, 0, 0) + body


@contextlib.contextmanager
def _three_ports() -> Iterator[dict[str, int]]:
    """Nothing listening; something that is not a listener (an sshd's banner, as when the dsn
    names port 22); a listener that does not know the service."""
    served = {
        "nolistener": _serve(None),
        "notoracle": _serve(b"SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n"),
        "noservice": _serve(_tns_refuse(12514)),
    }
    try:
        yield {name: port for name, (port, _) in served.items()}
    finally:
        for _, stop in served.values():
            stop.set()


def test_each_unreachable_database_is_named_for_what_answered(tmp_path):
    """python-oracledb's thin mode wraps each in DPY-6005: connection refused, DPY-4011 (the far
    end closed at the first packet) and DPY-6001 (Similar to ORA-12514).  The old check called
    all three "no listener reachable ... retrying"."""
    p = tmp_path / "sgmon.toml"
    with _three_ports() as ports:
        p.write_text(
            "".join(
                f'[[host]]\nname = "{name}"\n[host.db]\ndsn = "127.0.0.1:{port}/PROD"\n'
                f'user = "c##sgmon"\npassword_env = "SGMON_TEST_PW"\n'
                for name, port in ports.items()
            )
        )
        p.chmod(0o600)
        r = _check(p, SGMON_TEST_PW="secret")
    assert r.returncode == 3, r.stderr
    said = {
        line.split(":")[0].strip(): line
        for line in r.stdout.splitlines()
        if line.startswith("  ") and "c##sgmon@" in line
    }
    assert "no listener reachable" in said["nolistener"], said
    assert "not as an Oracle listener" in said["notoracle"], said
    assert "does not know that service" in said["noservice"], said
    assert sum("listener" in line for line in said.values()) == 3
    everything = r.stdout + r.stderr
    assert "retrying" not in everything and "next attempt" not in everything, everything
    last = r.stderr.splitlines()[-1]
    assert last == (
        "sgmon: 3 of 3 checks failed: database nolistener, database notoracle, database noservice"
    )
