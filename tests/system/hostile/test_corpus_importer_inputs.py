"""Every importer, and the trace reader, fed each shape of hostile input: an empty file, binary
garbage, a 6 MB line (then good data), another tool's text, NUL bytes, a FIFO, a device node, a
gzip bomb, a truncated gzip, a directory, lines ended by CR alone.  Each ``sgmon import`` runs
in-process (tests/system/hostile/inproc.py) and must: end in time without a traceback, say in
``sgmon:`` lines what it could not read and name the file, print nothing raw, write nothing
outside its ``--dir``, and import the good data that follows a giant line."""

from __future__ import annotations

import gzip
import os
import random
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from inproc import bound, run, sound, tree
from kits.import_awrtext import LNS
from oswlab import OLD_IOSTAT

from collectors.oracle.trace import OracleTraceCollector
from sgmon.model import Event

pytestmark = pytest.mark.timeout(60)

SADC = "/usr/lib/sysstat/sadc"
GIANT = b"g" * (6 << 20)
WARN = b"*** 2015-03-10 14:09:08.402\nWarning: log write elapsed time 777ms, size 1KB\n"


@pytest.fixture(scope="module")
def bomb() -> bytes:
    """200 MB of newlines in 200 KB of gzip."""
    return gzip.compress(b"\n" * (200 << 20), compresslevel=9, mtime=0)


def _put(path: Path, shape: str, good: bytes, bomb: bytes) -> None:
    """Make ``path`` the input of ``shape``; ``good``: what the importer reads well."""
    makers: dict[str, Callable[[], None]] = {
        "empty": lambda: path.write_bytes(b""),
        "garbage": lambda: path.write_bytes(random.Random(path.name).randbytes(65536)),
        "giant-line-then-good": lambda: path.write_bytes(GIANT + b"\n" + good),
        "nul-bytes": lambda: path.write_bytes(b"\0" * 100_000 + good),
        "fifo": lambda: os.mkfifo(path),
        "device": lambda: os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 5)),
        "gzip-bomb": lambda: path.write_bytes(bomb),
        "truncated-gzip": lambda: path.write_bytes(_half(gzip.compress(good * 50))),
        "directory": lambda: path.mkdir(),
        "cr-line-ends": lambda: path.write_bytes(good.replace(b"\n", b"\r")),
        "newline-flood": lambda: path.write_bytes(b"\n" * (256 << 10)),
    }
    makers[shape]()


