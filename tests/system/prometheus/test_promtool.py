"""The shipped rules and alerts, as promtool checks them: syntax, and unit tests in which every
alert has a case where it fires and one where it stays silent (deploy/tests/)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from paths import REPO

DEPLOY = REPO / "deploy"
ALERTS = DEPLOY / "prometheus_alerts.yaml"
TESTS = DEPLOY / "tests" / "prometheus_alerts_test.yaml"


def _promtool(*argv: str) -> subprocess.CompletedProcess[str]:
    if shutil.which("promtool") is None:
        pytest.fail("promtool is missing: tests/run.sh installs Debian's prometheus package")
    return subprocess.run(
        ["promtool", *argv], cwd=DEPLOY, capture_output=True, text=True, timeout=120
    )


def test_promtool_checks_the_rules() -> None:
    r = _promtool("check", "rules", "prometheus_rules.yaml", "prometheus_alerts.yaml")
    assert r.returncode == 0, r.stdout + r.stderr


def test_promtool_runs_the_alert_unit_tests() -> None:
    r = _promtool("test", "rules", str(TESTS.relative_to(DEPLOY)))
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    assert "SUCCESS" in r.stdout


def _cases() -> dict[str, set[str]]:
    """alert -> the kinds of case the unit tests hold for it: ``fires``, ``silent``."""
    cases: dict[str, set[str]] = {}
    name = None
    for line in TESTS.read_text().splitlines():
        m = re.match(r"\s*alertname: (\w+)", line)
        if m:
            name = m.group(1)
            continue
        if name and re.match(r"\s*exp_alerts: \[\]", line):
            cases.setdefault(name, set()).add("silent")
        elif name and re.match(r"\s*exp_alerts:\s*$", line):
            cases.setdefault(name, set()).add("fires")
    return cases


def test_every_alert_has_a_firing_and_a_silent_case() -> None:
    shipped = re.findall(r"^\s*- alert: (\w+)", ALERTS.read_text(), re.M)
    assert len(shipped) >= 39
    cases = _cases()
    lacking = {a: sorted({"fires", "silent"} - cases.get(a, set())) for a in shipped}
    assert {a: k for a, k in lacking.items() if k} == {}
    assert set(cases) <= set(shipped), "a unit test names an alert that is not shipped"
