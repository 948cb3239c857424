"""`sgmon import awr`: the importer's exact SQL against the stand-in's DBA_HIST_* tables.

The stand-in's AWR (``sgmon.sim.awr``) snapshots its own cumulative V$ counters, as MMON does, so
every expected value below is the difference of what was published between two snapshots,
computed here from the published numbers, not read back from the importer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from kits.import_awr import T0, _import

from sgmon.importers.write import write


def test_cli_without_a_database_is_one_line(tmp_path: Path):
    r = subprocess.run(
        [sys.executable, "-m", "sgmon", "import", "awr", "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert r.stderr.startswith("sgmon: say which database")
    h = subprocess.run(
        [sys.executable, "-m", "sgmon", "import", "awr", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Diagnostics Pack" in h.stdout and "SELECT_CATALOG_ROLE" in h.stdout


def test_simulated_standby_iops_cap_snapshotted_imported_and_checked(tmp_path: Path):
    """The standby-iops-cap scenario (seed 003) run in the simulator with AWR snapshots of both
    stand-ins every simulated minute (the simulator computes every commit, ~1 s of CPU per
    simulated minute, so 15-minute snapshots run outside the suite: bench/awr_resolution.py);
    imported from AWR alone, `sgmon check --from` still names the standby's I/O and the chain."""
    from sgmon.sim import SimPair
    from sgmon.sim.awr import run_with_awr

    pair = SimPair("standby-iops-cap", seed=3, interval=60.0, start=T0, onset=120.0)
    try:
        run_with_awr(pair, steps=8, every=1, tz_offset=3600)
        for host, db in pair.dbs.items():
            imp, _ = _import(db, T0, pair.now(), host=host, role=host)
            assert len(imp.frames[host]) == 8 and not imp.notes
            write(tmp_path, imp)
    finally:
        pair.close()
    r = subprocess.run(
        [sys.executable, "-m", "sgmon", "check", "--from", str(tmp_path), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2, r.stderr  # worst finding critical
    report = json.loads(r.stdout)
    kinds = {(f["host"], f["rule"]) for f in report["findings"]}
    assert ("standby", "standby_io") in kinds and ("primary", "commit_chain") in kinds


def test_cli_takes_the_connection_from_a_config_host(tmp_path: Path):
    cfg = tmp_path / "sgmon.toml"
    cfg.write_text(
        '[[host]]\nname = "prim1"\nrole = "primary"\n[host.db]\ndsn = "127.0.0.1:9/PROD"\n'
        'user = "c##sgmon"\npassword_env = "SGMON_TEST_AWR_PW"\n'
    )
    base = [sys.executable, "-m", "sgmon", "import", "awr", "--config", str(cfg)]
    env = {**os.environ, "SGMON_TEST_AWR_PW": "x"}
    r = subprocess.run(
        [*base, "--db", "prim1", "--dir", str(tmp_path / "a")],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    # nothing listens on port 9: the config's DSN was used, in one line, and nothing written
    assert r.returncode == 3 and r.stderr.count("\n") == 1 and "127.0.0.1:9/PROD" in r.stderr
    assert "retrying" not in r.stderr and not (tmp_path / "a").exists()
    r = subprocess.run(
        [*base, "--db", "stby9", "--dir", str(tmp_path / "b")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (
        r.returncode == 2
        and r.stderr == "sgmon: --db stby9: no such host with a [host.db] (have: prim1)\n"
    )
