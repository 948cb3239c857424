"""Findings to trust on real recordings: a state's finding holds only while the state holds, no
finding opens and closes at one instant, findings lead with their impact (extra commit time),
and an episode is titled by its worst moment.

The frames are built by hand in the shape of sar's per-second samples (``sar -u``, ``sar -d``
as the sar importer reads them: %idle, runq-sz, aqu-sz, await, svctm, %util) beside the
primary's database waits: a standby whose redo volume is capped for a minute, and one-second
CPU peaks of 85-98 % beside it (what real sadc files under a 400-IOPS cap showed).
"""

from __future__ import annotations

from kits.analysis import T0, frame

from sgmon.analysis import Analyzer
from sgmon.analysis.budget import commit_budget
from sgmon.analysis.findings import ADVICE_HOLD, AT_ONCE, STATE, FindingBook
from sgmon.commands.check import report
from sgmon.model import Frame
from sgmon.report.judged import Judged
from sgmon.report.summary import sentences
from sgmon.verdicts import Finding, by_impact

CALM_DISK = {"aqu_sz": 0.3, "w_await": 0.6, "r_await": 0.5, "svctm": 0.4, "util": 12.0}


def primary(t: float, slow: bool) -> Frame:
    """The primary: log file sync and the remote write, 500 commits a second."""
    lfs, rw = (40.0, 35.0) if slow else (1.0, 0.8)
    return frame(
        "p",
        t,
        "primary",
        oracle_waits={
            "log file sync": {"avg": lfs, "p99": 256.0 if slow else 2.0, "waits": 500.0},
            "SYNC Remote Write": {"avg": rw, "p99": 256.0 if slow else 1.0, "waits": 500.0},
        },
        oracle_redo={"db": {"user_commits": 500.0}},
    )


def cpu(busy: float) -> dict:
    """sar -u's all-CPU row (4 CPUs) at ``busy`` percent."""
    idle = 100.0 - busy
    rows = {f"cpu{i}": {"idle": idle} for i in range(4)}
    return {"all": {"idle": idle, "usr": busy - 5.0, "sys": 5.0, "runq_sz": 1.0}, **rows}


def standby(t: float, busy: float = 10.0, disks: dict | None = None) -> Frame:
    """The standby: sar -u and sar -d."""
    return frame("s", t, "standby", cpu=cpu(busy), disk=disks or {"sdb": CALM_DISK})


def capped(aqu: float, await_ms: float, util: float) -> dict:
    """A device's sar -d row while its volume is capped (await far above svctm)."""
    return {"aqu_sz": aqu, "w_await": await_ms, "r_await": await_ms, "svctm": 1.3, "util": util}


def run(ticks: list[list[Frame]]) -> Analyzer:
    a = Analyzer()
    for frames in ticks:
        for f in frames:
            a.feed(f)
    return a


def test_a_one_second_cpu_peak_is_no_finding_a_held_one_is() -> None:
    """Peaks of 85-98 % for a second or two: no finding; the same held for five ticks: one,
    starting at its first second."""
    peaks = {40: 91.9, 41: 97.5, 55: 85.0, 70: 98.0}
    a = run([[primary(t, False), standby(t, busy=peaks.get(t, 10.0))] for t in range(90)])
    assert not [f for f in a.state().findings if f.rule == "cpu_starvation"]
    held = run([[primary(t, False), standby(t, busy=97.0 if 40 <= t < 45 else 10.0)]
                for t in range(60)])  # fmt: skip
    found = [f for f in held.state().findings if f.rule == "cpu_starvation"]
    assert len(found) == 1 and found[0].start == T0 + 40


def test_no_finding_opens_and_closes_at_the_same_time() -> None:
    """A rule that opens at once (a destination's state, read from the database), asserted at
    one tick: it lasted that tick's sample, in the findings and in check's text."""
    dest = {"dest_2": {"status": "ERROR", "error": "ORA-16198: timeout", "target": "STBY"}}
    ticks = [[frame("p", t, "primary", oracle_dg=dest if t == 5 else {})] for t in range(30)]
    a = run(ticks)
    found = [f for f in a.state().findings if f.rule == "dg_state"]
    assert found and all(f.end is not None and f.end > f.start for f in found)
    state = a.state()
    text = report(state, ["p"], 30.0)
    assert "09:20:05-09:20:05" not in text and "08:00:05-08:00:05" not in text
    book = FindingBook(persist={"r": AT_ONCE})
    book.update(100.0, [Finding("k", "warn", "p", "t", [], [], "r", "000", 0.0)])
    book.update(120.0, [])
    assert book.closed[0].end == 101.0  # one 1-second sample
    once = Finding("k", "warn", "p", "t", [], [], "r", "000", 100.0, seen=100.0)
    assert once.active and once.lasted == 0.0  # seen at one tick so far: not "0 ms" long
    assert once.peaked(lambda t: "12:00:00") == "peak 12:00:00 of one tick"
    assert once.impact().endswith("lasted one tick")


