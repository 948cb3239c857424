"""The archive directory is a trust boundary: whatever someone planted in it (a symlink, a hard
link, a FIFO, a device, a directory or a symlink loop where a table or a host directory goes,
the temporary names the writers used to make), nothing is written, truncated or deleted outside
``--dir``, and nothing waits on a FIFO.

Each case plants its trap in a directory of its own, beside a victim file (and directory) outside
the archive, and asserts: one ``sgmon:`` line naming the path and what was found there (none for
a planted temporary name: sgmon never uses such a name any more, so there is nothing to say), no
traceback, no hang (every run has a timeout), a sensible exit code, the whole tree outside the
archive byte for byte and link for link as it was, and the rest of the recording intact: every
other table of every host got its rows."""

from __future__ import annotations

import csv
import gzip
import json
import os
import shutil
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from inproc import tree

from sgmon.archive import FILE_RE, period_stamp
from sgmon.model import CollectorResult, Event, Field, Frame, Kind, Status
from sgmon.sinks.csvarchive import ArchiveWriter
from sgmon.sinks.findings import FindingsLog
from sgmon.sinks.statefile import StatePublisher
from sgmon.status import render, state_text
from sgmon.verdicts import Finding, Judgement

DAY_S = 86400.0
SPAN_S = 240.0
"""The most of a UTC day a test's recordings span (LONG's 200 simulated seconds, from now, and
its start).  Tables are named by the day (``--rotate 1d``): a run that crosses midnight writes
the next day's table, not the one its trap holds, and finds an archive made the day before."""
pytestmark = pytest.mark.timeout(180 + SPAN_S)

SGMON = [sys.executable, "-m", "sgmon"]
HEALTHY = ["--simulate", "healthy", "--speed", "10", "--duration", "30s", "--rotate", "1d"]
"""30 simulated ticks in about 3 s, one table per collector and day."""
LONG = ["--simulate", "healthy", "--speed", "40", "--duration", "200s", "--rotate", "1d"]
"""200 ticks: more than a pipe's 64 KiB of cpu rows, so a FIFO nobody reads would fill."""
START_STOP = ("sgmon: recording ", "sgmon: stopped;")
VICTIM = b"the user's own file, outside the archive\n"


def _stamp() -> str:
    """The name stamp of today's tables (``--rotate 1d``)."""
    return period_stamp(time.time(), 86400)


def _notes(stderr: str) -> list[str]:
    """The ``sgmon:`` lines but the start and stop lines."""
    return [
        x for x in stderr.splitlines() if x.startswith("sgmon: ") and not x.startswith(START_STOP)
    ]


def _rows(hdir: Path) -> dict[str, int]:
    """Collector -> data rows in its tables (every file of it, ``-2`` ones too)."""
    rows: dict[str, int] = {}
    for p in hdir.iterdir():
        m = FILE_RE.match(p.name)
        if not m or not p.is_file() or p.is_symlink():
            continue
        opener: Callable[..., object] = gzip.open if m["gz"] else open
        with opener(p, "rt", newline="") as fh:  # type: ignore[operator]
            n = len(list(csv.reader(fh))) - 1
        rows[m["collector"]] = rows.get(m["collector"], 0) + n
    return rows


@pytest.fixture(autouse=True)
def _clear_of_midnight() -> None:
    """Each test begins with its recordings' span of the day ahead: just after midnight when
    it would cross it (a wait of at most SPAN_S)."""
    left = DAY_S - time.time() % DAY_S
    if left < SPAN_S:
        time.sleep(left + 1.0)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Callable[[], Path]:
    """An archive of 30 ticks of the simulated pair, recorded once a day (its tables are named
    by it), copied by each case."""
    made: dict[str, Path] = {}

    def today() -> Path:
        day = _stamp()
        if day not in made:
            arch = tmp_path_factory.mktemp("template") / "arch"
            env = dict(os.environ, SGMON_RUNTIME_DIR=str(arch.parent / "run"))
            r = subprocess.run(
                [*SGMON, "record", "--dir", str(arch), "--quiet", *HEALTHY],
                capture_output=True, text=True, timeout=120, env=env,
            )  # fmt: skip
            assert r.returncode == 0, r.stderr
            made[day] = arch
        return made[day]

    return today


