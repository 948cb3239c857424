"""`sgmon import sar` on sa files that the real sadc wrote, read back through the real sadf.

The loaded file: sadc -S XDISK samples every second while eight O_DIRECT|O_DSYNC writers queue
on a loop device whose backing device is capped at 100 write IOPS (seed 003's standby).  The
import must carry sar's own figures for each interval (compared with ``sadf -d`` of the same
file), and ``sgmon check --from`` must name that device as the standby's, as it does live.
The bad inputs are real files damaged the way files get damaged: cut short, written by another
sysstat version (its header says so), not a sysstat file at all.
"""

from __future__ import annotations

import calendar
import csv
import itertools
import json
import os
import subprocess
import time
from pathlib import Path

import nslab
import pytest
from importlab import rows, sgmon, unexplained_findings

from sgmon import registry
from sgmon.archive import read_meta
from sgmon.importers.frames import NOT_IMPORTED

pytestmark = [pytest.mark.root, pytest.mark.slow]

SADC = "/usr/lib/sysstat/sadc"
COLLECTORS = ("cpu", "paging", "disk", "netdev", "tcp")


def sadc(path: Path, samples: int) -> None:
    """``samples`` one-second samples (the first is the baseline sar shows no line for)."""
    subprocess.run([SADC, "-S", "XALL", "1", str(samples), str(path)], check=True, timeout=60)


def sadf_d(path: Path, *activity: str) -> list[dict[str, str]]:
    """``sadf -d`` (sar's figures, one CSV line per interval and device) as dicts; what it
    prints of a cut file too (it exits 2 there)."""
    out = subprocess.run(
        ["sadf", "-d", str(path), "--", *activity],
        capture_output=True,
        text=True,
        env={**os.environ, "LC_ALL": "C"},
    ).stdout
    lines = out.splitlines()
    head = lines[0].removeprefix("# ").split(";")
    data = [ln.split(";") for ln in lines[1:] if ln and not ln.startswith("#")]
    return [dict(zip(head, d, strict=True)) for d in data if len(d) == len(head)]


