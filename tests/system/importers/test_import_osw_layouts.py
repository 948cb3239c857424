"""`sgmon import osw` on every layout OSWatcher writes, each report at its own time.

The excerpts here are written for these tests after the layouts of real archives (no public
archive found carries a licence that lets us ship it; docs/importing.md lists what the importer
was measured against):

- an Exadata storage cell's: one ``zzz ... Sample interval: 5 secconds`` line, the iostat
  banner, then ``iostat -t -x 5 720``'s reports, each headed ``Time: HH:MM:SS``, sysstat 7's
  columns (rsec/s, avgqu-sz, one await, svctm), bzip2'd once the hour is over;
- the classic layout with ``iostat -t`` sub-stamps, as sysstat 10-12 print them (locale date
  and time, 12-hour clock, ``S_TIME_FORMAT=ISO``);
- the AHF-bundled OSWatcher's banner lines, gzip'd;
- oswtop's summary lines, procps-ng's (``%Cpu(s)``, ``MiB Swap``) and procps 3.2's
  (``Cpu(s):  2.0%us``, ``Swap: ...k total``).
"""

from __future__ import annotations

import argparse
import bz2
import gzip
from pathlib import Path

import pytest
from importlab import rows, sgmon

from sgmon.importers import Imported, osw

CELL_HEAD = (
    "Device:         rrqm/s   wrqm/s   r/s   w/s   rsec/s   wsec/s avgrq-sz avgqu-sz   await"
    "  svctm  %util"
)
CELL_REPORTS = (  # Time:, avg-cpu, then sda's and sdc's iostat -x rows
    ("23:59:50", "0.74    0.00    0.43    0.35    0.00   98.48",
     "1.99    22.55  2.77 26.40  3378.88  1136.74   154.81     0.09   26.97   1.81   5.28",
     "1.56     0.01  2.11 19.01  3271.81   915.86   198.21     0.29   13.73   1.68   3.56"),
    ("23:59:55", "3.10    0.00    2.05   20.40    0.00   74.45",
     "0.00    20.00  4.00 30.00    64.00  1000.00    31.29     0.05    1.50   0.90   3.06",
     "0.00     0.00 640.00 12.00 327680.00  96.00   502.74   218.13  334.60   1.53  99.80"),
    ("00:00:00", "3.00    0.00    2.00   21.00    0.00   74.00",
     "0.00    18.00  2.00 28.00    32.00   900.00    31.07     0.04    1.20   0.80   2.40",
     "0.00     0.00 655.00 10.00 335360.00  80.00   504.42   201.50  513.20   1.50  99.75"),
    ("00:00:05", "1.00    0.00    1.00    0.50    0.00   97.50",
     "0.00    19.00  2.00 29.00    32.00   950.00    31.68     0.04    1.10   0.70   2.17",
     "0.00     0.00  30.00  8.00 15360.00  64.00   405.89     0.20    5.10   1.20   4.56"),
)  # fmt: skip


def _cell(reports: tuple[tuple[str, str, str, str], ...]) -> str:
    """An Exadata cell's OSWatcher iostat file holding ``reports``."""
    return (
        "zzz ***Wed Feb 29 23:59:50 UTC 2012 Sample interval: 5 secconds\n"
        "Linux 2.6.18-194.3.1.0.4.el5 (cel01) \t02/29/12\n\n"
        + "".join(
            f"Time: {t}\navg-cpu:  %user   %nice %system %iowait  %steal   %idle\n"
            f"           {cpu}\n\n{CELL_HEAD}\nsda               {sda}\nsdc               {sdc}\n\n"
            for t, cpu, sda, sdc in reports
        )
    )


CELL = _cell(CELL_REPORTS)
"""An hour's run cut to four reports around midnight: the first averages since boot; the
second and third show a data disk capped, queue 218 and await 513 ms."""
CELL_HELD = _cell(
    (
        *CELL_REPORTS[:3],
        ("00:00:05", *CELL_REPORTS[2][1:]),
        ("00:00:10", *CELL_REPORTS[1][1:]),
        ("00:00:15", *CELL_REPORTS[3][1:]),
    )
)
"""The same cap held for 20 s (four reports): a state, where two reports are a blip that no
finding names."""

