"""What the import tests share: running sgmon, reading an archive's rows, judging a healthy import.

This machine is shared with other work, so a CPU that really was saturated while a "healthy"
sample was taken is a true finding of the import, not a false one: ``unexplained_findings``
leaves out the CPU saturation finding only when the imported figures themselves show the CPUs
running code (usr + sys + irq + soft + steal; %iowait and %nice are no CPU shortage).
"""

from __future__ import annotations

import csv
import html
import json
import re
import subprocess
import sys
from pathlib import Path

BUSY_PCT = 80.0
"""CPUs running code (usr + sys + irq + soft + steal) at or over which the imported sample itself
may show a saturated CPU (with a run queue over 2x cores)."""
BUSY = ("usr", "sys", "irq", "soft", "steal")


def sgmon(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the CLI in a fresh interpreter."""
    return subprocess.run(
        [sys.executable, "-m", "sgmon", *args], capture_output=True, text=True, timeout=timeout
    )


def rows(archive: Path, host: str, collector: str) -> list[dict[str, str]]:
    """Every row of one host's collector table, all files in order."""
    out: list[dict[str, str]] = []
    for f in sorted((archive / host).glob(f"{collector}_*.csv")):
        with open(f) as fh:
            out.extend(csv.DictReader(fh))
    return out


def busy_pct(row: dict[str, str]) -> float:
    """usr + sys + irq + soft + steal of an archive's cpu row."""
    return sum(float(row.get(f"{f}_pct") or 0) for f in BUSY)


def unexplained_findings(archive: Path, config: Path | None = None) -> list[dict]:
    """``sgmon check --from``'s findings above info (judged with ``config``, e.g. one that names
    the hosts' redo devices), less a CPU saturation that the host's imported figures show really
    happened."""
    more = ["--config", str(config)] if config else []
    r = sgmon("check", "--from", str(archive), "--format", "json", *more)
    assert r.returncode in (0, 1, 2) and r.stdout, r.stderr

    def busy(host: str) -> bool:
        cpu = [d for d in rows(archive, host, "cpu") if d["instance"] == "all"]
        return any(busy_pct(d) >= BUSY_PCT for d in cpu)

    return [
        f
        for f in json.loads(r.stdout)["findings"]
        if f["severity"] not in ("info", "ok")
        and not (f["rule"] == "cpu_starvation" and busy(f["host"]))
    ]


def lab_config(lab, tmp_path: Path) -> Path:
    """The sgmon.toml a DBA would check the imports with: both hosts, their roles and their log
    devices (this machine's other loop devices may be busy with other work)."""
    path = tmp_path / "sgmon.toml"
    path.write_text(
        "\n".join(
            f'[[host]]\nname = "{h.name}"\nrole = "{h.role}"\ndevices = ["{h.devices[0]}"]\n'
            for h in lab.config().hosts
        )
    )
    return path


def report_summary(archive: Path, config: Path, page: Path) -> str:
    """The report's opening paragraph, as text (what a manager reads first)."""
    r = sgmon("report", str(archive), "--config", str(config), "-o", str(page))
    assert r.returncode == 0, r.stderr
    m = re.search(r'<p class="summary" id="summary"[^>]*>(.*?)</p>', page.read_text(), re.S)
    assert m is not None, "no summary"
    return html.unescape(re.sub(r"<[^>]+>", "", m.group(1)))
