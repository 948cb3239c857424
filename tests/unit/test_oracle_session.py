"""The session as a DBA meets it: a missing view, an instance restart, a lost connection, the
errors a DBA can cause (each one line saying what to do), and the password never shown.

No Oracle database exists here: errors are python-oracledb-shaped objects (``e.args[0]`` with
``full_code``), raised by connection doubles around the SQLite stand-in.
"""

from __future__ import annotations

import json
import logging

import oracledb
import pytest

from collectors.oracle.dg import OracleDgCollector
from collectors.oracle.waits import OracleWaitsCollector
from sgmon.collector import Unavailable
from sgmon.config import DbConfig
from sgmon.engine import Engine
from sgmon.model import Status
from sgmon.oracle.errors import OracleError
from sgmon.oracle.session import Session
from sgmon.sim.standin import StandIn

PASSWORD = "S3cret-Pa55w0rd"


class _OraErr:
    """What python-oracledb puts in ``exc.args[0]``."""

    def __init__(self, full_code: str, message: str) -> None:
        self.full_code = full_code
        self.message = message

    def __str__(self) -> str:
        return f"{self.full_code}: {self.message}"


def ora(code: str, message: str) -> oracledb.DatabaseError:
    return oracledb.DatabaseError(_OraErr(code, message))


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class Flaky:
    """Connections to a stand-in that can be killed, refused, or fail one query."""

    def __init__(self, db: StandIn) -> None:
        self.db = db
        self.generation = 0
        self.opened = 0
        self.refuse: Exception | None = None
        self.fail_next: Exception | None = None

    def connect(self):
        if self.refuse is not None:
            raise self.refuse
        self.opened += 1
        return _Conn(self)

    def kill(self) -> None:
        self.generation += 1


class _Conn:
    def __init__(self, owner: Flaky) -> None:
        self.owner = owner
        self.real = owner.db.connect()
        self.generation = owner.generation

    def cursor(self):
        return _Cursor(self)

    def close(self) -> None:
        self.real.close()


class _Cursor:
    def __init__(self, conn: _Conn) -> None:
        self.conn = conn
        self.cur = conn.real.cursor()

    def execute(self, sql: str):
        owner = self.conn.owner
        if owner.generation != self.conn.generation:
            raise ora("DPY-4011", "the database or network closed the connection")
        if owner.fail_next is not None:
            e, owner.fail_next = owner.fail_next, None
            raise e
        return self.cur.execute(sql)

    def fetchone(self):
        return self.cur.fetchone()

    def fetchall(self):
        return self.cur.fetchall()

    def close(self) -> None:
        self.cur.close()


def _waits(db: StandIn, **kw):
    clock = Clock()
    flaky = Flaky(db)
    s = Session(connect=flaky.connect, clock=clock, **kw)
    c = OracleWaitsCollector({"session": s})
    c.open()
    return c, s, flaky, clock


def _grow(db: StandIn, n: int = 10) -> None:
    db.add_waits("log file sync", [900.0] * n)


def _ticks(c, db: StandIn, clock: Clock, n: int = 4) -> list:
    rows = []
    for _ in range(n):
        _grow(db)
        clock.t += 1
        rows.append(c.sample())
    return rows


def test_missing_micro_histogram_falls_back_to_the_milli_one_with_one_note():
    db = StandIn(version="12.1.0.1.0")  # the first 12.1 release may lack the _MICRO view
    db.drop_view("v$event_histogram_micro")
    c, _s, _, clock = _waits(db)
    rows = _ticks(c, db, clock)
    notes = [e.text for e in c.take_events() if e.kind == "note"]
    assert len(notes) == 1 and "\n" not in notes[0]
    assert "v$event_histogram_micro not readable" in notes[0]
    assert "using v$event_histogram instead" in notes[0]
    out = c.derive(rows[-2], rows[-1], 1.0)["log file sync"]
    assert out["waits"] == 10 and out["hist"] == [[1.0, 10]]  # 0.9 ms waits, < 1 ms bucket


def test_missing_view_is_one_note_not_an_error_each_tick():
    db = StandIn(version="19.21.0.0.0")
    db.drop_view("v$redo_dest_resp_histogram")
    db.set_dest(2)
    s = Session(connect=db.connect, clock=Clock())
    c = OracleDgCollector({"session": s})
    c.open()
    rows = [c.sample() for _ in range(4)]
    notes = [e.text for e in c.take_events() if e.kind == "note"]
    assert len(notes) == 1 and "resp_histogram skipped" in notes[0]
    out = c.derive(rows[-2], rows[-1], 1.0)["dest_2"]
    assert out["transmit_mode"] == "SYNC" and out["resp_hist"] == []