NEW_HEAD = (
    "Device            r/s     w/s     rkB/s     wkB/s   rrqm/s   wrqm/s  %rrqm  %wrqm r_await"
    " w_await aqu-sz rareq-sz wareq-sz  svctm  %util"
)
CLASSIC_T = "Linux OSWbb v8.1.2 db1\n" + "".join(
    f"zzz ***Mon Nov 24 {zzz} UTC 2026\n{stamp}\n{NEW_HEAD}\nsdb             {row}\n\n"
    for zzz, stamp, row in (
        ("11:00:05", "11/24/26 11:00:07",
         ("0.00  640.00      0.00   5120.00     0.00     0.00   0.00   0.00    0.00  110.20  75.30"
         "     0.00     8.00   1.50  99.00")),
        ("11:00:35", "11/24/2026 11:00:37 AM",
         ("0.00  600.00      0.00   4800.00     0.00     0.00   0.00   0.00    0.00   90.00  60.00"
         "     0.00     8.00   1.50  98.00")),
        ("13:01:05", "2026-11-24T13:01:07+0000",
         ("0.00   10.00      0.00     80.00     0.00     0.00   0.00   0.00    0.00    1.00   0.01"
         "     0.00     8.00   0.50   0.50")),
        ("13:01:35", "11/24/2026 01:01:37 PM",
         ("0.00   12.00      0.00     96.00     0.00     0.00   0.00   0.00    0.00    1.10   0.02"
         "     0.00     8.00   0.50   0.60")),
    )
)  # fmt: skip
"""``iostat -xkt 1 3``'s last third per snapshot, the stamp in three of sysstat's formats."""

TOP_NEW = """Linux OSWbb v22.1.0AHF db2
zzz ***Mon Nov 24 11:00:05 UTC 2026
top - 11:00:06 up 9 min,  0 user,  load average: 8.96, 5.52, 2.36
Tasks: 106 total,   4 running, 102 sleeping,   0 stopped,   0 zombie
%Cpu(s): 12.5 us,  6.2 sy,  0.0 ni, 50.0 id, 31.3 wa,  0.0 hi,  0.0 si,  0.0 st
MiB Mem :  24105.6 total,  20005.8 free,    738.2 used,   3677.2 buff/cache
MiB Swap:   8192.0 total,   6144.0 free,   2048.0 used.  23367.3 avail Mem

  PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND
18997 oracle    20   0  115416  26820   8700 D  53.3   0.1   0:04.32 ora_lgwr_db2
"""
TOP_OLD = """Linux OSWbb v7.3.3
zzz ***Mon Nov 24 11:00:05 UTC 2026
top - 11:00:06 up 12 days,  3:14,  2 users,  load average: 1.02, 0.98, 0.91
Tasks: 512 total,   3 running, 509 sleeping,   0 stopped,   0 zombie
Cpu(s):  2.0%us,  1.0%sy,  0.0%ni, 96.9%id,  0.1%wa,  0.0%hi,  0.0%si,  0.0%st
Mem:  98765432k total, 87654321k used, 11111111k free,   123456k buffers
Swap:  8191992k total,        0k used,  8191992k free, 45678900k cached

  PID USER      PR  NI  VIRT  RES  SHR S %CPU %MEM    TIME+  COMMAND
 4242 oracle    20   0 10.2g 1.1g 1.0g S  1.3  1.2  12:34.56 ora_lgwr_db1
"""


def _archive(root: Path, tool: str, name: str, text: str, compress: str = "") -> Path:
    d = root / "archive" / f"osw{tool}"
    d.mkdir(parents=True, exist_ok=True)
    data = text.encode()
    if compress == "bz2":
        data = bz2.compress(data)
    elif compress == "gz":
        data = gzip.compress(data)
    path = d / (name + (f".{compress}" if compress else ""))
    path.write_bytes(data)
    return root


def _read(root: Path, tz: str | None = None, role: str = "") -> Imported:
    return osw.read(argparse.Namespace(archive=root, host=None, role=role, tz=tz))


def test_exadata_cell_run_every_report_at_its_own_time(tmp_path: Path) -> None:
    """One ``zzz`` and an hour of reports: the old importer took only the last table, at the
    ``zzz`` time, with a 30 s step and no word on stderr."""
    root = _archive(tmp_path, "iostat", "cel01_iostat_12.02.29.2300.dat", CELL, "bz2")
    imp = _read(root)
    frames = imp.frames["cel01"]
    stamps = [f.time for f in frames]
    first = 1330559995.0  # 2012-02-29 23:59:55 UTC: the since-boot report at :50 is skipped
    assert stamps == [first, first + 5, first + 10]  # through midnight into March 1st
    assert imp.interval == 5.0
    sdc = [f.collectors["disk"].rows["sdc"] for f in frames]
    assert [r["aqu_sz"] for r in sdc] == [218.13, 201.5, 0.2]
    assert [r["r_await"] for r in sdc] == [334.6, 513.2, 5.1]
    assert [r["svctm"] for r in sdc] == [1.53, 1.5, 1.2]
    assert sdc[0]["rkb_s"] == 163840.0  # rsec/s: 512-byte sectors
    assert len(imp.notes) == 1 and "first report of each continuous run skipped" in imp.notes[0]
    assert "since boot" in imp.notes[0]


