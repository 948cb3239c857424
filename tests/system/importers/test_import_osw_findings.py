"""`sgmon import osw` on the layouts real recordings showed (issue "Findings to trust on real
recordings"): each test fails on the importer before it.

The excerpts are written for these tests; where their shape comes from:

- ``mpstat``: sysstat's Linux output as the public "mpstat" article on wikimili.com shows it
  (``Linux 4.14.24.mptcp (hostname) 05/23/2018 _x86_64_ (2 CPU)``, one header ``03:51:19 PM
  CPU %usr %nice %sys %iowait %irq %soft %steal %guest %gnice %idle``, then a stamped ``all``
  row per interval), and sysstat 12.6.1's ``mpstat 1 3`` run on the test machine (the same
  shape, 24-hour clock); the ``zzz ***... Sample interval: 5 secconds`` line of an Exadata
  cell's OSWatcher, as in GitHub ``tmuth/plot-oswatcher``'s archive (see
  test_import_osw_layouts.py);
- ``iostat -xkt``: sysstat 12's report, each headed by its ``MM/DD/YY HH:MM:SS`` stamp line,
  then ``avg-cpu`` and the ``Device`` table (the columns of sysstat >= 12.x);
- ``top -b``: procps-ng's summary lines (``Tasks:``, ``%Cpu(s):``, ``MiB Mem :``, ``MiB
  Swap:``) and process list, as oswbb's ``top -b -n 1 | head -50`` keeps them;
- ``vmstat 1 3``: procps-ng's two header lines and three lines of numbers, the first one
  averages since boot, after thegeekdiary.com's "OSWatcher ... oswvmstat" sample layout.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from importlab import sgmon

from sgmon.importers import Imported, osw

T0 = 1795518000.0  # Mon Nov 24 11:00:00 UTC 2026
MP_HEAD = "CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  %gnice   %idle"


def _archive(root: Path, tool: str, name: str, text: str) -> Path:
    d = root / "archive" / f"osw{tool}"
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_text(text)
    return root


def _read(root: Path, tz: str | None = None) -> Imported:
    return osw.read(argparse.Namespace(archive=root, host=None, role="", tz=tz))


def _mp_row(t: float, usr: float) -> str:
    hms = f"{int(t // 3600 % 24):02d}:{int(t // 60 % 60):02d}:{int(t % 60):02d}"
    return (
        f"{hms}     all   {usr:5.2f}    0.00    3.00    1.00    0.00    0.50    0.00    0.00"
        f"    0.00   {95.5 - usr:5.2f}\n"
    )


def _mp_run(start: float, rows: int) -> str:
    """One ``zzz`` line, the banner, one header, then ``rows`` stamped rows 5 s apart."""
    zzz = (
        f"zzz ***Mon Nov 24 11:{int(start - T0) // 60:02d}:00 UTC 2026 Sample interval: 5 secconds"
    )
    head = f"11:{int(start - T0) // 60:02d}:00     {MP_HEAD}\n"
    return (
        f"{zzz}\nLinux 4.14.35-2047.518.4.2.el7uek.x86_64 (cel01) \t11/24/26 \t_x86_64_\t(48 CPU)"
        f"\n\n{head}" + "".join(_mp_row(start + 5 * (k + 1), 10.0 + k) for k in range(rows))
    )


def test_continuous_mpstat_every_row_its_own_sample(tmp_path: Path) -> None:
    """Two runs of 15 stamped rows: 30 samples at the rows' times.  Before: 2 samples, each
    at its header's time with the last row's figures."""
    text = _mp_run(T0, 15) + _mp_run(T0 + 120, 15)
    root = _archive(tmp_path, "mpstat", "cel01_mpstat_26.11.24.1100.dat", text)
    imp = _read(root)
    frames = imp.frames["cel01"]
    assert len(frames) == 30, [f.time - T0 for f in frames]
    assert [f.time - T0 for f in frames[:3]] == [5, 10, 15]
    assert [f.time - T0 for f in frames[15:17]] == [125, 130]
    assert [f.collectors["cpu"].rows["all"]["usr"] for f in frames[:3]] == [10.0, 11.0, 12.0]
    assert imp.interval == 5.0 and imp.notes == []


def test_mpstat_p_all_report_at_its_header_time_as_before(tmp_path: Path) -> None:
    """``mpstat -P ALL 1 2``: a header per report (stamped at the interval's start, its rows at
    the end): the block's last report is taken, at its header's time, as it always was."""
    text = (
        "zzz ***Mon Nov 24 11:00:00 UTC 2026\n"
        "Linux 6.1 (db2) \t11/24/26 \t_x86_64_\t(2 CPU)\n\n"
        f"11:00:01     {MP_HEAD}\n{_mp_row(T0 + 2, 20.0)}"
        + _mp_row(T0 + 2, 20.0).replace("  all", "    0")
        + f"\n11:00:02     {MP_HEAD}\n{_mp_row(T0 + 3, 30.0)}"
        + _mp_row(T0 + 3, 30.0).replace("  all", "    0")
        + "\nAverage:     all   25.00    0.00    3.00    1.00    0.00    0.50    0.00    0.00"
        "    0.00   70.50\n"
    )
    root = _archive(tmp_path, "mpstat", "db2_mpstat_26.11.24.1100.dat", text)
    (frame,) = _read(root).frames["db2"]
    assert frame.time == T0 + 2
    assert frame.collectors["cpu"].rows["all"]["usr"] == 30.0
    assert frame.collectors["cpu"].rows["cpu0"]["usr"] == 30.0


IO_HEAD = (
    "Device            r/s     w/s     rkB/s     wkB/s   rrqm/s   wrqm/s  %rrqm  %wrqm r_await"
    " w_await aqu-sz rareq-sz wareq-sz  svctm  %util"
)


def _io_report(stamp: str, w_s: float) -> str:
    return (
        f"{stamp}\navg-cpu:  %user   %nice %system %iowait  %steal   %idle\n"
        "           1.00    0.00    1.00   20.00    0.00   78.00\n\n"
        f"{IO_HEAD}\nsdb             0.00  {w_s:6.2f}      0.00  {w_s * 8:8.2f}     0.00     0.00"
        "   0.00   0.00    0.00   90.00  60.00     0.00     8.00   1.50  98.00\n\n"
    )


def test_iostat_reports_without_a_zzz_line_at_their_own_stamps(tmp_path: Path) -> None:
    """A file whose iostat reports come before any ``zzz`` line (or with none at all): each
    at its own stamp, in the hour the file's name says.  Before: skipped, no word."""
    text = "Linux OSWbb v8.1.2 db1\n" + "".join(
        _io_report(f"11/24/26 11:00:{s:02d}", w) for s, w in ((7, 600.0), (37, 640.0))
    )
    root = _archive(tmp_path, "iostat", "db1_iostat_26.11.24.1100.dat", text)
    imp = _read(root, tz="UTC")
    frames = imp.frames["db1"]
    assert [f.time - T0 for f in frames] == [7, 37]
    assert [f.collectors["disk"].rows["sdb"]["w_s"] for f in frames] == [600.0, 640.0]
    assert imp.notes == []