def test_instance_restart_rebases_the_counters():
    db = StandIn(version="19.21.0.0.0", startup=1_700_000_000)
    c, _s, _, clock = _waits(db)
    _grow(db, 50)
    first = c.sample()
    db.restart(startup=1_700_100_000)
    _grow(db, 80)  # after the restart the counters pass their old values again
    clock.t += 1
    second = c.sample()
    row = c.derive(first, second, 1.0)["log file sync"]
    assert row["waits"] is None and row["hist"] is None and row["p99"] is None
    _grow(db, 7)
    clock.t += 1
    assert c.derive(second, c.sample(), 1.0)["log file sync"]["waits"] == 7
    assert any("restarted" in e.text for e in c.take_events())


def test_lost_connection_recovers_with_backoff():
    db = StandIn()
    c, s, flaky, clock = _waits(db)
    _grow(db)
    before = c.sample()
    flaky.kill()
    clock.t += 1
    with pytest.raises(OracleError, match=r"DPY-4011 connection to .* lost; reconnecting"):
        c.sample()
    assert not s.connected
    flaky.refuse = ora("ORA-12541", "TNS:no listener")
    clock.t += 1.5
    with pytest.raises(OracleError, match="ORA-12541 no listener reachable"):
        c.sample()  # the first retry is refused ...
    clock.t += 1
    with pytest.raises(OracleError, match="next attempt in"):
        c.sample()  # ... and the next waits out the doubled backoff without connecting
    opened = flaky.opened
    flaky.refuse = None
    clock.t += 2
    _grow(db, 5)
    after = c.sample()
    assert flaky.opened == opened + 1 and s.connected
    # same instance (same startup time): the counters continue across the reconnect
    assert c.derive(before, after, 4.5)["log file sync"]["waits"] == pytest.approx(5 / 4.5)


def test_call_timeout_keeps_the_connection():
    db = StandIn()
    c, _s, flaky, clock = _waits(db)
    c.sample()
    flaky.fail_next = ora("DPY-4024", "call timeout of 2000 ms exceeded")
    clock.t += 1
    with pytest.raises(OracleError, match="took longer than the call timeout"):
        c.sample()
    clock.t += 1
    c.sample()
    assert flaky.opened == 1


CONNECT_ERRORS = [
    ("ORA-01017", "invalid username/password; logon denied", "check the user and the password"),
    ("ORA-01031", "insufficient privileges", "GRANT SYSDG TO sgmon"),
    ("ORA-12541", "TNS:no listener", "lsnrctl status"),
    ("DPY-6005", "cannot connect to database (CONNECTION_ID=x). [Errno 111]", "lsnrctl status"),
    ("DPY-6001", 'Service "STBY" is not registered with the listener', "lsnrctl services"),
    ("ORA-12514", "TNS:listener does not currently know of service", "lsnrctl services"),
    ("ORA-01033", "ORACLE initialization or shutdown in progress", 'mode = "sysdg"'),
    ("DPY-3010", "connections to this database server version are not supported", "thick"),
]


@pytest.mark.parametrize(("code", "text", "advice"), CONNECT_ERRORS)
def test_connect_errors_are_one_line_saying_what_to_do(code, text, advice):
    db = StandIn()
    flaky = Flaky(db)
    flaky.refuse = ora(code, text)
    cfg = DbConfig(dsn="stby1:1521/STBY_DGMGRL", user="sgmon", mode="sysdg", password_env="X")
    s = Session(db=cfg, connect=flaky.connect, clock=Clock())
    c = OracleWaitsCollector({"session": s})
    c.open()
    with pytest.raises((OracleError, Unavailable)) as info:
        c.sample()
    msg = str(info.value)
    assert msg.startswith(code) and advice in msg and "\n" not in msg and len(msg) < 260
    fatal = code in ("ORA-01017", "ORA-01031", "DPY-3010")  # ORA-01033: starting, retried
    assert isinstance(info.value, Unavailable) == fatal
    if fatal:  # never retried: a retry loop on a wrong password locks the account
        flaky.refuse = None
        with pytest.raises(Unavailable):
            c.sample()
        assert flaky.opened == 0


def test_missing_privilege_on_a_view_is_one_line():
    db = StandIn()
    flaky = Flaky(db)
    s = Session(db=DbConfig(dsn="prim1/PROD", user="sgmon"), connect=flaky.connect, clock=Clock())
    c = OracleWaitsCollector({"session": s})
    c.open()
    s.refresh()
    flaky.fail_next = ora("ORA-00942", "table or view does not exist")
    c.sample()  # the startup check already ran this tick; the failure hits v$system_event
    notes = [e.text for e in c.take_events() if e.kind == "note"]
    assert len(notes) == 1 and "GRANT SELECT_CATALOG_ROLE TO sgmon" in notes[0]


