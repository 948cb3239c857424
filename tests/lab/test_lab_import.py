"""Issue 16 on the lab: sadc and an OSWatcher collection loop run in both hosts' namespaces while
the ``iops`` fault caps the standby's log device; imported, the history names that device as
the standby's, as the live analysis does (tests/lab/test_lab_faults.py), at its own resolution.
"""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import oswlab
import pytest
from importlab import sgmon, unexplained_findings

pytestmark = [pytest.mark.root, pytest.mark.slow]

SADC = "/usr/lib/sysstat/sadc"
SAMPLES = 8  # one-second sar records (plus sadc's first, which holds no interval)
SNAPSHOTS = 3  # OSWatcher snapshots, STEP seconds apart
STEP = 2


def test_sar_and_osw_history_name_the_capped_standby_device(lab, tmp_path: Path) -> None:
    lab.fault("iops")
    time.sleep(2)  # let the queue build
    sides = {"primary": lab.pair.a, "standby": lab.pair.b}
    sadc = []
    for host, ns in sides.items():
        cmd = [SADC, "-S", "XDISK", "1", str(SAMPLES + 1), str(tmp_path / f"sa-{host}")]
        sadc.append(subprocess.Popen(["ip", "netns", "exec", ns, *cmd]))
    errors: list[BaseException] = []

    def osw(host: str, ns: str) -> None:
        try:
            oswlab.collect(tmp_path / f"osw-{host}", host, SNAPSHOTS, STEP, netns=ns)
        except BaseException as e:  # re-raised in the test's thread
            errors.append(e)

    threads = [threading.Thread(target=osw, args=item) for item in sides.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    for p in sadc:
        assert p.wait(timeout=60) == 0
    assert not errors, errors
    lab.check()  # the lab's own processes still ran throughout
    dev = lab.standby_log.name
    for kind, src in (("sar", "sa-{}"), ("osw", "osw-{}")):
        out = tmp_path / f"arch-{kind}"
        for host in sides:
            args = [str(tmp_path / src.format(host)), "--dir", str(out), f"--role={host}"]
            r = sgmon("import", kind, *args, f"--host={host}")
            assert r.returncode == 0, r.stderr
        check = sgmon("check", "--from", str(out))
        assert f"standby disk {dev}" in check.stdout, (kind, check.stdout)
        assert "standby I/O saturated" in check.stdout, (kind, check.stdout)
        found = {f["rule"] for f in unexplained_findings(out, "standby")}
        assert "standby_io" in found, (kind, found)
