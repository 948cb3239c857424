"""The incident report opens with a summary a manager reads, and its impact numbers are the
recording's: the commits and log file sync averages are counted again here from the CSV files
`sgmon record` wrote, not from sgmon's own reading of them."""

from __future__ import annotations

import csv
import html
import os
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

SGMON = [sys.executable, "-m", "sgmon"]


def sgmon(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, SGMON_RUNTIME_DIR=str(tmp / "run"))
    return subprocess.run(
        [*SGMON, *args], capture_output=True, text=True, timeout=300, env=env,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    tmp = tmp_path_factory.mktemp("summary")
    rec = tmp / "rec"
    r = sgmon(tmp, "record", "--simulate", "rto-stall", "--seed", "3", "--speed", "1000",
              "--duration", "100s", "--dir", str(rec), "--quiet")  # fmt: skip
    assert r.returncode == 0, r.stderr
    out = tmp / "incident.html"
    r = sgmon(tmp, "report", str(rec), "-o", str(out))
    assert r.returncode == 0, r.stderr
    return rec, out.read_text()


def _rows(rec: Path, collector: str, instance: str) -> list[dict[str, str]]:
    rows = []
    for path in sorted((rec / "primary").glob(f"{collector}_*.csv")):
        with path.open(newline="") as fh:
            rows += [r for r in csv.DictReader(fh) if r["instance"] == instance]
    return rows


def _t(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def test_the_summary_states_the_recordings_impact(made: tuple[Path, str]) -> None:
    rec, page = made
    m = re.search(r'<p class="summary" id="summary"([^>]*)>(.*?)</p>', page, re.S)
    assert m, page[:2000]
    attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', m[1]))
    text = html.unescape(m[2])
    start, end = float(attrs["start"]), float(attrs["end"])
    interval = 1.0  # the recording's step
    commits = {r["time"]: float(r["user_commits_per_s"] or 0) * interval
               for r in _rows(rec, "oracle_redo", "db")}  # fmt: skip
    waits = {r["time"]: float(r["avg_ms"]) for r in _rows(rec, "oracle_waits", "log file sync")
             if r["avg_ms"]}  # fmt: skip
    during = [t for t in commits if start - 1e-3 <= _t(t) <= end + 1e-3]
    before = [t for t in commits if _t(t) < start - 1e-3]
    total = sum(commits[t] for t in during)

    def weighted(ts: list[str]) -> float:
        pairs = [(waits[t], commits[t]) for t in ts if t in waits and commits[t] > 0]
        return sum(w * c for w, c in pairs) / sum(c for _, c in pairs)

    assert float(attrs["commits"]) == pytest.approx(total, rel=1e-3)
    assert float(attrs["lfs-during"]) == pytest.approx(weighted(during), rel=1e-3)
    assert float(attrs["lfs-before"]) == pytest.approx(weighted(before), rel=1e-3)
    # the sentences say the same numbers, in words
    assert f"made {total:,.0f} commits" in text
    assert f"{weighted(during):.1f} ms on average for log file sync" in text
    assert "times slower" in text and "started at" in text and "UTC" in text
    assert "Cause: log file sync" in text and "What to do: ip route change" in text


def test_the_title_is_the_configuration_and_the_date(made: tuple[Path, str]) -> None:
    _, page = made
    title = re.search(r"<title>(.*?)</title>", page)[1]
    assert re.fullmatch(r"demo rto-stall: incident report, \d{4}-\d\d-\d\d", title), title
    assert "simulated clock" in page  # a --speed recording's clock runs ahead of "Made"
    assert "runbook: docs/findings.md#rto_stall" in page


def test_printed_charts_keep_their_legends(made: tuple[Path, str], tmp_path: Path) -> None:
    """Printed (or saved as PDF) there is no cursor: each legend names its lines, without the
    `Time: --` and `--` values it shows on screen before the mouse moves."""
    import shutil

    import headless_chromium as chromium

    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext not installed (Debian package poppler-utils)")
    _, page = made
    html_file = tmp_path / "incident.html"
    html_file.write_text(page)
    pdf = tmp_path / "incident.pdf"
    chromium.run(html_file, "--no-pdf-header-footer", f"--print-to-pdf={pdf}",
                 "--virtual-time-budget=10000")  # fmt: skip
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True,
                          text=True, timeout=60).stdout  # fmt: skip
    text = " ".join(text.split())
    assert "log file sync" in text and "RFS write" in text and "SYNC Remote Write" in text
    assert "Time:" not in text and " -- " not in text
    assert "In that time the primary made" in text  # the summary is on paper too


def test_a_healthy_standby_is_drawn_flat(made: tuple[Path, str], tmp_path: Path) -> None:
    """The standby's waits move between 0.27 and 0.48 ms: its linear charts start at zero, so
    that noise is a flat line, not something that looks like an event."""
    import headless_chromium as chromium

    _, page = made
    html_file = tmp_path / "incident.html"
    html_file.write_text(page)
    dom = chromium.run(html_file, "--dump-dom", "--virtual-time-budget=10000").stdout
    y = re.search(r'id="standby-waits-avg"[^>]*data-y="([^"]+)"', dom)
    assert y, "the standby's wait averages chart"
    lo, hi = (float(v) for v in y[1].split(","))
    assert lo == 0.0 and 0.4 < hi < 1.0
