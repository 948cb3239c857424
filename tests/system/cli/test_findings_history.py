"""A finding's history is true: an escalating finding keeps the start of its first form, and each
change of severity is a step with its own time, in findings.csv, check, replay and the report."""

from __future__ import annotations

import csv
from pathlib import Path

from sgmon.analysis import Analyzer
from sgmon.analysis.findings import AT_ONCE, FindingBook
from sgmon.commands.check import report
from sgmon.model import Frame
from sgmon.report.series import _bands
from sgmon.sim import SimPair
from sgmon.sinks.findings import FindingsLog
from sgmon.verdicts import AnalysisState, Finding, Judgement

T0 = 1_800_000_000.0


def _asserted(severity: str) -> Finding:
    return Finding("r:h:s", severity, "h", f"slow {severity}", [], [], "r", "000", 0.0)


def _escalate(log: FindingsLog | None = None) -> FindingBook:
    """info at 0 s, warn at 19 s, crit at 22 s, then nothing: closed after the hold."""
    book = FindingBook(hold=10.0)
    for t in range(40):
        sev = "info" if t < 19 else "warn" if t < 22 else "crit"
        book.update(T0 + t, [_asserted(sev)] if t < 25 else [])
        if log is not None:
            j = Judgement(Frame("h", T0 + t, t, 1.0, {}), None)  # type: ignore[arg-type]
            j.opened, j.closed, j.changed = (*book.opened,), (*book.closed,), (*book.changed,)
            log(j.frame, j)
    return book


def test_each_change_of_severity_is_a_step_with_its_own_time() -> None:
    book = FindingBook(hold=10.0, persist={"r": AT_ONCE})  # sparse: the steps are tested
    book.update(T0, [_asserted("info")])
    book.update(T0 + 19, [_asserted("warn")])
    assert [f.severity for f in book.changed] == ["warn"]
    book.update(T0 + 20, [_asserted("warn")])
    assert not book.changed
    book.update(T0 + 22, [_asserted("crit")])
    (f,) = book.findings()
    assert f.start == T0 and f.severity == "crit"
    assert f.steps == ((T0, "info"), (T0 + 19, "warn"), (T0 + 22, "crit"))
    assert f.to_dict()["steps"][1] == [T0 + 19, "warn"]


def test_findings_csv_has_a_row_for_each_escalation(tmp_path: Path) -> None:
    log = FindingsLog(tmp_path)
    _escalate(log)
    log.close()
    with (tmp_path / "h" / "findings.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    got = [(r["event"], r["severity"], r["time"]) for r in rows]
    start = rows[0]["start"]
    assert [g[:2] for g in got] == [
        ("open", "info"),
        ("raise", "warn"),
        ("raise", "crit"),
        ("close", "crit"),
    ], got
    assert got[1][2] != got[0][2] != got[2][2]  # each row its own time
    assert {r["start"] for r in rows} == {start}  # the start of its first, mild form


def test_check_and_the_report_say_when_it_became_what() -> None:
    (f,) = _escalate().findings()
    text = report(AnalysisState(T0 + 40, {}, [f], {}), ["h"], 40)
    assert "info 08:00:00, warn 08:00:19, crit 08:00:22" in text, text
    # the report shades the warning from when it became one, not the healthy lead-in
    assert _bands(f, T0, T0 + 40) == [[19.0, 22.0, "warn"], [22.0, 24.0, "crit"]]


def test_an_escalating_simulated_stall_keeps_its_mild_start_and_its_steps() -> None:
    """rto-stall: the stalls open as a warning and become critical once the p99 reaches the
    RTO's bucket; the analysis passes both moments to the sinks."""
    pair = SimPair("rto-stall", seed=1, start=T0, onset=20.0)
    a = Analyzer()
    changed: list[Finding] = []
    try:
        while pair.t < 70:
            for fr in pair.step():
                a.feed(fr)
            changed += a.changes()[2]
    finally:
        pair.close()
    stall = [f for f in changed if f.rule == "rto_stall"]
    assert stall, [f.title for f in changed]
    steps = stall[-1].steps
    assert len(steps) >= 2 and steps[0][0] == stall[-1].start < steps[-1][0]
    assert [s for _, s in steps[:2]] == ["warn", "crit"]


def test_the_replay_summary_and_findings_csv_of_a_recording_say_when_it_became_what(
    tmp_path: Path,
) -> None:
    """standby-iops-cap recorded: the standby I/O finding opens as a warning and becomes
    critical when the commits' remote write follows it; findings.csv has its raise row, the
    replay summary its steps."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "SGMON_RUNTIME_DIR": str(tmp_path / "run")}
    rec = tmp_path / "rec"

    def sgmon(*args: str) -> str:
        r = subprocess.run(
            [sys.executable, "-m", "sgmon", *args],
            capture_output=True, text=True, timeout=120, env=env,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
        return r.stdout

    sgmon("record", "--simulate", "standby-iops-cap", "--onset", "20", "--duration", "70s",
          "--speed", "100", "--dir", str(rec))  # fmt: skip
    with (rec / "standby" / "findings.csv").open() as fh:
        rows = [r for r in csv.DictReader(fh) if r["rule"] == "standby_io"]
    assert [(r["event"], r["severity"]) for r in rows][:2] == [("open", "warn"), ("raise", "crit")]
    assert rows[1]["start"] == rows[0]["start"] < rows[1]["time"]
    summary = sgmon("replay", str(rec), "--summary")
    became = [ln for ln in summary.splitlines() if "became warn" in ln]
    assert became and ", crit " in became[0], summary