def test_exadata_cell_run_names_the_capped_standby_disk(tmp_path: Path) -> None:
    root = _archive(tmp_path, "iostat", "cel01_iostat_12.02.29.2300.dat", CELL_HELD, "bz2")
    out = tmp_path / "arch"
    r = sgmon("import", "osw", str(root), "--dir", str(out), "--role=standby")
    assert r.returncode == 0, r.stderr
    assert "cel01 (5 samples)" in r.stdout
    assert r.stderr.count("\n") == 1 and "since boot" in r.stderr, r.stderr
    assert len(rows(out, "cel01", "disk")) == 10
    check = sgmon("check", "--from", str(out))
    assert "sdc" in check.stdout and "over 25 s" in check.stdout, check.stdout
    assert check.returncode == 1, check.stdout


def test_iostat_t_substamps_in_every_sysstat_format(tmp_path: Path) -> None:
    """The report's own stamp (2 s after the ``zzz`` line, as iostat's last third is) is its
    time, whichever format sysstat printed it in."""
    root = _archive(tmp_path, "iostat", "db1_iostat_26.11.24.1100.dat", CLASSIC_T, "gz")
    imp = _read(root)
    t0 = 1795518005.0  # Mon Nov 24 11:00:05 UTC 2026
    frames = imp.frames["db1"]
    assert [f.time - t0 for f in frames] == [2, 32, 7262, 7292]
    assert [f.collectors["disk"].rows["sdb"]["w_s"] for f in frames] == [640, 600, 10, 12]
    assert imp.notes == [] and imp.interval == 30.0


def test_top_cpu_tasks_and_swap_lines(tmp_path: Path) -> None:
    root = _archive(tmp_path, "top", "db2_top_26.11.24.1100.dat", TOP_NEW)
    _archive(tmp_path, "top", "db1_top_26.11.24.1100.dat", TOP_OLD, "gz")
    imp = _read(root)
    new = imp.frames["db2"][0].collectors
    assert new["cpu"].rows["all"] == {
        "load1": 8.96, "load5": 5.52, "load15": 2.36, "plist_sz": 106, "runq_sz": 4,
        "usr": 12.5, "sys": 6.2, "nice": 0.0, "idle": 50.0, "iowait": 31.3, "irq": 0.0,
        "soft": 0.0, "steal": 0.0,
    }  # fmt: skip
    assert new["paging"].rows["all"] == {"swpused": 25.0}
    old = imp.frames["db1"][0].collectors
    assert old["cpu"].rows["all"]["usr"] == 2.0 and old["cpu"].rows["all"]["idle"] == 96.9
    assert old["cpu"].rows["all"]["plist_sz"] == 512
    assert old["paging"].rows["all"] == {"swpused": 0.0}
    assert imp.frames["db2"][0].time == 1795518006.0  # top's own clock, 1 s after zzz


def test_mpstat_beats_top_for_the_same_figure(tmp_path: Path) -> None:
    mp = (
        "zzz ***Mon Nov 24 11:00:05 UTC 2026\n"
        "Linux 6.1 (db2) \t11/24/26 \t_x86_64_\t(2 CPU)\n\n"
        "11:00:06     CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest"
        "  %gnice   %idle\n"
        "11:00:07     all   40.00    0.00   10.00    0.00    0.00    0.00    0.00    0.00"
        "    0.00   50.00\n\n"
    )
    root = _archive(tmp_path, "top", "db2_top_26.11.24.1100.dat", TOP_NEW)
    _archive(tmp_path, "mpstat", "db2_mpstat_26.11.24.1100.dat", mp)
    imp = _read(root)
    assert len(imp.frames["db2"]) == 1
    cpu = imp.frames["db2"][0].collectors["cpu"].rows["all"]
    assert cpu["usr"] == 40.0 and cpu["iowait"] == 0.0 and cpu["load1"] == 8.96


