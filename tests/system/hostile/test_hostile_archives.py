"""A damaged archive is read around the damage.  A corpus of damaged copies of one recording,
generated here (the large ones by code): each is read by ``replay --summary``, ``check --from``
and ``report`` in a fresh interpreter under a timeout, and every run must end without a
traceback, say what it skipped and where in ``sgmon:`` lines, and keep every row the damage did
not touch.  The 200 MB field and the line of 200 M commas are read with bounded memory."""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from importlab import sgmon

from sgmon.archive import decode_row, header
from sgmon.hosts.replay import ReplaySource
from sgmon.model import CollectorResult, Event, Field, Frame, Kind, Status
from sgmon.sinks.csvarchive import ArchiveWriter

pytestmark = pytest.mark.timeout(300)

HOST = "prim"
TICKS = 40
T0 = 1_790_000_000.0  # 2026-09-21, on a whole second
FIELDS = (
    Field("w_await", "ms", Kind.GAUGE, "write wait", warn=20, crit=100),
    Field("writes", "/s", Kind.RATE, "writes per second"),
    Field("hist", "ms", Kind.HISTOGRAM, "write time histogram"),
    Field("note", "", Kind.TEXT, "free text"),
)
SCHEMA = {"disk": FIELDS}


def _frame(i: int, host: str = HOST) -> Frame:
    row = {"w_await": 1.5 + i % 3, "writes": 100 + i, "hist": [[1, 10], [4, i]], "note": "ok"}
    ev = (Event(T0 + i, "disk", "note", "sdb", f"event {i}", float(i)),) if i % 10 == 0 else ()
    rows = {"disk": CollectorResult(Status.OK, rows={"sdb": row})}
    return Frame(host, T0 + i, i + 1, 1.0, rows, ev, "primary")


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("base") / "arch"
    w = ArchiveWriter(root, lambda h: SCHEMA, 1.0)
    for i in range(TICKS):
        w(_frame(i))
    w.close()
    return root


def _table(root: Path) -> Path:
    return next((root / HOST).glob("disk_*.csv"))


def _row(t: str, *, host: str = HOST, w_await: str = "1.5", bucket: str = "3") -> str:
    cells = [t, host, "sdb", w_await, "100"] + ["0"] * 28 + ["ok"]
    cells[5 + 10] = bucket  # hist_le_1024_us
    return ",".join(cells) + "\n"


def _append(path: Path, data: bytes) -> None:
    with path.open("ab") as f:
        f.write(data)


def _insert(path: Path, line_no: int, text: bytes) -> None:
    lines = path.read_bytes().split(b"\n")
    lines.insert(line_no, text)
    path.write_bytes(b"\n".join(lines))


def _meta(root: Path, change: Callable[[dict], object]) -> None:
    meta = json.loads((root / "meta.json").read_text())
    change(meta)
    (root / "meta.json").write_text(json.dumps(meta))


def _cr(root: Path) -> None:
    p = _table(root)
    lines = p.read_bytes().split(b"\n")
    lines[5] = lines[5][:30] + b"\r" + lines[5][30:]
    p.write_bytes(b"\n".join(lines))


def _random_table(root: Path) -> None:
    _append(_table(root), random.Random(1).randbytes(8192))


def _random_events(root: Path) -> None:
    _append(root / HOST / "events.csv", random.Random(2).randbytes(8192))


def _field_over_128k(root: Path) -> None:
    _insert(
        _table(root),
        3,
        _row("2026-09-21T13:46:41.500+00:00").rstrip().encode() + b"x" * (200 << 10),
    )


def _impossible(root: Path) -> None:
    p = _table(root)
    _append(p, _row("0001-01-01T00:00:00.000+00:00").encode())
    _append(p, _row("9999-12-31T23:59:59.000+00:00").encode())
    _append(p, _row("2026-09-21T13:54:00.000+00:00", w_await="-5000").encode())
    _append(p, _row("2026-09-21T13:54:01.000+00:00", bucket="inf").encode())
    _append(p, _row("2026-09-21T13:54:02.000+00:00", w_await="inf").encode())


def _escape_host(root: Path) -> None:
    evil = "\x1b]0;owned\x07\x1b[2J" + HOST

    def swap(meta: dict) -> None:
        meta["hosts"] = {evil: meta["hosts"][HOST]}

    _meta(root, swap)
    p = _table(root)
    p.write_text(p.read_text().replace(f",{HOST},", f",{evil},"))


def _nested(root: Path) -> None:
    (root / "meta.json").write_text("[" * 100_000 + "]" * 100_000)


def _no_name(root: Path) -> None:
    _meta(root, lambda m: m["hosts"][HOST]["collectors"]["disk"]["fields"][0].pop("name"))


def _hosts_list(root: Path) -> None:
    _meta(root, lambda m: m.update(hosts=[HOST]))


def _interval(root: Path) -> None:
    _meta(root, lambda m: (m.update(interval=-5), m["hosts"][HOST].update(interval=-5)))


