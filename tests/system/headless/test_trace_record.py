"""A host with a trace path and no database login records its trace lines: a real
``sgmon record`` subprocess and a trace file appended to while it runs."""

from __future__ import annotations

import contextlib
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
