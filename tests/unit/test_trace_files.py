"""The trace reader on real public traces (tests/data/traces/README.md): 11.2 and 12.2+ stamps
in the instance's zone, the LGnn lines that explain log file sync, pid-named files that a new
process replaces, recreated and segmented files, an unreadable file, and msgids per thread."""

from __future__ import annotations

import datetime as _dt
import os
import shutil
import zoneinfo
from pathlib import Path

import pytest
from kits.trace_files import DATA, V11, _epoch, _read_whole

from collectors.oracle.trace import OracleTraceCollector

V12 = DATA / "XXXXXX_lg00_280164.trc"


def test_11g_stamps_are_in_the_configured_instance_zone_not_sgmons(tmp_path, other_tz):
    trc = tmp_path / V11.name
    shutil.copy(V11, trc)
    _, events = _read_whole(trc, timezone="America/Chicago")
    slow = [e for e in events if e.kind == "lgwr_slow_write"]
    assert [e.value for e in slow] == [610.0, 1232.0, 784.0]
    assert slow[1].time == pytest.approx(_epoch("2015-03-10 14:09:08.402", "America/Chicago"))


def test_11g_stamps_without_a_configured_zone_use_the_hosts_not_sgmons_tz(tmp_path, other_tz):
    trc = tmp_path / V11.name  # pid 17884: not running here, so no process environment to read
    shutil.copy(V11, trc)
    _, events = _read_whole(trc)
    with open("/etc/localtime", "rb") as f:
        host = zoneinfo.ZoneInfo.from_file(f)
    local = _dt.datetime.fromisoformat("2015-03-10 14:09:08.402").replace(tzinfo=host)
    assert events[1].time == pytest.approx(local.timestamp())


def test_a_bad_timezone_says_what_to_write(tmp_path):
    c = OracleTraceCollector({"lgwr": str(tmp_path / "x_lgwr_1.trc"), "timezone": "Mars/Olympus"})
    with pytest.raises(Exception, match='timezone = "Mars/Olympus" names no zone'):
        c.open()


def test_12c_lg00_offsets_kept_and_the_lines_that_explain_log_file_sync(tmp_path, other_tz):
    trc = tmp_path / V12.name
    text = V12.read_text()
    cut = text.index("*** 2023-02-22")
    trc.write_text(text[:cut])
    c = OracleTraceCollector({"lgwr": str(trc), "from_start": True, "timezone": "UTC"})
    c.open()
    first = c.sample()
    events = c.take_events()
    assert [(e.kind, e.text) for e in events] == [("log_file_sync_mode", "log file sync polling")]
    assert events[0].time == pytest.approx(
        _dt.datetime.fromisoformat("2023-01-29T01:00:52.031269-06:00").timestamp()
    )
    assert first["lgwr"]["polling"] == 1.0
    with trc.open("a") as f:
        f.write(text[cut:])
    row = c.derive(first, c.sample(), 1.0)["lgwr"]
    events = c.take_events()
    # the msg pool dump, kcrfw_alfs_update_mode and the worker exit are not ours: skipped
    assert [(e.kind, e.value) for e in events] == [
        ("log_file_sync_mode", 0.0),
        ("lgwr_broadcast_wait", 2331.0),
        ("lgwr_broadcast_wait", 4696.0),
    ]
    assert (row["polling"], row["broadcast_waits"], row["max_broadcast"]) == (0.0, 2, 4696.0)
    assert row["slow_writes"] == 0


def test_adaptive_scalable_lgwr_worker_lines(tmp_path):
    trc = tmp_path / "PROD_lgwr_10.trc"
    trc.write_text("")
    c = OracleTraceCollector({"lgwr": str(trc)})
    c.open()
    with trc.open("a") as f:
        f.write("*** 2023-01-29T01:00:52.031166-06:00 (CDB$ROOT(1))\n")
        f.write("Adaptive scalable LGWR disabling workers\n")
        f.write("Adaptive scalable LGWR enabling workers\n")
    c.sample()
    assert [(e.kind, e.value) for e in c.take_events()] == [
        ("lgwr_workers", 0.0),
        ("lgwr_workers", 1.0),
    ]


def _warn(path: Path, ms: int) -> None:
    with path.open("a") as f:
        f.write(f"*** 2015-03-10 14:09:08.402\nWarning: log write elapsed time {ms}ms, size 1KB\n")


def _later(path: Path, seconds: float) -> None:
    st = path.stat()
    os.utime(path, (st.st_atime + seconds, st.st_mtime + seconds))