class _FakeOracleConn:
    """Stands in for an oracledb.Connection (the SQL goes to the stand-in)."""

    def __init__(self, db: StandIn) -> None:
        self.real = db.connect()
        self.call_timeout = 0

    def cursor(self):
        return self.real.cursor()

    def close(self) -> None:
        self.real.close()


def test_connect_kwargs_sysdg_call_timeout_and_no_stored_config_password(monkeypatch):
    db = StandIn()
    seen: dict = {}

    def fake_connect(**kwargs):
        seen.update(kwargs)
        conn = _FakeOracleConn(db)
        seen["conn"] = conn
        return conn

    monkeypatch.setenv("SGMON_TEST_PW", PASSWORD)
    monkeypatch.setattr(oracledb, "connect", fake_connect)
    cfg = DbConfig(
        dsn="stby1/STBY_DGMGRL", user="c##sgmon", mode="sysdg", password_env="SGMON_TEST_PW"
    )
    s = Session(db=cfg)
    s.refresh()
    assert seen["mode"] == oracledb.AUTH_MODE_SYSDGD
    assert seen["user"] == "c##sgmon" and seen["password"] == PASSWORD
    assert seen["conn"].call_timeout == 2000
    assert PASSWORD not in repr(cfg)  # the config never held it


def test_password_never_in_any_output(monkeypatch, capsys, caplog):
    """A driver error that (badly) echoes the password, through the engine into a frame."""
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("SGMON_TEST_PW", PASSWORD)

    def evil_connect(**kwargs):
        raise ora("ORA-01017", f"invalid username/password {kwargs['password']}; logon denied")

    monkeypatch.setattr(oracledb, "connect", evil_connect)
    cfg = DbConfig(dsn="prim1:1521/PROD", user="sgmon", password_env="SGMON_TEST_PW")
    engine = Engine([OracleWaitsCollector({"db": cfg, "role": "primary"})], interval=1.0)
    try:
        frames = [engine.tick() for _ in range(3)]
    finally:
        engine.close()
    res = frames[0].collectors["oracle_waits"]
    assert res.status is Status.UNAVAILABLE and "ORA-01017" in (res.error or "")
    out = capsys.readouterr()
    everything = "\n".join(
        [out.out, out.err, caplog.text, *(json.dumps(f.to_dict()) for f in frames)]
    )
    assert "ORA-01017" in everything
    assert PASSWORD not in everything


def test_no_password_source_says_what_to_do():
    s = Session(db=DbConfig(dsn="prim1/PROD", user="sgmon"))
    with pytest.raises(OracleError, match="password_env, wallet_dir") as info:
        s.refresh()
    assert info.value.fatal


def test_timeout_while_identifying_reconnects_and_identifies_again():
    db = StandIn(version="12.1.0.2.0")
    c, s, flaky, clock = _waits(db)
    flaky.fail_next = ora("DPY-4024", "call timeout of 2000 ms exceeded")
    with pytest.raises(OracleError, match="call timeout"):
        c.sample()
    assert not s.connected
    clock.t += 1.5
    _grow(db)
    c.sample()
    assert s.version == (12, 1, 0, 2, 0) and flaky.opened == 2


def test_role_differing_from_the_config_is_noted_once():
    db = StandIn(role="PRIMARY")
    c, s, _, clock = _waits(db, role="standby")
    for _ in range(3):
        clock.t += 1
        c.sample()
    notes = [e.text for e in c.take_events() if e.kind == "note"]
    assert len(notes) == 1 and "configured as standby" in notes[0] and s.role == "primary"


def test_prompted_password_asked_once_up_front(monkeypatch):
    from sgmon.oracle import passwords
    from sgmon.oracle import session as session_mod

    asked: list[str] = []
    monkeypatch.setattr(passwords.sys.stdin, "isatty", lambda: True, raising=False)
    monkeypatch.setattr(passwords.getpass, "getpass", lambda p: asked.append(p) or PASSWORD)
    monkeypatch.setattr(passwords, "_prompted", {})
    seen: dict = {}
    monkeypatch.setattr(oracledb, "connect", lambda **kw: seen.update(kw) or _FakeOracleConn(db))
    db = StandIn()
    cfg = DbConfig(dsn="stby1/STBY", user="sgmon", password="prompt", mode="sysdba")
    session_mod.ask_passwords([cfg, cfg, None])
    Session(db=cfg).refresh()
    Session(db=cfg).refresh()
    assert asked == ["password for sgmon@stby1/STBY: "]
    assert seen["password"] == PASSWORD and seen["mode"] == oracledb.AUTH_MODE_SYSDBA