def test_single_netstat_snapshot_says_why_it_gives_no_rows(tmp_path: Path) -> None:
    text = (
        "zzz ***Mon Nov 24 11:00:05 UTC 2026\n"
        "Kernel Interface table\n"
        "Iface      MTU    RX-OK RX-ERR RX-DRP RX-OVR    TX-OK TX-ERR TX-DRP TX-OVR Flg\n"
        "eth0      1500  1000000      0      0 0       900000      0      0      0 BMRU\n"
    )
    root = _archive(tmp_path, "netstat", "db3_netstat_26.11.24.1100.dat", text)
    imp = _read(root)
    assert any("one oswnetstat snapshot" in n and "needs two" in n for n in imp.notes), imp.notes


@pytest.mark.parametrize("compress", ["bz2", "gz", ""])
def test_ahf_banner_and_every_compression(tmp_path: Path, compress: str) -> None:
    text = "It is recommended to use System Health Monitor...\n" + CLASSIC_T.replace(
        "Linux OSWbb v8.1.2 db1", "Linux OSWbb v22.1.0AHF db1"
    )
    root = _archive(tmp_path, "iostat", "db1_iostat_26.11.24.1100.dat", text, compress)
    frames = _read(root).frames["db1"]
    assert [f.time - 1795518005.0 for f in frames] == [2, 32, 7262, 7292]


def test_continuous_vmstat_run_by_its_place(tmp_path: Path) -> None:
    """A cell's ``vmstat 5 720`` prints no stamps: each line after the first (since boot) is
    at its place in the run, the step the ``zzz`` line states."""
    text = (
        "zzz ***Wed Feb 29 11:01:52 UTC 2012 Sample interval: 5 secconds\n"
        "procs -----------memory---------- ---swap-- -----io---- --system-- -----cpu------\n"
        " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st\n"
        " 1  0      0 100000  20000 300000    0    0    10    20  100  200  1  1 98  0  0\n"
        " 9  4      0 100000  20000 300000    0    0  9000   400 5000 9000 30 10 20 40  0\n"
        " 2  0      0 100000  20000 300000    0    0    12    22  110  210  1  1 98  0  0\n"
    )
    root = _archive(tmp_path, "vmstat", "cel01_vmstat_12.02.29.1100.dat", text)
    frames = _read(root).frames["cel01"]
    t0 = 1330513312.0  # 2012-02-29 11:01:52 UTC
    assert [f.time - t0 for f in frames] == [5, 10]
    assert [f.collectors["cpu"].rows["all"]["runq_sz"] for f in frames] == [9, 2]


def test_tools_not_read_are_named(tmp_path: Path) -> None:
    """oswmeminfo and oswprvtnet hold figures no live field takes: one line names them."""
    root = _archive(tmp_path, "iostat", "db1_iostat_26.11.24.1100.dat", CLASSIC_T)
    _archive(tmp_path, "meminfo", "db1_meminfo_26.11.24.1100.dat", "zzz ***x\nMemTotal: 1 kB\n")
    _archive(tmp_path, "prvtnet", "db1_prvtnet_26.11.24.1100.dat", "zzz ***x\n")
    notes = _read(root).notes
    assert notes == [
        (
            f"{root / 'archive'}: not read: oswmeminfo (1 file(s)), oswprvtnet (1 file(s)); no "
            "live "
            "field takes their figures"
        )
    ]


@pytest.mark.parametrize("how", ["torn", "gz"])
def test_cell_file_cut_short_loses_its_last_report_only(tmp_path: Path, how: str) -> None:
    """An Exadata cell's hour is one block: a cut through it drops the report it went
    through, not the hour (a torn last line; a gzip stream cut short)."""
    name = "cel01_iostat_12.02.29.2300.dat"
    if how == "torn":
        root = _archive(tmp_path, "iostat", name, CELL.rstrip("\n")[:-20])
    else:
        root = _archive(tmp_path, "iostat", name, CELL, "gz")
        gz = next((root / "archive" / "oswiostat").iterdir())
        data = gz.read_bytes()
        gz.write_bytes(data[: len(data) * 9 // 10])
    imp = _read(root)
    frames = imp.frames["cel01"]
    assert 1 <= len(frames) <= 2 and frames[0].time == 1330559995.0, [f.time for f in frames]
    cut = [n for n in imp.notes if "last report dropped" in n]
    assert len(cut) == 1 and len(imp.notes) == 2, imp.notes  # and the since-boot one