def test_the_capped_disk_leads_not_the_latest_cpu_peak() -> None:
    """A minute of a capped standby volume that slowed every commit, then (after it ended) five
    seconds of busy CPUs that slowed none: check, the report and the dashboard lead with the
    disk, by the extra commit time it accounts for."""
    ticks = []
    for t in range(120):
        cap = 40 <= t < 100
        disks = {"sdb": capped(60.0, 90.0, 100.0) if cap else CALM_DISK}
        busy = 96.0 if 110 <= t < 116 else 10.0
        ticks.append([primary(t, cap), standby(t, busy=busy, disks=disks)])
    state = run(ticks).state()
    rules = [f.rule for f in state.findings if f.severity != "info"]
    assert rules[0] == "standby_io" and "cpu_starvation" in rules
    disk = state.findings[0]
    assert disk.cost_ms > 0 and disk.commits >= 500 * 50
    assert "ms x" in disk.impact() and "commits" in disk.impact()
    text = report(state, ["p", "s"], 120.0, primaries=("p",))
    assert text.splitlines()[0].endswith(disk.impact())
    assert text.splitlines()[1].startswith(f"{disk.severity.upper():<4} s: ")
    frames: dict[str, list[Frame]] = {}
    for f in (f for tick in ticks for f in tick):
        frames.setdefault(f.host, []).append(f)
    judged = Judged([("p", "primary"), ("s", "standby")], frames, T0, T0 + 119, 1.0)
    judged.findings = state.findings
    said, _ = sentences(judged, None)
    assert (
        said[0].startswith("A critical problem on s started at") and "lasted 59 seconds" in said[0]
    )
    assert "Cause: " in said[-2] and "disk sdb" in said[-2] and "extra commit time" in said[-2]


def test_equal_impact_goes_to_the_longer_episode_not_the_latest() -> None:
    short = Finding("a", "warn", "h", "short", [], [], "r", "000", 100.0, 110.0, 30.0)
    long = Finding("b", "warn", "h", "long", [], [], "r", "000", 10.0, 90.0, 20.0)
    assert sorted([short, long], key=by_impact)[0] is long


def test_an_episode_is_titled_by_its_worst_moment() -> None:
    """Four minutes on a cell: sdc at 100 % with a 513 ms await for a while, then only sda
    mildly queued at the end.  While it lasts, the title follows the panes (sda now) and the
    episode's title is sdc's at its peak; once closed, its title is the episode's."""
    ticks = []
    for t in range(100):
        disks = {"sda": CALM_DISK, "sdc": CALM_DISK}
        if 40 <= t < 80:
            disks["sdc"] = capped(60.0, 513.0, 100.0)
        elif 80 <= t < 90:
            disks["sda"] = capped(5.0, 20.0, 7.88)
        ticks.append([primary(t, 40 <= t < 80), standby(t, disks=disks)])
    during = next(f for f in run(ticks[:86]).state().findings if f.rule == "standby_io")
    assert during.active and "disk sda" in during.title
    assert "sdc await 513 ms" in during.episode and "sda" not in during.episode
    state = run(ticks).state()
    disk = next(f for f in state.findings if f.rule == "standby_io")
    assert not disk.active and disk.title == disk.episode == during.episode
    assert disk.peak_at is not None and T0 + 40 <= disk.peak_at < T0 + 80
    assert disk.peaked(lambda t: f"{t - T0:.0f}").startswith("peak ")
    assert f"s: {disk.episode} (peak " in report(state, ["p", "s"], 100.0)


def test_no_budget_for_an_interval_without_commits_and_shares_say_what_of() -> None:
    idle = primary(1, False)
    for row in idle.rows("oracle_waits").values():
        row.update(waits=0.0, avg=0.0)
    assert commit_budget(idle, None) is None
    budget = commit_budget(primary(0, False), None)
    assert budget is not None and "shares of it" in budget.describe()
    a = run([[primary(0, False)], [idle]])
    assert "commit budget p (last interval): no commits this interval" in report(
        a.state(), ["p"], 2.0, primaries=("p",)
    )


def test_advice_asserted_in_bursts_is_one_recommendation() -> None:
    """Under a capped standby the Fast Sync advice crosses its line burst by burst (asserted
    for 3 s, then 14 s without): one recommendation for the incident, while a state finding
    with the same pattern is one episode per burst (the book's 10 s hold)."""
    for persist, episodes in ((ADVICE_HOLD, 1), (STATE, 4)):
        book = FindingBook(persist={"r": persist})
        closed: list[Finding] = []
        for t in range(120):
            burst = t < 60 and t % 17 < 3
            book.update(T0 + t, [Finding("k", "warn", "p", "t", [], [], "r", "000", T0 + t)]
                        if burst else [])  # fmt: skip
            closed += book.closed
        assert len(closed) == episodes, (persist, [(f.start - T0, f.end) for f in closed])