def stamp(sadf_time: str) -> str:
    """``2026-11-24 11:36:41 UTC`` -> the archive's ``2026-11-24T11:36:41.000+00:00``."""
    day, hms, _ = sadf_time.split()
    return f"{day}T{hms}.000+00:00"


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An sa file of 5 intervals taken while the capped loop device queues; also the device."""
    nslab.require_root("losetup", "dd", "timeout", "sadf", SADC)
    path = tmp_path_factory.mktemp("sa") / "sa24"
    sadc(path.with_suffix(".quiet"), 3)  # the same host just before: no device queues
    with nslab.throttled_loop(write_iops=100) as loop, nslab.disk_load(loop, 8, 12):
        time.sleep(1.5)  # let the queue fill
        sadc(path, 6)
        path.with_suffix(".dev").write_text(loop.name)
    return path


def test_loaded_file_matches_sadf_and_names_the_standby_device(
    loaded: Path, tmp_path: Path
) -> None:
    dev = loaded.with_suffix(".dev").read_text()
    out = tmp_path / "arch"
    r = sgmon("import", "sar", str(loaded), "--dir", str(out), "--host=stby", "--role=standby")
    assert r.returncode == 0, r.stderr
    assert r.stderr == "", r.stderr  # a healthy file gives no note
    ours = {(d["time"], d["instance"]): d for d in rows(out, "stby", "disk")}
    theirs = [d for d in sadf_d(loaded, "-d") if d["DEV"] == dev]
    assert len(theirs) == 5, theirs
    for sar in theirs:
        row = ours[(stamp(sar["timestamp"]), dev)]
        tps, util = float(sar["tps"]), float(sar["%util"])
        assert float(row["wkb_s"]) == pytest.approx(float(sar["wkB/s"]), abs=0.006)
        assert float(row["aqu_sz"]) == pytest.approx(float(sar["aqu-sz"]), abs=0.006)
        assert float(row["util_pct"]) == pytest.approx(util, abs=0.006)
        assert float(row["w_await_ms"]) == pytest.approx(float(sar["await"]), abs=0.006)
        assert float(row["svctm_ms"]) == pytest.approx(util * 10 / tps, rel=0.01)
        if float(sar["rkB/s"]) == 0 and float(sar["dkB/s"]) == 0:  # writes only: w/s is tps
            assert float(row["w_s"]) == pytest.approx(tps, abs=0.006)
            assert row["r_await_ms"] == ""  # no reads, no read average (as live)
    # the scenario really is seed 003's signature
    worst = max(theirs, key=lambda d: float(d["aqu-sz"]))
    svctm = 10 * float(worst["%util"]) / float(worst["tps"])
    assert float(worst["aqu-sz"]) > 4 and float(worst["await"]) > 5 * svctm, worst
    cpu = {(d["time"], d["instance"]) for d in rows(out, "stby", "cpu")}
    assert len({t for t, _ in cpu}) == 5 and all((t, "all") in cpu for t, _ in cpu)
    replay = sgmon("replay", "--summary", str(out))
    assert replay.returncode == 0, replay.stderr
    check = sgmon("check", "--from", str(out))
    assert dev in check.stdout and "standby I/O saturated" in check.stdout, check.stdout


def test_two_hosts_in_one_archive(loaded: Path, tmp_path: Path) -> None:
    """The primary's file and the standby's, imported one after the other into one directory:
    each host keeps its own step and sources, and check reads both."""
    dev = loaded.with_suffix(".dev").read_text()
    out = tmp_path / "arch"
    quiet = loaded.with_suffix(".quiet")
    for f, host, role in ((quiet, "prim", "primary"), (loaded, "stby", "standby")):
        r = sgmon("import", "sar", str(f), "--dir", str(out), f"--host={host}", f"--role={role}")
        assert r.returncode == 0, r.stderr
    meta = read_meta(out)
    assert meta is not None
    assert {h: (m["role"], m["interval"]) for h, m in meta["hosts"].items()} == {
        "prim": ("primary", 1.0),
        "stby": ("standby", 1.0),
    }
    assert all("disk" in m["sources"] for m in meta["hosts"].values())
    summary = sgmon("replay", "--summary", str(out))
    head = summary.stdout.splitlines()[0]
    # one tick per interval sar prints (2 and 5 unless sadc, late on a loaded machine, wrote
    # two records within one second: sar's own times then have one line fewer)
    ticks = {f: len({row["timestamp"] for row in sadf_d(f, "-u")}) for f in (quiet, loaded)}
    assert f"prim (primary, {ticks[quiet]} ticks)" in head, (head, ticks)
    assert f"stby (standby, {ticks[loaded]} ticks)" in head, (head, ticks)
    check = sgmon("check", "--from", str(out))
    assert f"stby disk {dev}" in check.stdout and "standby I/O saturated" in check.stdout, (
        check.stdout
    )


def test_provenance_names_a_source_for_declared_fields_only(loaded: Path, tmp_path: Path) -> None:
    out = tmp_path / "arch"
    assert sgmon("import", "sar", str(loaded), "--dir", str(out)).returncode == 0
    meta = read_meta(out)
    assert meta is not None
    host = os.uname().nodename  # the file's own nodename, as no --host was given
    sources = meta["hosts"][host]["sources"]
    assert meta["hosts"][host]["interval"] == 1.0
    for collector in COLLECTORS:
        declared = {f.name for f in registry.load(collector).fields}
        assert set(sources[collector]) <= declared, set(sources[collector]) - declared
        filled = {k for d in rows(out, host, collector) for k, v in d.items() if v != ""} - {
            "time",
            "host",
            "instance",
        }
        cols = {f.column: f.name for f in registry.load(collector).fields}
        assert {cols[c] for c in filled} <= set(sources[collector]), collector
    assert sources["disk"]["aqu_sz"] == "sadf -j: disk.aqu-sz"
    assert sources["disk"]["rrqm_s"].startswith("not imported:")
    assert "net-tcp.iseg/oseg" in sources[NOT_IMPORTED]


def test_truncated_file_keeps_the_readable_records_with_one_line(
    loaded: Path, tmp_path: Path
) -> None:
    whole = loaded.read_bytes()
    cut = tmp_path / "sa24"
    cut.write_bytes(whole[: len(whole) - 700])  # into the last record
    out = tmp_path / "arch"
    r = sgmon("import", "sar", str(cut), "--dir", str(out), "--host", "h")
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("sgmon: ") and "truncated" in lines[0], lines
    readable = {d["timestamp"] for d in sadf_d(cut, "-q")}
    assert len(readable) == 4
    assert {d["time"] for d in rows(out, "h", "cpu")} == {stamp(t) for t in readable}
    events = (out / "h" / "events.csv").read_text()
    assert ",sar,gap," in events and "ends early" in events


def test_file_of_another_sysstat_version_is_one_line(loaded: Path, tmp_path: Path) -> None:
    """A header that says sysstat 11.6.5 (format 0x2173) over a 12.6 body: sadf refuses it, the
    importer tries sadf -c, which cannot convert it, and says so in one line."""
    data = bytearray(loaded.read_bytes())
    data[2:4] = (0x2173).to_bytes(2, "little")
    data[4:7] = bytes([11, 6, 5])
    old = tmp_path / "sa11"
    old.write_bytes(bytes(data))
    r = sgmon("import", "sar", str(old), "--dir", str(tmp_path / "arch"))
    assert r.returncode == 2
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("sgmon: "), lines
    assert "11.6.5" in lines[0] and "sadf -c" in lines[0], lines
    assert not (tmp_path / "arch").exists()


def test_bad_file_beside_good_ones_loses_nothing(loaded: Path, tmp_path: Path) -> None:
    bad = tmp_path / "sa01"
    bad.write_text("not a sysstat file\n")
    out = tmp_path / "arch"
    r = sgmon("import", "sar", str(bad), str(loaded), "--dir", str(out), "--host", "h")
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"sgmon: {bad}: sadf: Invalid"), lines
    assert len({d["time"] for d in rows(out, "h", "cpu")}) == 5
    missing = sgmon("import", "sar", str(bad), "--dir", str(tmp_path / "other"))
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1, missing.stderr


@pytest.mark.parametrize("pause", [0.0, 2.5])
def test_restart_marker_becomes_an_event(tmp_path: Path, pause: float) -> None:
    """The restart is stamped in the second of the record before it; a slow restart (``pause``)
    leaves records more than 1.5 steps apart, which the restart explains: no gap besides."""
    nslab.require_root("sadf", SADC)
    path = tmp_path / "sa24"
    sadc(path, 2)
    subprocess.run([SADC, str(path)], check=True, timeout=30)  # the boot-time dummy record
    time.sleep(pause)
    sadc(path, 2)
    sar = subprocess.run(["sar", "-q", "-f", str(path)], capture_output=True, text=True).stdout
    assert "LINUX RESTART" in sar
    out = tmp_path / "arch"
    r = sgmon("import", "sar", str(path), "--dir", str(out), "--host", "h")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    with open(out / "h" / "events.csv") as f:
        events = list(csv.DictReader(f))
    assert [e["kind"] for e in events] == ["restart"], events
    assert len({d["time"] for d in rows(out, "h", "cpu")}) == 2


def test_gap_between_runs_is_an_event(tmp_path: Path) -> None:
    """sadc stopped for a while (a cron run missed): the record after the pause averages over
    it, and a gap event says how long no record was taken."""
    nslab.require_root("sadf", SADC)
    path = tmp_path / "sa24"
    sadc(path, 3)
    time.sleep(4)
    sadc(path, 3)
    out = tmp_path / "arch"
    r = sgmon("import", "sar", str(path), "--dir", str(out), "--host", "h")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    with open(out / "h" / "events.csv") as f:
        events = list(csv.DictReader(f))
    # sadf's own stamps: the pause, and any record a loaded machine held back past a second
    # late (whole-second stamps make a 1.01 s record read 2 s, which is no gap)
    times = [
        calendar.timegm(time.strptime(d["timestamp"], "%Y-%m-%d %H:%M:%S UTC"))
        for d in sadf_d(path, "-u")
    ]
    pauses = [round(b - a) for a, b in itertools.pairwise(times) if b - a > 2.5]
    said = [int(e["text"].split()[4]) for e in events]  # "no sar record for N s in sa24"
    assert [e["kind"] for e in events] == ["gap"] * len(pauses) and said == pauses, events
    assert sum(4 <= n <= 7 for n in said) == 1, events


def test_file_from_another_host_names_devices_by_its_numbers(tmp_path: Path) -> None:
    """A file whose nodename is another host's (sadc run under another UTS name): sadf must not
    name its devices after this host's; ``--devices`` (that host's /proc/diskstats, or lsblk's
    MAJ:MIN KNAME) gives the kernel names.  The file is this machine's, so the right names are
    what sadf says when it reads this host's /sys/dev/block."""
    nslab.require_root("sadf", "unshare", "lsblk", SADC)
    path = tmp_path / "sa24"
    cmd = f"hostname farhost && exec {SADC} -S XDISK 1 3 {path}"
    subprocess.run(["unshare", "--uts", "sh", "-c", cmd], check=True, timeout=30)
    truth = {d["DEV"] for d in sadf_d(path, "-d")}
    out = tmp_path / "plain"
    r = sgmon("import", "sar", str(path), "--dir", str(out))
    assert r.returncode == 0, r.stderr
    plain = {d["instance"] for d in rows(out, "farhost", "disk")}
    numbered = {n for n in plain if n.startswith("dev")}
    assert plain - numbered <= truth  # fixed majors (loop, sd) keep their names
    if numbered:  # this machine's disk has a dynamic major (virtio, nvme): one line says so
        assert r.stderr.count("\n") == 1 and "--devices" in r.stderr, r.stderr
    (tmp_path / "diskstats").write_text(Path("/proc/diskstats").read_text())
    lsblk = subprocess.run(["lsblk", "-rno", "MAJ:MIN,KNAME"], capture_output=True, text=True)
    (tmp_path / "lsblk").write_text(lsblk.stdout)
    for table in ("diskstats", "lsblk"):
        out = tmp_path / f"arch-{table}"
        r = sgmon("import", "sar", str(path), "--dir", str(out), f"--devices={tmp_path / table}")
        assert r.returncode == 0 and r.stderr == "", r.stderr
        assert {d["instance"] for d in rows(out, "farhost", "disk")} == truth
    bad = sgmon("import", "sar", str(path), "--dir", str(out), f"--devices={path}")
    assert bad.returncode == 2 and bad.stderr.startswith("sgmon: --devices"), bad.stderr
    not_dir = sgmon("import", "sar", str(path), "--dir", str(tmp_path / "lsblk" / "x"))
    assert not_dir.returncode == 2 and not_dir.stderr.count("\n") == 1, not_dir.stderr
    assert not_dir.stderr.startswith("sgmon: cannot create"), not_dir.stderr


