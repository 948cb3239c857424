"""`sgmon config --check`: provenance of each value, and one line per problem."""

from __future__ import annotations

import os
import subprocess
import sys

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


def _check(path, **env) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if not k.startswith("SGMON_")}
    e.update(env)
    return subprocess.run(
        [sys.executable, "-m", "sgmon", "config", "--check", "--config", str(path)],
        capture_output=True, text=True, timeout=30, env=e,
    )  # fmt: skip


def _origin(out: str, key: str) -> str:
    line = next(x for x in out.splitlines() if x.strip().startswith(key + " "))
    return line.rsplit("(", 1)[1].rstrip(")")


def test_good_file_shows_where_values_come_from(tmp_path):
    p = tmp_path / "sgmon.toml"
    p.write_text(GOOD)
    p.chmod(0o600)
    r = _check(p, SGMON_NAME="PRODX", SGMON_TEST_PW="secret")
    assert r.returncode == 0 and r.stderr == "" and r.stdout.rstrip().endswith("ok")
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
