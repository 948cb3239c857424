"""The topology from the database (issue 15, seed 003): the primary's V$ARCHIVE_DEST rows, read by
the real oracle_dg collector from the SQLite stand-in, mapped to the configured hosts; standbys
off the commit path are lag risks, never the cause of commit time; `config --check` prints it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _check(*args: str, path: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SGMON_")}
    argv = [sys.executable, "-m", "sgmon", "config", "--check", *args]
    if path is not None:
        argv += ["--config", str(path)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)


def test_config_check_prints_the_simulated_topology():
    r = _check("--simulate", "cascade-iops-cap")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "topology (from the databases):" in out
    assert (
        "dest_2 STBY_B (stby_b): SYNC AFFIRM, VALID -> standby_b, by db_unique_name: commit path"
        in out
    )
    assert "dest_3 STBY_A (stby_a): ASYNC, VALID -> standby_a" in out
    assert (
        "standby_b dest_2 STBY_C (stby_c): ASYNC, VALID -> standby_c, by db_unique_name: "
        "onward, off the commit path"
    ) in out
    assert "standby standby_c: lag risk (cascaded from standby_b (dest_2 ASYNC))" in out


def test_config_check_names_claimants_and_disagreements(tmp_path: Path):
    cfg = tmp_path / "sgmon.toml"
    cfg.write_text(
        '[[host]]\nname = "standby_a"\nrole = "primary"\n'
        '[[host]]\nname = "extra"\nrole = "standby"\ndb_unique_name = "STBY_A"\n'
    )
    r = _check("--simulate", "cascade-iops-cap", path=cfg)
    assert r.returncode == 2
    lines = r.stderr.splitlines()
    assert all(x.startswith("sgmon: ") for x in lines), lines
    assert sum("claimed by standby_a and extra" in x for x in lines) == 1, lines
    assert any("standby_a is configured primary, but primary is" in x for x in lines), lines


def test_config_check_without_a_reachable_database_shows_the_config_topology(tmp_path: Path):
    cfg = tmp_path / "sgmon.toml"
    cfg.write_text('[[host]]\nname = "x"\n[[host]]\nname = "y"\n')
    r = _check(path=cfg)
    assert r.returncode == 0, r.stderr
    assert "topology (from the config: no database reached):" in r.stdout
    assert "primary: none (none configured or reported: commit-path analysis is off)" in r.stdout


def test_check_names_b_redo_device_and_c_only_as_a_lag_risk():
    import json

    env = {k: v for k, v in os.environ.items() if not k.startswith("SGMON_")}
    argv = [sys.executable, "-m", "sgmon", "check", "--simulate", "cascade-iops-cap",
            "--seconds", "120", "--format", "json"]  # fmt: skip
    r = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)
    out = json.loads(r.stdout)
    top = out["findings"][0]
    assert (top["rule"], top["host"]) == ("standby_io", "standby_b"), top["title"]
    assert "standby_b disk sdb" in top["title"] and " <- " in top["title"]
    c = [f for f in out["findings"] if f["host"] == "standby_c"]
    assert c and all(f["rule"] == "lag_risk" and f["severity"] == "warn" for f in c)
    assert out["hosts"] == ["primary", "standby_b", "standby_a", "standby_c"]
    assert any("standby standby_c: lag risk" in line for line in out["topology"])


def test_config_keys_of_several_standbys_show_with_their_origin(tmp_path: Path):
    cfg = tmp_path / "sgmon.toml"
    cfg.write_text(
        '[[host]]\nname = "p"\nrole = "primary"\n'
        '[[host]]\nname = "b"\nrole = "standby"\ndb_unique_name = "STBY_B"\n'
        '[[host]]\nname = "a"\nrole = "standby"\n'
        '[[host]]\nname = "fs"\nrole = "far_sync"\n'
    )
    r = _check(path=cfg)
    assert r.returncode == 0, r.stderr
    shown = {line.split("=")[0].strip(): line.split("=", 1)[1].strip() for line in
             r.stdout.splitlines() if line.startswith("  host[")}  # fmt: skip
    assert shown["host[b].db_unique_name"] == f"STBY_B    (file {cfg})"
    assert shown["host[fs].role"] == f"far_sync    (file {cfg})"
    assert shown["host[a].role"] == f"standby    (file {cfg})"
    assert "far sync fs: commit path (assumed: no destination is mapped" in r.stdout
    cfg.write_text(cfg.read_text() + '[[host]]\nname = "z"\nrole = "witness"\n')
    r = _check(path=cfg)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        f'sgmon: {cfg}: host[z].role: \'witness\': use "primary", "standby" or "far_sync"'
    ]