def test_healthy_file_gives_no_finding_above_info(tmp_path: Path) -> None:
    """A quiet host's few seconds: nothing queues, so nothing above info (but a CPU saturation
    the sample itself shows: this machine is shared, see tests/importlab.py)."""
    nslab.require_root("sadf", SADC)
    path = tmp_path / "sa24"
    sadc(path, 6)
    out = tmp_path / "arch"
    assert sgmon("import", "sar", str(path), "--dir", str(out), "--host", "h").returncode == 0
    assert unexplained_findings(out) == []


def test_json_of_sadf_is_what_the_mapping_expects(loaded: Path) -> None:
    """Guard against a sysstat whose JSON names moved: the keys the importer reads are there."""
    from sgmon.importers.sar import SAR_OPTIONS

    doc = json.loads(
        subprocess.run(
            ["sadf", "-j", str(loaded), "--", *SAR_OPTIONS], capture_output=True, check=True
        ).stdout
    )
    s = doc["sysstat"]["hosts"][0]["statistics"][0]
    assert {"cpu-load", "queue", "paging", "swap-pages", "memory", "disk", "network"} <= set(s)
    assert {"aqu-sz", "await", "util-percent", "tps", "rkB", "wkB", "areq-sz"} <= set(s["disk"][0])
    assert {"net-dev", "net-edev", "net-tcp", "net-etcp"} <= set(s["network"])
