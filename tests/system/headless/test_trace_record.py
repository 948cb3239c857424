"""A host with a trace path and no database login records its trace lines: a real
``sgmon record`` subprocess and a trace file appended to while it runs."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from kits.waiting import wait_for

SGMON = [sys.executable, "-m", "sgmon"]


def test_record_reads_a_trace_without_a_database(tmp_path: Path) -> None:
    trc = tmp_path / "PROD_lgwr_4242.trc"
    trc.write_text("Trace file " + str(trc) + "\n")
    conf = tmp_path / "sgmon.toml"
    conf.write_text(
        '[[host]]\nname = "prim"\nrole = "primary"\n\n'
        f'[collectors.oracle_trace]\nlgwr = "{trc}"\ntimezone = "UTC"\n'
    )
    arch = tmp_path / "arch"
    env = dict(os.environ, SGMON_RUNTIME_DIR=str(tmp_path / "run"))
    p = subprocess.Popen(
        [*SGMON, "record", "--config", str(conf), "--dir", str(arch), "--interval", "0.2"],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert wait_for(lambda: any(arch.glob("prim/oracle_trace_*.csv"))), "no trace table"
        with trc.open("a") as f:
            f.write(
                "\n*** 2015-03-10 14:09:08.402\nWarning: log write elapsed time 738ms, size 1KB\n"
            )
        events = arch / "prim" / "events.csv"
        assert wait_for(lambda: events.exists() and "738" in events.read_text()), "no event"
        p.send_signal(signal.SIGTERM)
        assert p.wait(20) == 0
    finally:
        with contextlib.suppress(ProcessLookupError):
            p.kill()
    assert "lgwr_slow_write" in events.read_text()
    table = next(arch.glob("prim/oracle_trace_*.csv")).read_text()
    assert "738" in table


BACKLOG = """\
Trace file {path}
Oracle Database 19c Enterprise Edition Release 19.0.0.0.0 - Production
Version 19.21.0.0.0
Unix process pid: 4242, image: oracle@prim (LGWR)


*** 2026-11-20T08:16:01.114502-06:00 (CDB$ROOT(1))
Warning: log write elapsed time 612ms, size 4KB

*** 2026-11-20T08:16:03.114502-06:00 (CDB$ROOT(1))
Warning: log write elapsed time 1900ms, size 4KB

*** 2026-11-20T08:16:31.002717-06:00 (CDB$ROOT(1))
NSS2 is not running anymore.

*** 2026-11-20T08:16:40.551200-06:00 (CDB$ROOT(1))
Warning: log write elapsed time 845ms, size 212KB
"""
"""An incident's LGWR trace in the shape of a 19c CDB's, read after the fact."""


def test_a_trace_read_from_start_is_counted_and_named(tmp_path: Path) -> None:
    """``from_start``: the first recorded tick holds the backlog's count and longest write
    (every tick said 0 before), and ``check --from`` names the slow writes and the stopped
    transport process with the trace's own times."""
    trc = tmp_path / "PROD_lgwr_4242.trc"
    trc.write_text(BACKLOG.format(path=trc))
    conf = tmp_path / "sgmon.toml"
    conf.write_text(
        '[[host]]\nname = "prim"\nrole = "primary"\n\n'
        f'[collectors.oracle_trace]\nlgwr = "{trc}"\nfrom_start = true\n'
    )
    arch = tmp_path / "arch"
    env = dict(os.environ, SGMON_RUNTIME_DIR=str(tmp_path / "run"))
    rec = [*SGMON, "record", "--config", str(conf), "--dir", str(arch), "--quiet"]
    subprocess.run([*rec, "--interval", "0.5", "--duration", "3s"], env=env, timeout=60, check=True)
    rows = next(arch.glob("prim/oracle_trace_*.csv")).read_text().splitlines()
    head = rows[0].split(",")
    first = dict(zip(head, rows[1].split(","), strict=True))
    assert (first["slow_writes"], first["max_write_ms"]) == ("3", "1900")
    assert all(r.split(",")[head.index("slow_writes")] == "0" for r in rows[2:])
    out = subprocess.run(
        [*SGMON, "check", "--from", str(arch), "--format", "json"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert out.returncode == 2, out.stderr  # a write of 1.9 s is critical
    titles = {f["rule"]: f["title"] for f in json.loads(out.stdout)["findings"]}
    assert titles["lgwr_slow_writes"] == (
        "LGWR log write 1900 ms (prim): 3 slow log writes in the LGWR trace, traced "
        "2026-11-20 14:16:01 to 14:16:40 UTC"
    )
    assert titles["transport_stopped"].startswith("NSS2 stopped (prim):")