@dataclass
class Case:
    """An archive copied from the template, a victim file and directory outside it."""

    tmp: Path

    @property
    def arch(self) -> Path:
        return self.tmp / "arch"

    @property
    def victim(self) -> Path:
        return self.tmp / "outside" / "victim.csv"

    @property
    def elsewhere(self) -> Path:
        """A directory outside the archive, with the victim in it."""
        return self.tmp / "outside"

    def table(self, host: str = "primary", collector: str = "cpu") -> Path:
        return self.arch / host / f"{collector}_{_stamp()}.csv"

    def run(self, *args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
        """``sgmon record`` into the archive; nothing outside it may change."""
        return self.sgmon("record", "--dir", str(self.arch), *args, timeout=timeout)

    def sgmon(self, *args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
        skip = (self.arch, self.tmp / "run")
        before = tree(self.tmp, skip)
        env = dict(os.environ, SGMON_RUNTIME_DIR=str(self.tmp / "run"))
        r = subprocess.run(
            [*SGMON, *args], capture_output=True, text=True, timeout=timeout, env=env
        )
        assert "Traceback" not in r.stderr, r.stderr
        assert tree(self.tmp, skip) == before, "written or deleted outside --dir\n" + r.stderr
        return r

    def victim_is_untouched(self, links: int = 1, content: bytes = VICTIM) -> None:
        assert self.victim.read_bytes() == content
        assert self.victim.stat().st_nlink == links


@pytest.fixture
def case(tmp_path: Path, template: Callable[[], Path]) -> Case:
    shutil.copytree(template(), tmp_path / "arch", symlinks=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "victim.csv").write_bytes(VICTIM)
    return Case(tmp_path)


def _one_note(stderr: str, *words: str) -> str:
    notes = _notes(stderr)
    assert len(notes) == 1, stderr
    assert all(w in notes[0] for w in words), notes[0]
    return notes[0]


def _intact(before: dict[str, dict[str, int]], arch: Path, ticks: int, but: str = "") -> None:
    """Every table of every host (but ``host/collector``) got at least ``ticks`` more ticks'
    rows (the template holds 30 ticks)."""
    for host, counts in before.items():
        now = _rows(arch / host)
        for collector, n in counts.items():
            if f"{host}/{collector}" != but:
                assert now.get(collector, 0) >= n + n * ticks // 30, (host, collector, n, now)


def _counts(arch: Path) -> dict[str, dict[str, int]]:
    return {h: _rows(arch / h) for h in ("primary", "standby")}


# --- a table's name taken by something else -----------------------------------------------


def _symlink_out(c: Case, p: Path) -> None:
    c.victim.write_bytes(b"")  # empty: the old recorder wrote its header and rows into it
    p.unlink()
    p.symlink_to(c.victim)


def _dangling(c: Case, p: Path) -> None:
    p.unlink()
    p.symlink_to(c.elsewhere / "made-by-sgmon.csv")  # O_CREAT would make it outside


def _hard_link(c: Case, p: Path) -> None:
    c.victim.write_bytes(p.read_bytes())  # the right header: the old recorder appended to it
    p.unlink()
    os.link(c.victim, p)


def _fifo(c: Case, p: Path) -> None:
    p.unlink()
    os.mkfifo(p)


def _directory(c: Case, p: Path) -> None:
    p.unlink()
    p.mkdir()


def _loop(c: Case, p: Path) -> None:
    p.unlink()
    p.symlink_to(p.name)


def _device(c: Case, p: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("making a device node needs root")
    p.unlink()
    os.mknod(p, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # /dev/null: rows vanish unseen


TABLE_TRAPS = {
    "symlink-to-a-file-outside": (_symlink_out, "a symlink", HEALTHY),
    "dangling-symlink-outside": (_dangling, "a symlink", HEALTHY),
    "hard-link-to-a-file-outside": (_hard_link, "a hard link", HEALTHY),
    "fifo": (_fifo, "a FIFO", LONG),
    "directory": (_directory, "a directory", HEALTHY),
    "symlink-loop": (_loop, "a symlink", HEALTHY),
    "device": (_device, "a character device", HEALTHY),
}


@pytest.mark.parametrize("trap", list(TABLE_TRAPS))
def test_a_table_name_taken_by_something_else_is_left_alone(case: Case, trap: str) -> None:
    plant, found, args = TABLE_TRAPS[trap]
    before = _counts(case.arch)
    p = case.table()
    plant(case, p)
    victim = case.victim.read_bytes()
    kind = stat.S_IFMT(p.lstat().st_mode)
    r = case.run(*args)
    assert r.returncode == 0, r.stderr
    _one_note(r.stderr, str(p), found, "left alone")
    assert stat.S_IFMT(p.lstat().st_mode) == kind  # still what was planted
    case.victim_is_untouched(2 if trap.startswith("hard") else 1, victim)
    new = 150 if args is LONG else 25
    _intact(before, case.arch, new, but="primary/cpu")
    fresh = p.with_name(f"{p.stem}-2.csv")  # its rows went to a file beside it
    assert len(fresh.read_text().splitlines()) - 1 >= before["primary"]["cpu"] * new // 30


# --- a host directory's name taken by something else --------------------------------------


def _dir_symlink_out(c: Case, d: Path) -> None:
    shutil.rmtree(d)
    d.symlink_to(c.elsewhere, target_is_directory=True)


def _dir_loop(c: Case, d: Path) -> None:
    shutil.rmtree(d)
    d.symlink_to(d.name)


def _dir_file(c: Case, d: Path) -> None:
    shutil.rmtree(d)
    d.write_text("not a directory\n")


def _dir_fifo(c: Case, d: Path) -> None:
    shutil.rmtree(d)
    os.mkfifo(d)


HOST_TRAPS = {
    "symlink-to-a-directory-outside": (_dir_symlink_out, "a symlink"),
    "symlink-loop": (_dir_loop, "a symlink"),
    "file": (_dir_file, "a file"),
    "fifo": (_dir_fifo, "a FIFO"),
}


@pytest.mark.parametrize("trap", list(HOST_TRAPS))
def test_a_host_directory_taken_by_something_else_is_left_alone(case: Case, trap: str) -> None:
    plant, found = HOST_TRAPS[trap]
    before = _counts(case.arch)
    d = case.arch / "standby"
    plant(case, d)
    r = case.run(*HEALTHY)
    assert r.returncode == 3, r.stderr  # a host of which nothing was recorded
    _one_note(r.stderr, str(d), found, "nothing of standby is recorded")
    _intact({"primary": before["primary"]}, case.arch, 25)
    case.victim_is_untouched()
    meta = json.loads((case.arch / "meta.json").read_text())
    assert meta["hosts"]["standby"]["dir"] == "standby"  # from the first run, as it was


# --- retention: only plain tables of one name ----------------------------------------------


def _old(p: Path) -> None:
    old = time.time() - 30 * 86400
    os.utime(p, (old, old), follow_symlinks=False)


RETENTION_TRAPS = {
    "hard-link-keep": ("--keep", "a hard link"),
    "hard-link-compress": ("--compress", "a hard link"),
    "symlink-keep": ("--keep", "a symlink"),
    "fifo-keep": ("--keep", "a FIFO"),
}


@pytest.mark.parametrize("trap", list(RETENTION_TRAPS))
def test_retention_deletes_and_compresses_only_plain_tables(case: Case, trap: str) -> None:
    option, found = RETENTION_TRAPS[trap]
    hdir = case.arch / "primary"
    planted = hdir / "cpu_20200101_00.csv"
    if trap.startswith("hard"):
        case.victim.write_bytes(case.table().read_bytes())
        os.link(case.victim, planted)
    elif trap.startswith("symlink"):
        planted.symlink_to(case.victim)
    else:
        os.mkfifo(planted)
    _old(planted)
    ours = hdir / "disk_20200101_00.csv"  # an old table of its own: retention still works
    ours.write_bytes(case.table(collector="disk").read_bytes())
    _old(ours)
    victim = case.victim.read_bytes()
    extra = ["--keep", "2d"] if option == "--keep" else ["--compress"]
    r = case.run(*HEALTHY, *extra)
    assert r.returncode == 0, r.stderr
    _one_note(r.stderr, str(planted), found, "left alone")
    assert planted.is_symlink() or planted.exists()
    case.victim_is_untouched(2 if trap.startswith("hard") else 1, victim)
    if option == "--keep":
        assert not ours.exists()
    else:
        assert not ours.exists() and ours.with_name(ours.name + ".gz").is_file()


# --- the temporary names the writers used to make ------------------------------------------


def _pid_max() -> int:
    return int(Path("/proc/sys/kernel/pid_max").read_text())


def _plant_every_pid(directory: Path, victim: Path) -> None:
    """``.sgmon-write-test.<pid>`` and ``.meta.json.<pid>.tmp`` for every pid there can be."""
    for pid in range(1, _pid_max() + 1):
        (directory / f".sgmon-write-test.{pid}").symlink_to(victim)
        (directory / f".meta.json.{pid}.tmp").symlink_to(victim)


def test_every_pid_s_write_test_and_meta_temporary_planted(case: Case) -> None:
    """The old recorder truncated the victim (its write test) and replaced it with meta.json."""
    if _pid_max() > 1 << 17:
        pytest.skip("too many pids to plant a name for each")
    before = _counts(case.arch)
    _plant_every_pid(case.arch, case.victim)
    r = case.run(*HEALTHY)
    assert r.returncode == 0, r.stderr
    assert _notes(r.stderr) == [], r.stderr
    case.victim_is_untouched()
    assert stat.S_ISREG((case.arch / "meta.json").lstat().st_mode)
    json.loads((case.arch / "meta.json").read_text())
    _intact(before, case.arch, 25)


def test_the_planted_temporaries_of_this_process_in_process(tmp_path: Path) -> None:
    """The same names for this very pid (whatever pid_max is), through ArchiveWriter."""
    arch, victim = tmp_path / "arch", tmp_path / "victim"
    arch.mkdir()
    victim.write_bytes(VICTIM)
    for name in (f".sgmon-write-test.{os.getpid()}", f".meta.json.{os.getpid()}.tmp"):
        (arch / name).symlink_to(victim)
    said: list[str] = []
    w = ArchiveWriter(
        arch, lambda h: {"x": (Field("v", "", Kind.GAUGE, "v"),)}, 1.0, warn=said.append
    )
    for i in range(3):
        w(Frame("h", 1e9 + i, i, 1.0, {"x": CollectorResult(Status.OK, rows={"a": {"v": i}})}))
    w.close()
    assert said == [] and victim.read_bytes() == VICTIM and victim.stat().st_nlink == 1
    assert json.loads((arch / "meta.json").read_text())["hosts"]["h"]["dir"] == "h"


def test_planted_gzip_temporaries_are_never_written_through(case: Case) -> None:
    """``.<table>.gz.tmp``: the old --compress wrote gzip data into the victim."""
    before = _counts(case.arch)
    for host in ("primary", "standby"):
        for p in (case.arch / host).glob("*.csv"):
            (p.parent / f".{p.name}.gz.tmp").symlink_to(case.victim)
    r = case.run(*HEALTHY, "--compress")
    assert r.returncode == 0, r.stderr
    assert _notes(r.stderr) == [], r.stderr
    case.victim_is_untouched()
    gz = sorted((case.arch / "primary").glob("cpu_*.csv.gz"))
    assert gz and not list((case.arch / "primary").glob("cpu_*.csv"))
    _intact(before, case.arch, 25)


def test_an_import_never_writes_through_planted_names(case: Case) -> None:
    from oswlab import OLD_IOSTAT

    if _pid_max() > 1 << 17:
        pytest.skip("too many pids to plant a name for each")
    osw = case.tmp / "osw" / "oswiostat"
    osw.mkdir(parents=True)
    (osw / "db1_iostat_26.11.24.1100.dat").write_text(OLD_IOSTAT)
    shutil.rmtree(case.arch)
    case.arch.mkdir()
    _plant_every_pid(case.arch, case.victim)
    r = case.sgmon("import", "osw", str(osw.parent), "--dir", str(case.arch))
    assert r.returncode == 0, r.stderr
    assert _notes(r.stderr) == [], r.stderr
    case.victim_is_untouched()
    assert list((case.arch / "db1").glob("disk_*.csv"))


# --- meta.json ----------------------------------------------------------------------------


@pytest.mark.parametrize("trap", ["symlink", "fifo"])
def test_a_meta_json_that_is_not_a_plain_file_is_refused(case: Case, trap: str) -> None:
    meta = case.arch / "meta.json"
    case.victim.write_bytes(meta.read_bytes())  # valid metadata: the old recorder used it
    victim = case.victim.read_bytes()
    meta.unlink()
    if trap == "symlink":
        meta.symlink_to(case.victim)
    else:
        os.mkfifo(meta)
    tables = tree(case.arch, ())
    r = case.run(*HEALTHY)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1, r.stderr  # the usage error is the only line
    assert str(meta) in r.stderr and ("a symlink" if trap == "symlink" else "a FIFO") in r.stderr
    case.victim_is_untouched(content=victim)
    assert tree(case.arch, ()) == tables


# --- in-process: events.csv, findings.csv, the state file ----------------------------------


def test_an_events_fifo_never_stalls_the_recording(tmp_path: Path) -> None:
    arch = tmp_path / "arch"
    fields = {"x": (Field("v", "", Kind.GAUGE, "v"),)}
    said: list[str] = []
    w = ArchiveWriter(arch, lambda h: fields, 1.0, warn=said.append)
    (arch / "h").mkdir()
    os.mkfifo(arch / "h" / "events.csv")

    def record() -> None:
        for i in range(2000):  # 2,000 events of 100 bytes: a pipe holds 64 KiB
            ev = (Event(1e9 + i, "x", "note", "a", "n" * 100, 1.0),)
            rows = {"x": CollectorResult(Status.OK, rows={"a": {"v": i}})}
            w(Frame("h", 1e9 + i, i, 1.0, rows, ev))

    t = threading.Thread(target=record, daemon=True)
    t.start()
    t.join(60)
    assert not t.is_alive(), "the recording stalled on the FIFO"
    w.close()
    assert len(said) == 1 and "events.csv is a FIFO" in said[0], said
    assert stat.S_ISFIFO((arch / "h" / "events.csv").lstat().st_mode)
    assert len((arch / "h" / "events-2.csv").read_text().splitlines()) == 2001
    assert _rows(arch / "h")["x"] == 2000


def _judged(host: str) -> Judgement:
    f = Finding(f"r:{host}:s", "warn", host, "slow", [], [], "r", "000", 1e9)
    j = Judgement(Frame(host, 1e9, 1, 1.0, {}), None)  # type: ignore[arg-type]
    j.opened = (f,)
    return j


def test_a_findings_csv_symlinked_outside_is_left_alone(tmp_path: Path, capfd) -> None:
    victim = tmp_path / "victim.csv"
    victim.write_bytes(b"")
    (tmp_path / "arch" / "h").mkdir(parents=True)
    (tmp_path / "arch" / "h" / "findings.csv").symlink_to(victim)
    log = FindingsLog(tmp_path / "arch")
    j = _judged("h")
    log(j.frame, j)
    log.close()
    err = capfd.readouterr().err
    _one_note(err, "findings.csv is a symlink", "left alone")
    assert victim.read_bytes() == b""
    rows = (tmp_path / "arch" / "h" / "findings-2.csv").read_text().splitlines()
    assert len(rows) == 2 and ",open,warn," in rows[1]


def test_a_findings_log_beside_a_refused_host_directory_says_nothing_more(tmp_path: Path, capfd):
    """The recorder's sink met the host directory first; the findings log shares its word."""
    (tmp_path / "elsewhere").mkdir()
    said: list[str] = []
    w = ArchiveWriter(tmp_path / "arch", lambda h: {}, 1.0, warn=said.append)
    (tmp_path / "arch" / "h").symlink_to(tmp_path / "elsewhere")
    log = FindingsLog(w.dirs)
    j = _judged("h")
    w(j.frame, j)
    log(j.frame, j)
    log.close()
    w.close()
    assert len(said) == 1 and "is a symlink" in said[0] and "nothing of h" in said[0], said
    assert _notes(capfd.readouterr().err) == []
    assert list((tmp_path / "elsewhere").iterdir()) == []
    assert w.dirs.refused_hosts == {"h"}


def test_a_planted_state_temporary_is_never_written_through(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    victim = tmp_path / "victim"
    victim.write_bytes(VICTIM)
    (run / f".state-{os.getpid()}.txt.tmp").symlink_to(victim)
    pub = StatePublisher(run)
    j = _judged("h")
    pub(j.frame, j)
    assert victim.read_bytes() == VICTIM
    state = run / f"state-{os.getpid()}.txt"
    assert stat.S_ISREG(state.lstat().st_mode) and state.read_text().startswith("sgmon-state ")
    pub.close()
    assert not state.exists()


def _symlinked(tmp_path: Path) -> Path:
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    (tmp_path / "run").symlink_to(tmp_path / "elsewhere")
    return tmp_path / "run"


def _foreign(tmp_path: Path) -> Path:
    if os.getuid() != 0:
        pytest.skip("giving a directory to another user needs root")
    (tmp_path / "run").mkdir(mode=0o700)
    os.chown(tmp_path / "run", 65534, 65534)
    return tmp_path / "run"


def _open(tmp_path: Path) -> Path:
    (tmp_path / "run").mkdir()
    os.chmod(tmp_path / "run", 0o777)
    return tmp_path / "run"


RUNTIME_TRAPS: dict[str, tuple[Callable[[Path], Path], str]] = {
    "symlink": (_symlinked, "a symlink"),
    "another-user-s": (_foreign, "owned by uid 65534"),
    "open-to-others": (_open, "open to others (mode 0777)"),
}


@pytest.mark.parametrize("trap", list(RUNTIME_TRAPS))
def test_a_runtime_directory_that_is_not_private_is_not_used(
    tmp_path: Path, trap: str, capfd: pytest.CaptureFixture[str]
) -> None:
    make, found = RUNTIME_TRAPS[trap]
    run = make(tmp_path)
    before = tree(tmp_path, ())
    pub = StatePublisher(run)
    j = _judged("h")
    pub(j.frame, j)
    pub.close()
    _one_note(capfd.readouterr().err, str(run), found, "`sgmon status` does not show this run")
    assert tree(tmp_path, ()) == before  # nothing published, there or through it
    line = render("plain", directory=run)
    assert line == f"sgmon: {run} is {found}, not a private directory; not read"


def test_record_with_a_symlinked_runtime_directory_records_and_says_so(case: Case) -> None:
    before = _counts(case.arch)
    run = case.tmp / "run"
    (case.elsewhere / "run").mkdir(mode=0o700)
    run.symlink_to(case.elsewhere / "run")
    r = case.run(*HEALTHY)  # the tree outside (elsewhere/run included) must stay as it was
    assert r.returncode == 0, r.stderr
    _one_note(r.stderr, str(run), "a symlink", "`sgmon status` does not show this run")
    _intact(before, case.arch, 25)


def test_status_never_reads_a_state_file_through_a_symlink(tmp_path: Path) -> None:
    """A live-looking state planted outside and symlinked in is not this user's publisher."""
    from sgmon.readers.procfile import start_time

    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    now = time.time()
    host = {"role": "primary", "tag": "P", "time": now, "written": now, "interval": 1.0,
            "failing": [], "items": [("lfs", "99ms", "crit")]}  # fmt: skip
    planted = tmp_path / "planted.txt"
    planted.write_text(state_text(os.getpid(), start_time(os.getpid()) or "?", {"h": host}))
    (run / "state-1.txt").symlink_to(planted)
    assert render("plain", directory=run) == "sgmon: no sgmon running"
    assert (run / "state-1.txt").is_symlink() and planted.exists()


# --- reading back: what the recorder set aside, and what it never wrote ------------------


def test_events_written_beside_a_planted_events_csv_are_read_back(case: Case) -> None:
    """With events.csv a symlink to a file outside, the recorder leaves it alone and writes
    events-2.csv; reading the archive takes the events from events-2.csv and never reads
    through the symlink (the file outside holds an event of its own, which must not appear)."""
    from sgmon.archive import EVENT_COLUMNS
    from sgmon.hosts.replay import ReplaySource

    events = case.arch / "primary" / "events.csv"
    header = ",".join(EVENT_COLUMNS)
    planted = "2020-01-01T00:00:00.000+00:00,primary,cpu,note,,PLANTED OUTSIDE,,"
    case.victim.write_text(f"{header}\n{planted}\n")
    events.unlink(missing_ok=True)
    events.symlink_to(case.victim)
    r = case.run("--simulate", "log-switch-storm", "--onset", "5s", "--speed", "20",
                 "--duration", "40s", "--rotate", "1d")  # fmt: skip
    assert r.returncode == 0, r.stderr
    _one_note(r.stderr, str(events), "a symlink", "left alone")
    written = (case.arch / "primary" / "events-2.csv").read_text().splitlines()[1:]
    switches = sum(line.split(",")[3] == "log_switch" for line in written)
    assert switches >= 3, written  # a switch every 5 s
    src = ReplaySource(case.arch, speed=0)
    read = [e for f in src.frames("primary") for e in f.events]
    assert "PLANTED OUTSIDE" not in " ".join(e.text for e in read)
    assert sum(e.kind == "log_switch" for e in read) == switches, read[:5]


def test_a_table_symlinked_outside_is_not_read_back(case: Case) -> None:
    """A table planted as a symlink to rows outside the archive: reading the archive takes
    none of them (the rows name the host and would pass every other check)."""
    from sgmon.hosts.replay import ReplaySource

    p = case.table(collector="paging")
    case.victim.write_bytes(p.read_bytes())
    p.unlink()
    p.symlink_to(case.victim)
    src = ReplaySource(case.arch, speed=0)
    assert not [f for f in src.frames("primary") if f.rows("paging")]
