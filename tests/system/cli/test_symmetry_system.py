"""`sgmon check --symmetry`: the primary beside its SYNC standby.

The database items run their exact SQL (sgmon/oracle/queries.py) through a Session against
two SQLite stand-ins made deliberately asymmetric one property at a time, and every other line
must stay ok; the OS items are judged on frames built by hand; the CLI runs end to end on the
simulated pair and on a recording of it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def sgmon(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sgmon", *args], capture_output=True, text=True, timeout=180
    )


def test_simulated_healthy_pair_is_symmetric() -> None:
    r = sgmon("check", "--symmetry", "--simulate", "healthy")
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    body = [x for x in lines if x.startswith("  ") and "verdict" not in x][1:]
    body = [x for x in body if not x.startswith("  [")]
    assert body and all(" ok " in x or " unknown " in x for x in body), r.stdout
    # the source column cites documents by their public title, under the table
    assert "  [1] Best Practices for Synchronous Redo Transport (Oracle MAA)" in lines
    assert not any(" seed " in x or x.rstrip().endswith(" 000") for x in lines), r.stdout
    assert "0 differ, 0 missing" in r.stdout.splitlines()[-1]


def test_simulated_capped_standby_differs_on_its_redo_device() -> None:
    """standby-iops-cap (seed 003): DB_LOST_WRITE_PROTECT is TYPICAL on both, as in the seed,
    and the standby's redo device is far slower than the primary's."""
    r = sgmon("check", "--symmetry", "--simulate", "standby-iops-cap", "--format", "json")
    assert r.returncode == 1, r.stdout + r.stderr
    out = json.loads(r.stdout)
    assert out["exit"] == 1 and out["counts"]["differs"] == 1
    (pair,) = out["pairs"]
    assert (pair["primary"], pair["standby"]) == ("primary", "standby")
    by = {x["item"]: x for x in pair["lines"]}
    assert by["redo device w_await"]["verdict"] == "differs"
    lwp = by["DB_LOST_WRITE_PROTECT"]
    assert (lwp["primary"], lwp["standby"], lwp["verdict"]) == ("TYPICAL", "TYPICAL", "ok")
    assert by["SRL groups, thread 1"]["verdict"] == "ok"


def test_a_recording_has_no_database_to_read(tmp_path: Path) -> None:
    rec = tmp_path / "rec"
    r = sgmon(
        "record", "--simulate", "standby-iops-cap", "--speed", "200", "--duration", "75s",
        "--dir", str(rec), "--quiet",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    r = sgmon("check", "--symmetry", "--from", str(rec))
    assert r.returncode == 1, r.stdout + r.stderr
    db = next(x for x in r.stdout.splitlines() if x.lstrip().startswith("database"))
    assert "not readable: no [host.db] for primary in the config" in db and " unknown " in db
    redo = next(x for x in r.stdout.splitlines() if "redo device w_await" in x)
    assert " differs " in redo


def test_no_standby_is_one_usage_line(tmp_path: Path) -> None:
    config = tmp_path / "sgmon.toml"
    config.write_text('[[host]]\nname = "alone"\nrole = "primary"\n')
    r = sgmon("check", "--symmetry", "--config", str(config), "--seconds", "2")
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.startswith("sgmon: no SYNC standby") and len(r.stderr.splitlines()) == 1