def test_a_new_process_file_replaces_the_old_one_and_lgnn_files_are_followed(tmp_path):
    old = tmp_path / "PROD_lgwr_100.trc"
    old.write_text("")
    other = tmp_path / "TEST_lgwr_300.trc"  # another instance on the host: not ours
    other.write_text("")
    c = OracleTraceCollector({"lgwr": str(old), "rescan_s": 0, "timezone": "UTC"})
    c.open()
    c.sample()
    _warn(old, 601)  # the last words of the old LGWR
    new = tmp_path / "PROD_lgwr_200.trc"  # the instance restarted: a new pid, a new file
    _warn(new, 702)
    _later(new, 10)
    lg00 = tmp_path / "PROD_lg00_201.trc"  # and its first 12c worker
    _warn(lg00, 803)
    _later(lg00, 10)
    _warn(other, 999)
    c.sample()  # the old file went quiet: the newest files are found
    c.sample()
    events = c.take_events()
    slow = sorted(e.value for e in events if e.kind == "lgwr_slow_write")
    assert slow == [601.0, 702.0, 803.0]
    notes = [e.text for e in events if e.kind == "note"]
    assert notes == [f"{old} abandoned for {new} (a new process)"]


def test_a_directory_follows_each_sids_lgwr_and_lgnn(tmp_path):
    for name in ("PROD_lgwr_1.trc", "PROD_lg01_2.trc", "PROD_ora_3.trc"):
        (tmp_path / name).write_text("")
    c = OracleTraceCollector({"lgwr": str(tmp_path), "timezone": "UTC"})
    c.open()
    for name in ("PROD_lgwr_1.trc", "PROD_lg01_2.trc", "PROD_ora_3.trc"):
        _warn(tmp_path / name, 500 + len(name))
    c.sample()
    assert sorted(e.value for e in c.take_events()) == [515.0, 515.0]


def test_a_recreated_and_a_segmented_file(tmp_path):
    trc = tmp_path / "PROD_lgwr_7.trc"
    trc.write_text("")
    c = OracleTraceCollector({"lgwr": str(trc), "timezone": "UTC"})
    c.open()
    _warn(trc, 510)
    os.rename(trc, tmp_path / "PROD_lgwr_7_1.trc")  # a segment closed: its tail still counts
    _warn(tmp_path / "PROD_lgwr_7_1.trc", 520)
    _warn(trc, 530)
    c.sample()
    trc.unlink()  # removed; Oracle writes "TRACE FILE RECREATED AFTER BEING REMOVED"
    c.sample()
    trc.write_text("\n*** TRACE FILE RECREATED AFTER BEING REMOVED ***\n\n")
    _warn(trc, 540)
    c.sample()
    with trc.open("w") as f:  # truncated in place
        f.write("")
    _warn(trc, 5)
    c.sample()
    assert [e.value for e in c.take_events()] == [510.0, 520.0, 530.0, 540.0, 5.0]


def test_an_unreadable_file_is_one_note_once(tmp_path):
    bad = tmp_path / "PROD_lgwr_9.trc"
    bad.mkdir()  # readable by nobody as a file, root included
    c = OracleTraceCollector({"lgwr": str(bad.parent / "PROD_lgwr_8.trc"), "rescan_s": 0})
    c.open()
    for _ in range(3):
        with pytest.raises(OSError, match="cannot read"):  # unknown, never "0 slow writes"
            c.sample()
    notes = [e.text for e in c.take_events() if e.kind == "note"]
    assert len([n for n in notes if n.startswith(f"cannot read {bad}")]) == 1


# seed 000's two remote writes, with the second one's msgid made equal to the first's: msgids
# are counted per redo thread, so thread 2 may reuse thread 1's
def _seed000() -> tuple[str, str]:
    from test_trace_reader import NSS, RFS

    return NSS.replace("124705", "117468"), RFS.replace("124705", "117468")


def test_msgid_split_matches_on_thread_and_msgid(tmp_path):
    nss, rfs = tmp_path / "PROD_nss2_1.trc", tmp_path / "STBY_rfs_2.trc"
    nss.write_text("")
    rfs.write_text("")
    c = OracleTraceCollector({"nss": str(nss), "rfs": str(rfs), "timezone": "UTC"})
    c.open()
    n, r = _seed000()
    nss.write_text(n)
    rfs.write_text(r)
    first = c.sample()  # the counters' base: what it read counts in the next interval
    splits = sorted(e.text for e in c.take_events() if e.kind == "remote_write_split")
    assert splits == [
        "msgid 117468 thrd 1 seq 1584: 163 ms = 0 ms network + 163 ms RFS (RFS write 162.4 ms)",
        "msgid 117468 thrd 2 seq 1311: 138 ms = 137 ms network + 1 ms RFS (RFS write 0.2 ms)",
    ]
    rows = c.derive(first, c.sample(), 1.0)
    assert rows["remote"] == {"splits": 2, "max_network": 137.0, "max_rfs": 163.0}