def test_reports_before_the_first_zzz_take_its_zone(tmp_path: Path) -> None:
    text = (
        _io_report("Time: 11:00:07", 600.0)
        + "zzz ***Mon Nov 24 11:00:35 UTC 2026\n"
        + _io_report("11/24/26 11:00:37", 640.0)
    )
    root = _archive(tmp_path, "iostat", "db1_iostat_26.11.24.1100.dat", text)
    imp = _read(root)  # no --tz: the zzz line's UTC
    assert [f.time - T0 for f in imp.frames["db1"]] == [7, 37] and imp.notes == []


def test_reports_without_a_zzz_line_or_a_stamp_are_refused_in_one_line(tmp_path: Path) -> None:
    text = _io_report("", 600.0).lstrip("\n") + _io_report("", 640.0)
    root = _archive(tmp_path, "iostat", "db1_iostat_26.11.24.1100.dat", text)
    out = tmp_path / "arch"
    r = sgmon("import", "osw", str(root), "--dir", str(out))
    assert "before the first zzz line, with no time of their own; not read" in r.stderr
    assert r.stderr.count("before the first zzz line") == 1, r.stderr


TOP_HEAD = "top - 11:00:06 up 9 min,  0 user,  load average: 8.96, 5.52, 2.36\n"
TOP_SUMMARY = (
    "Tasks: 106 total,   4 running, 102 sleeping,   0 stopped,   0 zombie\n"
    "%Cpu(s): 12.5 us,  6.2 sy,  0.0 ni, 50.0 id, 31.3 wa,  0.0 hi,  0.0 si,  0.0 st\n"
    "MiB Mem :  24105.6 total,  20005.8 free,    738.2 used,   3677.2 buff/cache\n"
    "MiB Swap:   8192.0 total,   6144.0 free,   2048.0 used.  23367.3 avail Mem\n\n"
)
TOP_PROCS = (
    "  PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND\n"
    "18997 oracle    20   0  115416  26820   8700 D  53.3   0.1   0:04.32 ora_lgwr_db2\n"
)


