"""`sgmon import sar` when ``sadf -j`` prints what it should not: JSON cut short (sadf killed,
a full disk under a pipe) or values of the wrong type.  Each is at most one ``sgmon:`` line
per file naming it and what is wrong, no traceback, and what is readable is kept; an archive
already written is never touched by a file that gives nothing.

The sa file is the real sadc's (three 1 s samples); a ``sadf`` placed first on PATH runs the
real one and damages its output as each case says (SGMON_TEST_DAMAGE).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from importlab import rows

pytestmark = [pytest.mark.slow]

SADC = "/usr/lib/sysstat/sadc"
SHIM = r"""
import json, os, subprocess, sys
real = subprocess.run(["/usr/bin/sadf", *sys.argv[1:]], capture_output=True, text=True)
out, how = real.stdout, os.environ["SGMON_TEST_DAMAGE"]
if "-j" in sys.argv:
    if how == "cut":
        out = out[: out.rfind('"timestamp"') + 30]  # into the last record
    elif how == "header":
        out = out[:40]
    else:
        doc = json.loads(out)
        host = doc["sysstat"]["hosts"][0]
        stats = host["statistics"]
        if how == "record":
            stats[0]["timestamp"] = 7  # a number where sadf prints an object
        elif how == "figure":
            stats[-1]["queue"]["ldavg-1"] = "0,52"  # text where sadf prints a number
            stats[-1]["cpu-load"][0]["idle"] = [1]
        elif how == "statistics":
            host["statistics"] = {"x": 1}
        elif how == "hosts":
            doc["sysstat"]["hosts"] = "vm"
        elif how == "toplevel":
            doc = [doc]
        elif how == "cpu":
            for s in stats:
                s["cpu-load"] = "all"
        out = json.dumps(doc)
sys.stdout.write(out)
sys.stderr.write(real.stderr)
sys.exit(real.returncode)
"""


@pytest.fixture(scope="module")
def safile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sa") / "sa27"
    subprocess.run([SADC, "-S", "XALL", "1", "3", str(path)], check=True, timeout=60)
    return path


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("bin")
    (d / "sadf").write_text(f"#!{sys.executable}\n{SHIM}")
    (d / "sadf").chmod(0o755)
    return d


def _import(shim: Path, damage: str, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{shim}:{os.environ['PATH']}", "SGMON_TEST_DAMAGE": damage}
    return subprocess.run(
        [sys.executable, "-m", "sgmon", "import", "sar", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def _one_line(r: subprocess.CompletedProcess[str], path: Path, *words: str) -> None:
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"sgmon: {path}"), lines
    for w in words:
        assert w in lines[0], lines


def test_json_cut_short_keeps_the_whole_records(safile: Path, shim: Path, tmp_path: Path) -> None:
    out = tmp_path / "arch"
    r = _import(shim, "cut", str(safile), "--dir", str(out), "--host", "h")
    assert r.returncode == 0, r.stderr
    _one_line(r, safile, "cut short", "the 1 whole records kept")
    assert len({d["time"] for d in rows(out, "h", "cpu")}) == 1


@pytest.mark.parametrize(
    ("damage", "words"),
    [
        ("header", ("JSON cut short",)),
        ("statistics", ("not sysstat's JSON layout", "statistics is not a list")),
        ("hosts", ("not sysstat's JSON layout",)),
        ("toplevel", ("not sysstat's JSON layout",)),
        ("cpu", ("no readable sadf record",)),
    ],
)
def test_unreadable_output_is_one_line_and_the_archive_kept(
    safile: Path, shim: Path, tmp_path: Path, damage: str, words: tuple[str, ...]
) -> None:
    out = tmp_path / "arch"
    good = _import(shim, "none", str(safile), "--dir", str(out), "--host", "h")
    assert good.returncode == 0 and good.stderr == "", good.stderr
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    r = _import(shim, damage, str(safile), "--dir", str(out), "--host", "h")
    assert r.returncode == 2, r.stderr
    _one_line(r, safile, *words)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_record_of_the_wrong_shape_is_skipped_the_rest_kept(
    safile: Path, shim: Path, tmp_path: Path
) -> None:
    out = tmp_path / "arch"
    r = _import(shim, "record", str(safile), "--dir", str(out), "--host", "h")
    assert r.returncode == 0, r.stderr
    _one_line(r, safile, "1 sadf record(s) of an unexpected shape skipped", "record 1")
    assert len({d["time"] for d in rows(out, "h", "cpu")}) == 1


def test_figure_of_the_wrong_type_is_left_empty(safile: Path, shim: Path, tmp_path: Path) -> None:
    out = tmp_path / "arch"
    r = _import(shim, "figure", str(safile), "--dir", str(out), "--host", "h")
    assert r.returncode == 0, r.stderr
    _one_line(r, safile, "2 figure(s) that are no number left empty")
    cpu = [d for d in rows(out, "h", "cpu") if d["instance"] == "all"]
    assert len(cpu) == 2 and cpu[-1]["load1"] == "" and cpu[-1]["idle_pct"] == ""
    assert cpu[0]["load1"] != "" and cpu[-1]["usr_pct"] != ""