def _half(data: bytes) -> bytes:
    return data[: len(data) // 2]


SHAPES = [
    "empty",
    "garbage",
    "giant-line-then-good",
    "nul-bytes",
    "fifo",
    "device",
    "gzip-bomb",
    "truncated-gzip",
    "directory",
    "cr-line-ends",
    "newline-flood",
]


def _imported(out: Path) -> int:
    """Data rows of every table the import wrote."""
    return sum(
        max(0, len(p.read_bytes().splitlines()) - 1)
        for p in out.glob("*/*.csv")
        if p.name != "events.csv"
    )


def _import(capfd, tmp: Path, argv: list[str], named: str) -> tuple[int, str]:
    """Run one import into tmp/out: sound, the input named when something went unread,
    nothing outside --dir touched; its rows and what it said."""
    out = tmp / "out"
    before = tree(tmp, skip=(out,))
    r = run(capfd, "import", *argv, "--dir", str(out), seconds=30)
    sound(r)
    assert tree(tmp, skip=(out,)) == before, "the import touched something outside --dir"
    rows = _imported(out)
    if rows == 0:
        assert r.notes() or " 0 rows" in r.out, "nothing imported, and nothing said"
    if r.rc:
        assert named in r.err or "no " in r.err or "nothing" in r.err, r.err
    return rows, r.err


OSW_GOOD = {
    "iostat": OLD_IOSTAT.encode(),
    "vmstat": b"Linux OSWbb v8.4.0\nzzz ***Mon Nov 24 11:00:01 UTC 2025\n"
    b"procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----\n"
    b" r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st\n"
    + b" 1  0      0 812344  10240 904800    0    0     2    40  120  300  3  1 95  1  0\n"
    * 3,
    "mpstat": b"Linux OSWbb v8.4.0\nzzz ***Mon Nov 24 11:00:01 UTC 2025\n"
    b"11:00:02 AM  CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest"
    b"  %gnice   %idle\n11:00:03 AM  all    3.00    0.00    1.00    1.00    0.00    0.00"
    b"    0.00    0.00    0.00   95.00\n",
    "netstat": b"Linux OSWbb v8.4.0\nzzz ***Mon Nov 24 11:00:01 UTC 2025\n"
    b"Kernel Interface table\nIface      MTU    RX-OK RX-ERR RX-DRP RX-OVR    TX-OK TX-ERR "
    b"TX-DRP TX-OVR Flg\neth0      1500   100      0      0 0           100      0      0 "
    b"     0 BMRU\n",
    "top": b"Linux OSWbb v8.4.0\nzzz ***Mon Nov 24 11:00:01 UTC 2025\n"
    b"top - 11:00:02 up 1 day,  1 user,  load average: 0.10, 0.20, 0.30\n",
    "ps": b"Linux OSWbb v8.4.0\n\nzzz ***Mon Nov 24 11:00:01 UTC 2025\n"
    b"USER PID PPID PRI %CPU %MEM VSZ RSS WCHAN S STARTED TIME COMMAND\n"
    b"oracle 4242 1 19 1.0 2.0 1000 500 - S 10:00:00 00:00:01 ora_lgwr_PROD\n",
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("tool", sorted(OSW_GOOD))
def test_an_oswatcher_file_of_each_block_type(capfd, tmp_path, bomb, tool, shape):
    archive = tmp_path / "osw"
    (archive / f"osw{tool}").mkdir(parents=True)
    good = archive / f"osw{tool}" / f"db1_{tool}_25.11.24.1000.dat"
    good.write_bytes(OSW_GOOD[tool])
    gz = shape in ("gzip-bomb", "truncated-gzip")
    bad = archive / f"osw{tool}" / f"db1_{tool}_25.11.24.1100.dat{'.gz' if gz else ''}"
    _put(bad, shape, OSW_GOOD[tool], bomb)
    rows, err = _import(capfd, tmp_path, ["osw", str(archive)], bad.name)
    if tool == "iostat":  # the good file beside it is imported whatever the bad one holds
        assert rows > 0, err
    if shape not in ("cr-line-ends", "giant-line-then-good", "nul-bytes"):
        assert bad.name in err or "empty" in err or "no " in err, err


FOUR_MB = {"blank": b"\n", "blank-crlf": b"\r\n", "spaces": b"  \t \n", "junk": b"x\n"}


@pytest.mark.parametrize("line", sorted(FOUR_MB))
def test_an_oswatcher_file_of_4_mb_of_blank_or_junk_lines_is_cheap(capfd, tmp_path, line):
    """4 MB of blank lines (LF, CRLF, spaces) or one-letter junk, beside a good file: the good
    file imported, the bad one named.  Its cost is measured by bench/import_osw_junk.py, not
    asserted here: 1.59 s of CPU on CI's machine failed a bound of 1.5 that this machine met
    (a test's timing bound fails on a slower or busier machine, not on slower code)."""
    archive = tmp_path / "osw"
    (archive / "oswvmstat").mkdir(parents=True)
    (archive / "oswvmstat" / "db1_vmstat_25.11.24.1000.dat").write_bytes(OSW_GOOD["vmstat"])
    bad = archive / "oswvmstat" / "db1_vmstat_25.11.24.1100.dat"
    bad.write_bytes(FOUR_MB[line] * ((4 << 20) // len(FOUR_MB[line])))
    rows, err = _import(capfd, tmp_path, ["osw", str(archive)], bad.name)
    assert rows > 0 and bad.name in err, err


AWR_GOOD = LNS.read_bytes()
AWR_HTML = (
    b"<html><head><title>AWR Report for DB: PROD</title></head><body>"
    b"<h1>WORKLOAD REPOSITORY report for</h1><table><tr><td>\x1b[2J</td></tr></table>"
    b"</body></html>\n"
)


@pytest.mark.parametrize("shape", [*SHAPES, "html-report"])
def test_an_awr_text_report(capfd, tmp_path, bomb, shape):
    src = tmp_path / "in"
    src.mkdir()
    bad = src / ("awrrpt_1_2.txt.gz" if "gzip" in shape else "awrrpt_1_2.txt")
    if shape == "html-report":
        bad.write_bytes(AWR_HTML)
    else:
        _put(bad, shape, AWR_GOOD, bomb)
    rows, err = _import(capfd, tmp_path, ["awr-report", str(bad)], bad.name)
    if shape == "giant-line-then-good":
        assert rows > 0, err


@pytest.fixture(scope="module")
def sa_file(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """Two samples the real sadc wrote."""
    path = tmp_path_factory.mktemp("sa") / "sa01"
    subprocess.run([SADC, "-S", "DISK", "1", "2", str(path)], check=True, timeout=30)
    return path.read_bytes()


@pytest.mark.parametrize("shape", [*SHAPES, "awr-text", "dev-zero-path"])
def test_a_sar_file(capfd, tmp_path, bomb, sa_file, shape):
    src = tmp_path / "in"
    src.mkdir()
    bad = src / "sa24"
    if shape == "awr-text":
        bad.write_bytes(AWR_GOOD)
    elif shape != "dev-zero-path":
        _put(bad, shape, sa_file, bomb)
    path = "/dev/zero" if shape == "dev-zero-path" else str(bad)
    _import(capfd, tmp_path, ["sar", path], Path(path).name)


@pytest.mark.parametrize("shape", [*SHAPES, "dev-zero-path"])
def test_a_sar_devices_file(capfd, tmp_path, bomb, sa_file, shape):
    src = tmp_path / "in"
    src.mkdir()
    sa = src / "sa24"
    sa.write_bytes(sa_file)
    devices = src / "diskstats"
    good = b"   8      16 sdb 1 0 8 0 2 0 16 0 0 0 0 0 0 0 0 0 0\n"
    if shape != "dev-zero-path":
        _put(devices, shape, good, bomb)
    path = "/dev/zero" if shape == "dev-zero-path" else str(devices)
    rows, err = _import(capfd, tmp_path, ["sar", "--devices", path, str(sa)], Path(path).name)
    if shape not in ("giant-line-then-good", "cr-line-ends"):  # an option's file: refused whole
        assert rows == 0 and f"--devices {path}: " in err, err


@pytest.mark.parametrize("shape", [*SHAPES, "sparse-64mb-then-good", "symlink-loop"])
@pytest.mark.parametrize("kind", ["lgwr", "nss", "rfs"])
def test_a_trace_file(tmp_path, bomb, kind, shape):
    """The trace collector follows the file from its start for 30 ticks at most: no exception
    but the OSError that makes its row unknown, and after a giant line, NULs or a hole, the
    slow write that follows is read."""
    trc = tmp_path / "PROD_lgwr_4242.trc"
    if shape == "sparse-64mb-then-good":
        with trc.open("wb") as f:
            f.truncate(64 << 20)
            f.seek(64 << 20)
            f.write(WARN)
    elif shape == "symlink-loop":
        trc.symlink_to(trc)
    else:
        _put(trc, shape, WARN, bomb)
    c = OracleTraceCollector({kind: str(trc), "from_start": True, "timezone": "UTC"})
    events: list[Event] = []
    unreadable = 0
    with bound(30):
        c.open()
        for _ in range(30):
            try:
                c.sample()
            except OSError:
                unreadable += 1
            events += c.take_events()
            if any(e.kind == "lgwr_slow_write" for e in events):
                break
        c.close()
    notes = [e.text for e in events if e.kind == "note"]
    assert all(len(n) < 600 and "\x1b" not in n for n in notes), notes
    if kind == "lgwr" and shape in ("giant-line-then-good", "nul-bytes", "sparse-64mb-then-good"):
        assert any(e.kind == "lgwr_slow_write" and e.value == 777 for e in events), notes
    if shape in ("fifo", "device", "symlink-loop"):  # a directory is where to look: legal
        assert notes or unreadable, "a file that cannot be read, and nothing said"