def test_top_block_that_lost_its_top_line_is_read_or_named(tmp_path: Path) -> None:
    """Four snapshots: whole; without its ``top -`` line (read at the zzz time); a process list
    only (refused, one line); whole.  Before: the second and third gave empty samples and no
    word ("imported 0 rows ... (1 samples)" for an archive of such blocks)."""
    text = "".join(
        f"zzz ***Mon Nov 24 11:{m} UTC 2026\n{body}"
        for m, body in (
            ("00:05", TOP_HEAD + TOP_SUMMARY + TOP_PROCS),
            ("00:35", TOP_SUMMARY + TOP_PROCS),
            ("01:05", TOP_PROCS),
            ("01:35", TOP_HEAD.replace("11:00:06", "11:01:36") + TOP_SUMMARY + TOP_PROCS),
        )
    )
    root = _archive(tmp_path, "top", "db2_top_26.11.24.1100.dat", text)
    imp = _read(root)
    frames = imp.frames["db2"]
    assert [f.time - T0 for f in frames] == [6, 35, 96]
    headless = frames[1].collectors
    assert headless["cpu"].rows["all"]["iowait"] == 31.3
    assert headless["cpu"].rows["all"]["runq_sz"] == 4
    assert headless["paging"].rows["all"] == {"swpused": 25.0}
    path = root / "archive" / "oswtop" / "db2_top_26.11.24.1100.dat"
    said = f"{path}: 1 block(s) not readable, first at 'Mon Nov 24 11:01:05 UTC 2026'; skipped"
    assert imp.notes == [said]


def test_top_of_process_lists_only_is_not_a_silent_empty_import(tmp_path: Path) -> None:
    text = "zzz ***Mon Nov 24 11:00:05 UTC 2026\n" + TOP_PROCS
    root = _archive(tmp_path, "top", "db2_top_26.11.24.1100.dat", text)
    out = tmp_path / "arch"
    r = sgmon("import", "osw", str(root), "--dir", str(out))
    assert "(1 samples)" not in r.stdout, r.stdout
    assert r.stderr.count("\n") == 1 and "incomplete; dropped" in r.stderr, r.stderr


VM_HEAD = (
    "procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----\n"
    " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st\n"
)
VM_BOOT = " 1  0      0 100000  20000 300000    0    0    10    20  100  200  1  1 98  0  0\n"
VM_BUSY = " 9  4      0 100000  20000 300000    0    0  9000   400 5000 9000 30 10 20 40  0\n"


def test_vmstat_block_with_damaged_rows_never_imports_its_since_boot_row(
    tmp_path: Path,
) -> None:
    """``vmstat 1 3`` whose second and third lines are damaged (one cut short, one garbled):
    no sample from that block, and one line counts the damaged rows.  Before: its first line
    (averages since boot, run queue 1) was the snapshot's sample, with no word."""
    damaged = VM_BOOT + " 9  4      0 100000  20000 3000\n" + " 9  4  ###  garbled\n"
    text = "".join(
        f"zzz ***Mon Nov 24 11:00:{s} UTC 2026\n{VM_HEAD}{body}"
        for s, body in (("05", VM_BOOT + VM_BUSY + VM_BUSY), ("35", damaged))
    )
    text += f"zzz ***Mon Nov 24 11:01:05 UTC 2026\n{VM_HEAD}{VM_BOOT}{VM_BUSY}{VM_BUSY}"
    root = _archive(tmp_path, "vmstat", "db1_vmstat_26.11.24.1100.dat", text)
    imp = _read(root)
    frames = imp.frames["db1"]
    assert [f.time - T0 for f in frames] == [5, 65]
    assert [f.collectors["cpu"].rows["all"]["runq_sz"] for f in frames] == [9, 9]
    assert len(imp.notes) == 1 and "2 damaged row(s) skipped" in imp.notes[0], imp.notes


def test_continuous_vmstat_run_keeps_rows_after_a_damaged_one_in_place(tmp_path: Path) -> None:
    text = (
        "zzz ***Mon Nov 24 11:00:00 UTC 2026 Sample interval: 5 secconds\n"
        + VM_HEAD
        + VM_BOOT
        + VM_BUSY
        + " 9  4      0 1000\n"
        + VM_BUSY.replace(" 9  4", " 7  4")
    )
    root = _archive(tmp_path, "vmstat", "cel01_vmstat_26.11.24.1100.dat", text)
    imp = _read(root)
    frames = imp.frames["cel01"]
    assert [f.time - T0 for f in frames] == [5, 15]  # the damaged row's place (10 s) kept
    assert [f.collectors["cpu"].rows["all"]["runq_sz"] for f in frames] == [9, 7]
    assert any("1 damaged row(s) skipped" in n for n in imp.notes), imp.notes
