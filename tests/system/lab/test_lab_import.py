"""Issue 16 on the lab: sadc and an OSWatcher collection loop run in both hosts' namespaces while
the ``iops`` fault caps the standby's log device; imported, the history names that device as
the standby's, as the live analysis does (tests/system/lab/test_lab_faults.py), at its own
resolution; the incident report of each opens with that device (the after-the-fact journey: a
DBA who only has the sar files and the OSWatcher archive gets the cause check names live).
"""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import oswlab
import pytest
from importlab import lab_config, report_summary, sgmon, unexplained_findings

pytestmark = [pytest.mark.root, pytest.mark.slow]

SADC = "/usr/lib/sysstat/sadc"
SAMPLES = 8  # one-second sar records (plus sadc's first, which holds no interval)
SNAPSHOTS = 3  # OSWatcher snapshots, STEP seconds apart
STEP = 2


def collect(lab, tmp_path: Path) -> dict[str, str]:
    """sadc and the OSWatcher loop in both lab namespaces at once; returns host -> namespace."""
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
    return sides


def imported(tmp_path: Path, kind: str, hosts: dict[str, str]) -> Path:
    """Both hosts' history of one kind (sar, osw) imported into one archive."""
    src = {"sar": "sa-{}", "osw": "osw-{}"}[kind]
    out = tmp_path / f"arch-{kind}"
    for host in hosts:
        args = [str(tmp_path / src.format(host)), "--dir", str(out), f"--role={host}"]
        r = sgmon("import", kind, *args, f"--host={host}")
        assert r.returncode == 0, r.stderr
    return out


def test_sar_and_osw_history_name_the_capped_standby_device(lab, tmp_path: Path) -> None:
    lab.fault("iops")
    time.sleep(2)  # let the queue build
    hosts = collect(lab, tmp_path)
    dev = lab.standby_log.name
    for kind in ("sar", "osw"):
        out = imported(tmp_path, kind, hosts)
        check = sgmon("check", "--from", str(out), "--config", str(lab_config(lab, tmp_path)))
        assert f"standby disk {dev}" in check.stdout, (kind, check.stdout)
        assert "standby I/O saturated" in check.stdout, (kind, check.stdout)
        found = {f["rule"] for f in unexplained_findings(out, lab_config(lab, tmp_path))}
        assert "standby_io" in found, (kind, found)
        summary = report_summary(out, lab_config(lab, tmp_path), tmp_path / f"{kind}.html")
        assert dev in summary, (kind, summary)  # the report leads with the capped device


def test_healthy_lab_history_gives_no_finding_above_info(lab, tmp_path: Path) -> None:
    hosts = collect(lab, tmp_path)
    for kind in ("sar", "osw"):
        out = imported(tmp_path, kind, hosts)
        assert unexplained_findings(out, lab_config(lab, tmp_path)) == [], kind
