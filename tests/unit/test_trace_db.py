"""The trace reader asks the database which files are current (V$DIAG_INFO + V$PROCESS on the
stand-in) at each connect and when a followed file goes quiet, without connecting itself."""

from __future__ import annotations

import os
from pathlib import Path

from collectors.oracle.trace import OracleTraceCollector
from sgmon.oracle.session import Session
from sgmon.sim.standin import StandIn


def _warn(path: Path, ms: int) -> None:
    with path.open("a") as f:
        f.write(f"*** 2015-03-10 14:09:08.402\nWarning: log write elapsed time {ms}ms, size 1KB\n")


def test_the_database_names_files_that_do_not_exist_yet(tmp_path):
    db = StandIn(":memory:")
    db.set_trace_dir(str(tmp_path))
    db.set_process("LGWR", 200)  # restarted since the config was written: LGWR is pid 200 now
    db.set_process("PMON", 199)
    old = tmp_path / "sgmon_lgwr_100.trc"  # the configured file, from before the restart
    old.write_text("")
    now = [0.0]
    session = Session(connect=db.connect)
    c = OracleTraceCollector(
        {"lgwr": str(old), "session": session, "timezone": "UTC", "clock": lambda: now[0]}
    )
    c.open()
    c.sample()
    assert not [e for e in c.take_events() if e.kind == "note"]  # not connected: nothing asked
    session.refresh()  # another database collector of the host connects
    c.sample()
    notes = [e.text for e in c.take_events() if e.kind == "note"]
    new = tmp_path / "sgmon_lgwr_200.trc"  # LGWR writes its trace only when it has to warn
    assert notes == [f"{old} abandoned for {new} (a new process)"]
    _warn(new, 640)
    c.sample()
    assert [e.value for e in c.take_events()] == [640.0]
    db.set_process("LGWR", 300)  # respawned again; its file stays quiet until it warns
    db.set_process("LG00", 301)
    now[0] += 60.0  # quiet for longer than rescan_s (30 s): the database is asked again
    c.sample()
    notes = [e.text for e in c.take_events() if e.kind == "note"]
    assert notes == [f"{new} abandoned for {tmp_path / 'sgmon_lgwr_300.trc'} (a new process)"]
    _warn(tmp_path / "sgmon_lg00_301.trc", 650)
    c.sample()
    assert [e.value for e in c.take_events()] == [650.0]
    c.close()
    session.close()
    db.close()


def test_every_rfs_the_standby_runs_is_followed(tmp_path):
    """The standby runs one RFS per connected client: the one serving SYNC need not be the one
    whose trace changed last, so all of them are read."""
    from test_trace_reader import NSS, RFS

    db = StandIn(":memory:", role="PHYSICAL STANDBY")
    db.set_trace_dir(str(tmp_path))
    db.set_process("RFS", 500, pid=20)  # serves the primary's NSS
    db.set_process("RFS", 501, pid=21)  # an archiver's connection, busier
    session = Session(connect=db.connect)
    session.refresh()
    sync, arch = tmp_path / "sgmon_rfs_500.trc", tmp_path / "sgmon_rfs_501.trc"
    nss = tmp_path / "PROD_nss2_77.trc"
    for p in (sync, arch, nss):
        p.write_text("")
    opts = {"rfs": str(sync), "nss": str(nss), "session": session, "timezone": "UTC"}
    c = OracleTraceCollector(opts)
    c.open()
    c.sample()
    sync.write_text(RFS)
    arch.write_text("...\n")
    st = sync.stat()
    os.utime(arch, (st.st_atime + 10, st.st_mtime + 10))
    nss.write_text(NSS)
    assert c.sample()["remote"]["splits"] == 2
    c.close()
    session.close()
    db.close()


def test_a_live_process_file_untouched_since_we_started_holds_no_news(tmp_path):
    db = StandIn(":memory:")
    db.set_trace_dir(str(tmp_path))
    db.set_process("LGWR", 200)  # up for days; its trace was last written then
    live, dead = tmp_path / "sgmon_lgwr_200.trc", tmp_path / "sgmon_lgwr_100.trc"
    _warn(live, 999)
    st = live.stat()
    os.utime(live, (st.st_atime - 86400, st.st_mtime - 86400))
    dead.write_text("")  # a dead process's file, written more recently (copied, touched)
    session = Session(connect=db.connect)
    c = OracleTraceCollector({"lgwr": str(tmp_path), "session": session, "timezone": "UTC"})
    c.open()
    session.refresh()
    c.sample()
    assert [e.kind for e in c.take_events()] == ["note"]  # the switch, not a days-old warning
    _warn(live, 640)
    c.sample()
    assert [e.value for e in c.take_events()] == [640.0]
    c.close()
    session.close()
    db.close()
