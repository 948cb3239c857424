"""`sgmon discover`: target groups from the configs and from the databases' own lists of members,
the broker's V$DG_BROKER_CONFIG on 23ai and the destinations before, read through the stand-in
with the exact SQL; a member that is down stays a target, marked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from sgmon.commands.discover import connect_host, members_of
from sgmon.config import load_config
from sgmon.oracle.session import Session
from sgmon.sim.standin import StandIn

CONFIG = """
name = "PRODCFG"
[[host]]
name = "prim1"
role = "primary"
ssh = "oracle@prim1.example.net"
sgmon_path = "/opt/sgmon/bin/sgmon"
[host.db]
dsn = "prim1:1521/PROD"
user = "c##sgmon"
password_env = "SGMON_TEST_PW"

[[host]]
name = "stby1"
role = "standby"
db_unique_name = "STBY"
[host.db]
dsn = "stby1.example.net:1521/STBY"
user = "sys"
mode = "sysdg"
password_env = "SGMON_TEST_PW"
"""


def _config(tmp_path: Path, text: str = CONFIG):
    p = tmp_path / "sgmon.toml"
    p.write_text(text)
    return load_config(str(p))


def _targets(members) -> dict[tuple[str, str], tuple[str, str]]:
    return {(m.db_unique_name, m.host): (m.address, m.state) for m in members}


def test_broker_lists_every_member_on_23ai(tmp_path):
    prim = StandIn(version="23.6.0.24.10", db_unique_name="PROD")
    stby = StandIn(version="23.6.0.24.10", role="PHYSICAL STANDBY", db_unique_name="STBY")
    for db in (prim, stby):  # the broker's view is the same from any member
        db.set_broker_member("PROD", "prim1:1521/PROD", role="PRIMARY")
        db.set_broker_member("STBY", "stby1.example.net:1521/STBY")
        db.set_broker_member(
            "STBY2", "(DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(HOST=dr2.example.net)(PORT=1521)))",
            status=16810, severity="FAILURE",
        )  # fmt: skip
        db.set_broker_member("FS1", "fs1:1521/FS1", role="FAR SYNC INSTANCE", enabled="FALSE")
    dbs = {"prim1": prim, "stby1": stby}
    members = members_of(_config(tmp_path), lambda h: Session(connect=dbs[h.name].connect))
    assert {m.dg_config for m in members} == {"PRODCFG"}
    assert _targets(members) == {
        ("PROD", "prim1"): ("prim1.example.net", "ok"),  # its name from V$DATABASE
        ("STBY", "stby1"): ("stby1.example.net", "ok"),
        ("STBY2", "dr2.example.net"): ("dr2.example.net", "error"),  # down: kept, marked
        ("FS1", "fs1"): ("fs1", "disabled"),  # maintenance: the broker does not manage it
    }
    g = next(m for m in members if m.db_unique_name == "STBY2").group(9464)
    assert g == {
        "targets": ["dr2.example.net:9464"],
        "labels": {"dg_config": "PRODCFG", "db_unique_name": "STBY2",
                   "host": "dr2.example.net", "member_state": "error"},
    }  # fmt: skip


def test_destinations_before_23ai_and_a_database_that_does_not_answer(tmp_path):
    prim = StandIn(version="19.21.0.0.0", db_unique_name="PROD")
    prim.set_dest(2, db_unique_name="STBY", destination="stby1.example.net:1521/STBY")
    prim.set_dest(3, db_unique_name="STBY2", destination="dr2:1521/STBY2", status="ERROR")
    prim.set_dest(4, db_unique_name="STBY3", destination="dr3", status="DEFERRED")

    def refuse():
        raise ConnectionRefusedError("connection refused")

    def session(h):
        return Session(connect=prim.connect if h.name == "prim1" else refuse)

    members = members_of(_config(tmp_path), session)
    assert _targets(members) == {
        ("PROD", "prim1"): ("prim1.example.net", "ok"),
        ("STBY", "stby1"): ("stby1.example.net", "unreachable"),  # down: still a target
        ("STBY2", "dr2"): ("dr2", "error"),
        ("STBY3", "dr3"): ("dr3", "deferred"),
    }


def test_connect_identifiers():
    assert connect_host("prim1:1521/PROD") == "prim1"
    assert connect_host("//prim1.example.net/PROD") == "prim1.example.net"
    assert connect_host("[fd00::5]:1521/PROD") == "fd00::5"
    assert connect_host("(DESCRIPTION=(ADDRESS=(HOST = h9)(PORT=1)))") == "h9"
    assert connect_host("PROD_DR") == "PROD_DR"


def _discover(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "SGMON_TEST_PW": "not-used"}
    return subprocess.run(
        [sys.executable, "-m", "sgmon", "discover", *args],
        capture_output=True, text=True, timeout=60, cwd=cwd, env=env,
    )  # fmt: skip


def test_file_sd_output_keeps_a_member_that_went_missing(tmp_path):
    cfg = tmp_path / "prod.toml"
    # the primary's listener refuses at once: its member is marked, not dropped
    cfg.write_text(CONFIG.replace("prim1:1521/PROD", "127.0.0.1:1/PROD"))
    out = tmp_path / "sgmon-targets.json"
    r = _discover("--config", str(cfg), "--output", str(out), "--port", "9500", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr.startswith("sgmon: 2 targets in") and r.stderr.count("\n") == 1
    assert "prim1 unreachable" in r.stderr
    groups = json.loads(out.read_text())
    states = {g["labels"]["host"]: g["labels"]["member_state"] for g in groups}
    assert states == {"prim1": "unreachable", "stby1": "unreachable"}
    assert groups[0]["targets"] == ["prim1.example.net:9500"]
    # the standby leaves the config: its target stays, marked missing
    cfg.write_text(CONFIG.split('[[host]]\nname = "stby1"')[0])
    r = _discover("--config", str(cfg), "--output", str(out), "--no-broker", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    groups = json.loads(out.read_text())
    states = {g["labels"]["host"]: g["labels"]["member_state"] for g in groups}
    assert states == {"prim1": "unchecked", "stby1": "missing"}
    assert not list(tmp_path.glob(".sgmon-targets.json.*"))  # no temporary file left
    assert out.stat().st_mode & 0o777 == 0o644  # Prometheus runs as its own user
    # stdout: the http_sd body; a config without hosts is one line
    r = _discover("--config", str(cfg), "--no-broker", cwd=tmp_path)
    assert json.loads(r.stdout)[0]["labels"]["dg_config"] == "PRODCFG"
    (tmp_path / "empty.toml").write_text('name = "X"\n')
    r = _discover("--config", str(tmp_path / "empty.toml"), cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("sgmon: ") and r.stderr.count("\n") == 1


def test_one_target_per_configuration_for_a_serve_that_watches_it(tmp_path):
    cfg = tmp_path / "prod.toml"
    cfg.write_text(CONFIG)
    other = tmp_path / "hr.toml"
    other.write_text(CONFIG.replace("PRODCFG", "HRCFG"))
    r = _discover(
        "--config", str(cfg), "--serve", "jump1:9464", "--config", str(other),
        "--serve", "jump1:9465", "--no-broker", cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == [
        {"targets": ["jump1:9464"], "labels": {"dg_config": "PRODCFG"}},
        {"targets": ["jump1:9465"], "labels": {"dg_config": "HRCFG"}},
    ]
    r = _discover("--config", str(cfg), "--serve", "a:1", "--serve", "b:2", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("sgmon: --serve")


def test_no_target_where_no_serve_can_listen(tmp_path):
    """A host watched over ssh with nothing installed runs no serve: it is no target (it
    would be down forever), and one line says to run one serve for the configuration."""
    cfg = tmp_path / "prod.toml"
    cfg.write_text(CONFIG.replace('sgmon_path = "/opt/sgmon/bin/sgmon"\n', ""))
    out = tmp_path / "targets.json"
    r = _discover("--config", str(cfg), "--output", str(out), "--no-broker", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert [g["labels"]["host"] for g in json.loads(out.read_text())] == ["stby1"]
    lines = r.stderr.strip().splitlines()
    assert lines[0].startswith("sgmon: 1 targets in")
    assert lines[1].startswith("sgmon: no target for prim1: watched over ssh with nothing")
    assert "--serve" in lines[1]
