"""The trace reader on seed 000's and seed 003's trace excerpts: LGWR slow-write warnings, the
NSS/RFS msgid split, and following files across rotation, truncation and partial lines."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from collectors.oracle.trace import Follower, OracleTraceCollector
from sgmon.collector import Unavailable

# seed 000, "EXAMPLES": the NSS side of two long remote writes, as the paper prints them
NSS = """\
Client sending SQLNET request data [kpurcs] oper='Write' flag=67111042 thrd=1
seq=1584 msgid=117468
*** 2014-12-02 08:46:34.598 5837 krsu.c
*** 2014-12-02 08:46:34.761 6058 krsu.c
... Client received SQLNET call [kpurcs] response oper='Write' flag=67111042 thrd=1
seq=1584 msgid=117468
Client sending SQLNET request data [kpurcs] oper='Write' flag=67111042 thrd=2
seq=1311 msgid=124705

*** 2014-12-02 08:46:49.879 5837 krsu.c
*** 2014-12-02 08:46:50.017 6058 krsu.c

... Client received SQLNET call [kpurcs] response oper='Write' flag=67111042 thrd=2
seq=1311 msgid=124705
"""
RFS = """\
... Server received SQLNET data [krsr_rfs_dsp] oper='Write' flag=67111042 thrd=1
seq=1584 msgid=117468
*** 2014-12-02 08:46:34.598 826 krsr.c
WAIT #0: nam='RFS random i/o' ela= 298 p1=0 p2=0 p3=2147483647 obj#=-1
tim=1417535194598944
WAIT #0: nam='RFS write' ela= 162381 p1=0 p2=0 p3=0 obj#=-1 tim=1417535194761203
... Server finished processing SQLNET data [krsr_rfs_dsp] oper='Write' flag=67111042
thrd=1 seq=1584 msgid=117468
*** 2014-12-02 08:46:34.761 1459 krsr.c
... Server received SQLNET data [krsr_rfs_dsp] oper='Write' flag=67111042 thrd=2
seq=1311 msgid=124705

*** 2014-12-02 08:46:50.016 826 krsr.c

WAIT #0: nam='RFS random i/o' ela= 360 p1=0 p2=0 p3=2147483647 obj#=-1
tim=1417535210017013

WAIT #0: nam='RFS write' ela= 246 p1=0 p2=0 p3=0 obj#=-1 tim=1417535210017052

... Server finished processing SQLNET data [krsr_rfs_dsp] oper='Write' flag=67111042
thrd=2 seq=1311 msgid=124705

*** 2014-12-02 08:46:50.017 1459 krsr.c
"""
# seed 003: the LGWR trace of the primary, with an unrelated line in between
LGWR = """\
*** 2023-06-06 22:28:03.682

Warning: log write elapsed time 524ms, size 3000KB

kcrfw_update_adaptive_sync_mode: post->poll long#=2 sync#=1 sync=62 poll=1056 rw=454
*** 2023-06-06 22:28:35.013

Warning: log write elapsed time 505ms, size 2157KB
"""


def _collector(tmp_path: Path, **paths: str) -> OracleTraceCollector:
    c = OracleTraceCollector({**{k: str(tmp_path / v) for k, v in paths.items()}})
    c.open()
    return c


def _append(path: Path, text: str) -> None:
    with path.open("a") as f:
        f.write(text)


def test_needs_a_trace_path():
    with pytest.raises(Unavailable, match="lgwr ="):
        OracleTraceCollector({}).open()


def test_seed000_msgid_split_network_versus_rfs(tmp_path):
    (tmp_path / "nss.trc").write_text("")
    (tmp_path / "rfs.trc").write_text("")
    c = _collector(tmp_path, nss="nss.trc", rfs="rfs.trc")
    first = c.sample()
    _append(tmp_path / "nss.trc", NSS)
    _append(tmp_path / "rfs.trc", RFS)
    rows = c.derive(first, c.sample(), 1.0)
    splits = {e.text.split(":")[0]: e for e in c.take_events() if e.kind == "remote_write_split"}
    rfs_bound = splits["msgid 117468 thrd 1 seq 1584"]
    net_bound = splits["msgid 124705 thrd 2 seq 1311"]
    # "the above elapsed time for RFS write accounts for almost all of the 163ms"
    assert rfs_bound.value == pytest.approx(163.0)
    assert "163 ms = 0 ms network + 163 ms RFS (RFS write 162.4 ms)" in rfs_bound.text
    # "time being spent on the network for a 138ms long log write"
    assert net_bound.value == pytest.approx(138.0)
    assert "138 ms = 137 ms network + 1 ms RFS" in net_bound.text
    assert rows["remote"] == {"splits": 2, "max_network": 137.0, "max_rfs": 163.0}


def test_short_remote_writes_are_not_split(tmp_path):
    (tmp_path / "nss.trc").write_text("")
    (tmp_path / "rfs.trc").write_text("")
    c = OracleTraceCollector(
        {"nss": str(tmp_path / "nss.trc"), "rfs": str(tmp_path / "rfs.trc"), "threshold_ms": 150}
    )
    c.open()
    _append(tmp_path / "nss.trc", NSS)
    _append(tmp_path / "rfs.trc", RFS)
    c.sample()
    assert [e.value for e in c.take_events() if e.kind != "note"] == [pytest.approx(163.0)]


def test_lgwr_warnings_unrelated_lines_and_a_partial_last_line(tmp_path):
    trc = tmp_path / "PROD_lgwr_1234.trc"
    trc.write_text(
        "old content from before sgmon started\nWarning: log write elapsed time 999ms, size 1KB\n"
    )
    c = _collector(tmp_path, lgwr=trc.name)
    first = c.sample()  # followed from the end: the old warning is not news
    _append(trc, LGWR + "*** 2023-06-06 22:28:35.973\nWarning: log write elapsed time 95")
    second = c.sample()
    row = c.derive(first, second, 1.0)["lgwr"]
    assert (row["slow_writes"], row["max_write"]) == (2, 524)
    events = [e for e in c.take_events() if e.kind != "note"]
    assert [e.value for e in events] == [524.0, 505.0]
    assert events[0].text == "log write 524 ms, 3000 KB"
    _append(trc, "8ms, size 5316KB\n")
    row = c.derive(second, c.sample(), 1.0)["lgwr"]
    assert (row["slow_writes"], row["max_write"]) == (1, 958)


def test_follower_across_rotation_and_truncation(tmp_path):
    p = tmp_path / "lgwr.trc"
    p.write_text("")
    f = Follower(str(p))
    assert f.lines() == []
    _append(p, "one\ntw")
    assert f.lines() == ["one"]
    _append(p, "o\n")
    os.rename(p, tmp_path / "lgwr.trc.1")  # rotated: the old file's tail is still read
    _append(tmp_path / "lgwr.trc.1", "three\nfou")
    p.write_text("r\n")
    assert f.lines() == ["two", "three", "fou", "r"]  # a line cut by the rotation stays cut
    os.rename(p, tmp_path / "lgwr.trc.2")
    p.write_text("four\n")  # rotated again
    assert f.lines() == ["four"]
    with p.open("w") as out:  # truncated in place, then a shorter content
        out.write("6\n")
    assert f.lines() == ["6"]
    p.unlink()
    assert f.lines() == []
    f.close()