def _dir_escape(root: Path) -> None:
    _meta(root, lambda m: m["hosts"][HOST].update(dir="../.."))


def _events_fifo(root: Path) -> None:
    (root / HOST / "events.csv").unlink()
    os.mkfifo(root / HOST / "events.csv")


def _text_threshold(root: Path) -> None:
    def spoil(meta: dict) -> None:
        fields = meta["hosts"][HOST]["collectors"]["disk"]["fields"]
        fields[0]["warn"], fields[1]["unit"] = "abc", 5

    _meta(root, spoil)


def _not_gzip(root: Path) -> None:
    (root / HOST / "disk_20260921_13.csv.gz").write_bytes(random.Random(3).randbytes(5000))


def _collectors_as_list(root: Path) -> None:
    _meta(root, lambda m: m["hosts"][HOST].__setitem__("collectors", ["disk"]))


def _format_999(root: Path) -> None:
    _meta(root, lambda m: m.__setitem__("format", 999))


def _host_not_listed(root: Path) -> None:
    _meta(root, lambda m: m["hosts"].clear())


def _utf8_cut(root: Path) -> None:
    _insert(_table(root), 3, _row("2026-09-21T13:00:03.500+00:00")[:-3].encode() + b"\xc3")


def _host_dir_is_a_file(root: Path) -> None:
    shutil.rmtree(root / HOST)
    (root / HOST).write_text("not a directory\n")


# name -> (damage, rows of the base recording still there, what stderr must name)
CASES: dict[str, tuple[Callable[[Path], None], int, str]] = {
    "cr-in-a-row": (_cr, TICKS - 1, "disk_"),
    "random-bytes-after-a-table": (_random_table, TICKS, "disk_"),
    "random-bytes-after-events": (_random_events, TICKS, "events.csv"),
    "a-field-over-128k": (_field_over_128k, TICKS, "disk_"),
    "ticks-in-0001-and-9999-inf-and-negative": (_impossible, TICKS + 3, "impossible"),
    "an-escape-sequence-in-a-host-name": (_escape_host, TICKS, ""),
    "meta-nested-100000-deep": (_nested, 0, "meta.json"),
    "meta-field-without-name": (_no_name, 0, "meta.json"),
    "meta-hosts-as-a-list": (_hosts_list, 0, "meta.json"),
    "meta-interval-minus-5": (_interval, TICKS, "interval"),
    "meta-dir-outside-the-archive": (_dir_escape, 0, "meta.json"),
    "meta-threshold-as-text-unit-as-number": (_text_threshold, 0, "meta.json"),
    "events-csv-is-a-fifo": (_events_fifo, TICKS, "events.csv"),
    "random-bytes-named-gz": (_not_gzip, TICKS, "disk_20260921_13.csv.gz"),
    "meta-collectors-as-a-list": (_collectors_as_list, 0, "meta.json has no fields"),
    "meta-format-999": (_format_999, TICKS, "format 999"),
    "a-host-directory-meta-does-not-list": (_host_not_listed, 0, "does not list host"),
    "a-row-cut-inside-a-utf-8-character": (_utf8_cut, TICKS, "disk_"),
    "a-host-directory-that-is-a-file": (_host_dir_is_a_file, 0, "is not a directory"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_damaged_archive_is_read_around_the_damage(base, tmp_path, case):
    damage, kept, named = CASES[case]
    root = tmp_path / "arch"
    shutil.copytree(base, root)
    damage(root)
    runs = {
        "replay": sgmon("replay", str(root), "--summary"),
        "check": sgmon("check", "--from", str(root)),
        "report": sgmon("report", str(root), "-o", str(tmp_path / "r.html")),
    }
    for cmd, r in runs.items():
        said = r.stderr + r.stdout
        assert "Traceback" not in said, f"{cmd}: {said}"
        assert "\x1b" not in said, f"{cmd} printed an escape sequence raw"
        assert r.returncode in (0, 1, 2), f"{cmd}: {r.returncode} {said}"
        lines = [x for x in r.stderr.splitlines() if not x.startswith(str(tmp_path))]
        assert all(x.startswith("sgmon: ") for x in lines), f"{cmd}: {r.stderr}"
        if named:
            assert named in r.stderr, f"{cmd} did not say where: {r.stderr}"
        if kept:
            assert r.returncode in (0, 1), f"{cmd}: {said}"
    if kept:  # nothing the damage did not touch is lost
        src = ReplaySource(root, speed=0)
        assert sum(len(src.frames(h.name)) for h in src.hosts) == kept


def _rss_of(*args: str) -> tuple[int, str]:
    """Peak RSS (kB) of one sgmon run in a fresh interpreter, and its stderr."""
    probe = (
        "import resource, subprocess, sys\n"
        "r = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=240)\n"
        "sys.stderr.write(r.stderr)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", probe, sys.executable, "-m", "sgmon", *args],
        capture_output=True,
        text=True,
        timeout=280,
    )
    return int(r.stdout.strip()), r.stderr


@pytest.mark.slow
@pytest.mark.parametrize("filler", [b"a", b","])
def test_a_200mb_line_is_passed_over_in_bounded_memory(base, tmp_path, filler):
    root = tmp_path / "arch"
    shutil.copytree(base, root)
    with _table(root).open("ab") as f:
        f.write(b"2026-09-21T13:54:00.000+00:00,prim,sdb,")
        chunk = filler * (1 << 20)
        for _ in range(200):
            f.write(chunk)
        f.write(b"\n")
    _append(_table(root), _row("2026-09-21T13:55:00.000+00:00").encode())
    baseline, _ = _rss_of("replay", str(base), "--summary")
    peak, err = _rss_of("replay", str(root), "--summary")
    assert "Traceback" not in err
    assert "1 torn or malformed row(s) skipped" in err and "disk_" in err, err
    assert peak - baseline < 60_000, f"{(peak - baseline) // 1000} MB more for one 200 MB line"
    assert len(ReplaySource(root, speed=0).frames(HOST)) == TICKS + 1


COLS = header(FIELDS)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.text(max_size=40), min_size=len(COLS), max_size=len(COLS)))
def test_decode_row_raises_only_value_or_key_errors(cells):
    with contextlib.suppress(ValueError, KeyError):
        decode_row(COLS, cells, FIELDS, [])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=4000))
