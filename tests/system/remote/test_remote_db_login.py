"""Database logins as a real database grants them, through the V$ stand-in's ``login``: a
mounted standby refuses an ordinary user (ORA-01033, retried: it may be starting) and takes a
SYSDG one, an administrative login the user lacks is ORA-01031, a wrong password ORA-01017 (not
retried: a retry loop locks the account); and ``sgmon config --check`` logs on to each database
and prints what each login reads and the statements that give it what it lacks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from collectors.oracle.waits import OracleWaitsCollector
from sgmon.collector import Unavailable
from sgmon.config import DbConfig
from sgmon.oracle.errors import OracleError
from sgmon.oracle.privileges import probe, statements, views
from sgmon.sim.standin import StandIn

PW = "H33_TEST_PW"


@pytest.fixture
def standby(tmp_path: Path, monkeypatch) -> Path:
    """A mounted 19c standby with c##sgmon holding SYSDG, and a user without it."""
    monkeypatch.setenv(PW, "s3cret")
    path = tmp_path / "stby.db"
    db = StandIn(str(path), role="PHYSICAL STANDBY", db_unique_name="STBY")
    db.add_user("c##sgmon", "s3cret", admin=["sysdg"], grants=())
    db.add_user("c##plain", "s3cret", grants=["SELECT_CATALOG_ROLE"])
    db.publish_event("RFS write", 10, 5000.0)
    yield path
    db.close()


def _sample(path: Path, user: str, mode: str) -> OracleWaitsCollector:
    c = OracleWaitsCollector(
        {"db": DbConfig(dsn=f"standin:{path}", user=user, mode=mode, password_env=PW)}
    )
    c.open()
    return c


def test_a_mounted_standby_takes_sysdg_and_refuses_an_ordinary_user(standby: Path) -> None:
    c = _sample(standby, "c##sgmon", "sysdg")
    try:
        assert "RFS write" in str(c.sample())
    finally:
        c.close()
    c = _sample(standby, "c##plain", "normal")
    try:
        with pytest.raises(OracleError, match=r"^ORA-01033 .*mode = \"sysdg\".*retrying"):
            c.sample()
    finally:
        c.close()


@pytest.mark.parametrize(
    ("user", "mode", "code"),
    [("c##plain", "sysdg", "ORA-01031"), ("c##nobody", "sysdg", "ORA-01017")],
)
def test_refused_administrative_logins_stop(standby: Path, user: str, mode: str, code: str):
    c = _sample(standby, user, mode)
    try:
        with pytest.raises(Unavailable, match=f"^{code} "):
            c.sample()
    finally:
        c.close()


def test_probe_names_the_views_an_ordinary_user_lacks(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(PW, "pw")
    db = StandIn(str(tmp_path / "prim.db"), version="12.1.0.2.0")
    granted = ["V_$INSTANCE", "V_$SYSTEM_EVENT", "V_$DATABASE"]
    db.add_user("c##sgmon", "pw", grants=granted)
    try:
        cfg = DbConfig(dsn=f"standin:{tmp_path / 'prim.db'}", user="c##sgmon", password_env=PW)
        access = probe("prim", cfg, "primary")
    finally:
        db.close()
    assert access.error == "" and access.version == (12, 1, 0, 2, 0)
    assert access.readable == 3 and "v$event_histogram_micro" in access.missing
    assert "v$dataguard_process" not in views((12, 1))  # 12.2 and later
    block = statements(access)
    assert "GRANT SELECT ON SYS.V_$EVENT_HISTOGRAM_MICRO TO C##SGMON CONTAINER=ALL;" in block
    assert not any("V_$SYSTEM_EVENT" in line for line in block)


def test_config_check_prints_the_missing_statements_as_one_block(standby: Path, tmp_path):
    """Both databases of a pair, one login right and one refused for each reason in turn."""
    prim = tmp_path / "prim.db"
    db = StandIn(str(prim), version="19.0.0.0.0")
    db.add_user("c##sgmon", "s3cret", admin=["sysdg"], grants=())
    cfg = tmp_path / "sgmon.toml"
    cfg.write_text(
        f'[[host]]\nname = "prim"\nrole = "primary"\n[host.db]\ndsn = "standin:{prim}"\n'
        f'user = "c##sgmon"\npassword_env = "{PW}"\n'
        f'[[host]]\nname = "stby"\nrole = "standby"\n[host.db]\ndsn = "standin:{standby}"\n'
        f'user = "c##plain"\nmode = "sysdg"\npassword_env = "{PW}"\n'
    )
    try:
        r = subprocess.run(
            [sys.executable, "-m", "sgmon", "config", "--check", "--config", str(cfg)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        db.close()
    assert r.returncode == 3, r.stderr  # both answered, neither login can read what it must
    assert r.stderr.splitlines()[-1] == "sgmon: 2 of 2 checks failed: database prim, database stby"
    out = r.stdout
    assert "prim: c##sgmon@standin:" in out and "cannot read v$instance" in out
    assert "stby: c##plain@standin:" in out and "ORA-01031" in out
    block = out[out.index("statements for the logins") :]
    assert "-- 11.2:" in block and "-- 12.2 and later:" in block  # its version is unknown
    assert "GRANT SELECT ON SYS.V_$DATAGUARD_PROCESS TO C##SGMON CONTAINER=ALL;" in block
    assert "GRANT SYSDG TO C##PLAIN CONTAINER=ALL;" in block
    assert "s3cret" not in out + r.stderr
    assert all(line.startswith("sgmon: ") for line in r.stderr.splitlines())