def test_any_bytes_after_a_table_keep_its_rows(tmp_path_factory, junk):
    root = tmp_path_factory.mktemp("h") / "arch"
    w = ArchiveWriter(root, lambda h: SCHEMA, 1.0)
    for i in range(3):
        w(_frame(i))
    w.close()
    _append(_table(root), b"\n" + junk)
    _append(root / HOST / "events.csv", junk)
    src = ReplaySource(root, speed=0)
    frames = src.frames(HOST)
    assert [f.time for f in frames[:3]] == [T0, T0 + 1, T0 + 2]
    src.problems()


@pytest.fixture(scope="module")
def capped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A simulated recording of the capped standby: check --from names it, crit."""
    root = tmp_path_factory.mktemp("capped") / "arch"
    r = sgmon("record", "--simulate", "standby-iops-cap", "--speed", "20", "--duration", "90s",
              "--dir", str(root), "--quiet")  # fmt: skip
    assert r.returncode == 0, r.stderr
    return root


def _first_finding(r: subprocess.CompletedProcess[str]) -> str:
    return r.stdout.splitlines()[1]


@pytest.mark.parametrize(
    "spoil",
    [
        lambda m: m["hosts"]["primary"].__setitem__("collectors", ["disk"]),
        lambda m: m["hosts"].pop("standby"),
        lambda m: m["hosts"]["standby"].pop("collectors"),
    ],
    ids=["primary-collectors-as-a-list", "standby-not-listed", "standby-without-collectors"],
)
def test_damaged_metadata_never_hides_a_host(capped: Path, tmp_path: Path, spoil) -> None:
    """What the CSV files hold wins over meta.json: the finding of the undamaged archive is
    found in the damaged one, with a note naming what meta.json lost."""
    whole = sgmon("check", "--from", str(capped))
    assert whole.returncode == 2, whole.stdout
    root = tmp_path / "arch"
    shutil.copytree(capped, root)
    _meta(root, spoil)
    r = sgmon("check", "--from", str(root))
    assert "Traceback" not in r.stderr
    assert r.returncode == whole.returncode, r.stdout + r.stderr
    assert _first_finding(r) == _first_finding(whole)
    assert "sgmon: meta.json" in r.stderr, r.stderr


def test_an_unreadable_host_directory_is_left_out_with_a_note(capped: Path) -> None:
    """As a user who may not read one host's directory (mode 000): the other host is read,
    one line says why the first is not, and no command shows a traceback."""
    import tempfile

    top = Path(tempfile.mkdtemp(prefix="sgmon-unreadable-"))
    try:
        root = top / "arch"
        shutil.copytree(capped, root)
        top.chmod(0o755)
        for p in [root, *root.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)
        (root / "standby").chmod(0)
        as_nobody = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        for argv in (["check", "--from", str(root)], ["replay", str(root), "--summary"]):
            r = subprocess.run(
                [*as_nobody, sys.executable, "-m", "sgmon", *argv],
                capture_output=True, text=True, timeout=120, cwd="/",
                env={**os.environ, "HOME": "/nonexistent"},
            )  # fmt: skip
            assert "Traceback" not in r.stderr, r.stderr
            assert (
                "sgmon: host standby: its directory cannot be read (Permission denied); left out"
                in r.stderr
            ), r.stderr
            assert "primary" in r.stdout
    finally:
        (top / "arch" / "standby").chmod(0o755)
        shutil.rmtree(top)
