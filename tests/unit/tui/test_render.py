"""The pure render functions, without an App: what each panel shows for a known frame."""

from __future__ import annotations

import sys
from collections import deque

import pytest
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Span, Text
from tuikit import START

import themes
from sgmon import buckets
from sgmon.contract import Num
from sgmon.fields import DISK, TCP
from sgmon.grading import Grader
from sgmon.model import CollectorResult, Field, Frame, Kind, Status
from sgmon.sim import SimPair
from sgmon.tui.draw import AXIS_LEFT, sparkline
from sgmon.tui.palette import Palette
from sgmon.tui.panels.budget import legs, render_budget
from sgmon.tui.panels.dataguard import render_dataguard
from sgmon.tui.panels.disks import ordered, render_disks
from sgmon.tui.panels.heatmap import render_heatmap
from sgmon.tui.panels.histogram import render_histogram
from sgmon.tui.panels.lines import to_strips
from sgmon.tui.panels.sockets import render_sockets
from sgmon.tui.panels.waits import render_waits
from sgmon.tui.view import PaneView, SeriesMemo
from sgmon.verdicts import AnalysisState, Budget, Judgement, Outlier

PALETTE = Palette.from_variables("sgmon-dark", themes.load_themes()["sgmon-dark"]["variables"])


def text(renderable) -> list[str]:
    """Plain lines of a Group of Texts."""
    return [t.plain for t in renderable.renderables]


def frame(rows: dict, t: float = START, collector: str = "disk") -> Frame:
    return Frame("h", t, 1, 1.0, {collector: CollectorResult(Status.OK, rows)}, role="primary")


def view(
    f: Frame | None, window: tuple = (), grader: Grader | None = None, state=None, **kw
) -> PaneView:
    """A pane on frame ``f`` as the Monitor's Judge would hand it over."""
    grader = grader or Grader()
    verdict = Judgement(f, grader, state) if f is not None else None
    return PaneView(
        "h", "primary", PALETTE, f, window=window, judgement=verdict, grader=grader, **kw
    )


def declaring(collector: str, *fields: Field, overrides: dict | None = None) -> Grader:
    """A grader whose hosts' schema declares these fields (as a remote agent's would)."""
    return Grader(overrides, schema_of=lambda host: {collector: fields})


AWAIT = Num("disk", "await")


class Counted:
    """A frame that counts how often its rows are read (a value is read from one row)."""

    reads = 0

    def __init__(self, t: float, v: object) -> None:
        self.t, self.v = t, v

    def rows(self, collector: str) -> dict:
        Counted.reads += 1
        return {"sda": {"await": self.v}} if collector == "disk" else {}


def test_series_memo_reads_one_new_value_per_tick_and_never_a_stale_one() -> None:
    frames = [Counted(t, v) for t, v in enumerate([1, 2.5, None, "x", 7, 8, 9, 10])]
    frames.insert(3, None)  # an instant the host had no frame
    memo = SeriesMemo()

    def read(window: tuple) -> list[float | None]:
        return memo.series(window, AWAIT, "sda")

    def truth(window: tuple) -> list[float | None]:
        return [float(f.v) if f and isinstance(f.v, int | float) else None for f in window]

    windows = [tuple(frames[i : i + 5]) for i in range(len(frames) - 4)]
    Counted.reads = 0
    assert read(windows[0]) == truth(windows[0]) and Counted.reads == 4  # one None frame
    for w in windows[1:]:  # the window moves on one instant a tick
        before = Counted.reads
        assert read(w) == truth(w)
        assert Counted.reads - before == (w[-1] is not None)
    assert read(windows[-1]) is read(windows[-1])  # the same window again: nothing read
    assert read(windows[1]) == truth(windows[1])  # the cursor jumped back
    assert memo.series(windows[1], AWAIT, "sdb") == [None] * 5  # another series


def test_series_memo_reads_one_new_value_while_the_window_grows() -> None:
    """A young history: the window grows by one instant a tick, and is read once a tick."""
    frames = [Counted(t, float(t)) for t in range(8)]
    memo = SeriesMemo()
    Counted.reads = 0
    for n in range(1, len(frames) + 1):
        window = tuple(frames[:n])
        assert memo.series(window, AWAIT, "sda", 65) == [f.v for f in window]
        assert Counted.reads == n


def test_histogram_columns_fold_buckets_like_awr() -> None:
    assert [buckets.column(b) for b in (0.5, 1, 2, 3, 256, 512, None)] == [0, 0, 1, 2, 8, 9, 9]
    sh = buckets.shares([[1, 50], [2, 25], [256, 20], [None, 5]])
    assert sh is not None
    assert sh[0] == 0.5 and sh[1] == 0.25 and sh[8] == 0.2 and sh[9] == 0.05
    assert buckets.shares([[1, 0], [None, 0]]) is None


def test_disks_pin_redo_devices_then_sort_by_await() -> None:
    rows = {
        "sda": {"w_await": 9.0},
        "sdb": {"w_await": 0.4},
        "sdc": {"r_await": 30.0},
        "sdd": {"w_await": 1.0},
    }
    v = view(frame(rows), pinned=("sdb",))
    assert ordered(v, limit=2) == ["sdb", "sdc", "sda"]
    lines = text(render_disks(v, 80))
    assert lines[2].startswith("*sdb") and lines[3].startswith(" sdc")
    filtered = view(frame(rows), pinned=("sdb",), filter="SDD")
    assert ordered(filtered, limit=None) == ["sdd"]


def test_static_thresholds_colour_values() -> None:
    w_await = Field("w_await", "ms", Kind.GAUGE, "", warn=10, crit=50)
    rows = {"sda": {"w_await": 60.0}, "sdb": {"w_await": 12.0}}
    v = view(frame(rows), grader=declaring("disk", w_await))
    assert v.grade(DISK.w_await, "sda") == "crit"
    assert v.grade(DISK.w_await, "sdb") == "warn"
    assert v.cell(DISK.w_await, "sda").style == PALETTE.sev("crit")
    relaxed = declaring("disk", w_await, overrides={"disk.w_await": {"crit": 100}})
    assert view(frame(rows), grader=relaxed).grade(DISK.w_await, "sda") == "warn"


def test_outlier_from_analysis_outranks_thresholds_and_highlight_marks() -> None:
    f = frame({"10.0.0.1:1>10.0.0.2:1521": {"rto": 204}}, collector="tcp")
    key = ("tcp", "10.0.0.1:1>10.0.0.2:1521", "rto")
    o = Outlier("h", *key, "crit", 204, None, "200 ms rto")
    state = AnalysisState(START, {o.key: o}, [], {})
    v = view(f, state=state, highlight=frozenset({key}))
    cell = v.cell(TCP.rto, key[1])
    assert cell.style == PALETTE.sev("crit") + PALETTE.highlight


def test_sparkline_right_aligned_on_shared_axis() -> None:
    line = sparkline(PALETTE, [1.0, 2.0, None, 4.0], 8, lambda v: "ok")
    assert len(line.plain) == 8
    assert line.plain[:4] == "    " and line.plain[6] == " " and line.plain[7] == "█"


def test_budget_bar_follows_the_critical_leg() -> None:
    remote = Budget("h", START, 10.0, 0.5, 8.0, 1.0, 6.0, 2.0)
    assert [(label, ms) for label, _, ms in legs(remote)] == [
        ("network", 6.0),
        ("standby io", 1.0),
        ("remote other", 1.0),
        ("overhead", 2.0),
    ]
    local = Budget("h", START, 3.0, 2.5, 1.0, 0.5, 0.5, 0.5)
    assert [label for label, _, _ in legs(local)] == ["local write", "overhead"]
    lines = text(render_budget(view(frame({}), budget=remote), 60))
    assert "log file sync 10 ms" in lines[0] and len(lines[1]) == 60 - 1
    assert (
        "measured on the primary"
        in text(render_budget(PaneView("s", "standby", PALETTE, None), 60))[1]
    )
    # before the standby's first frame (or in an AWR import) the remote write is not split:
    # its queue is drawn as such, in the colour of the unsplit remote write
    unsplit = Budget("h", START, 10.0, 0.5, 8.0, None, None, 0.5, 1.5, "remote write")
    assert ("queued remote write", "standby", 1.5) in legs(unsplit)
    assert "queued remote write 1.5" in text(render_budget(view(frame({}), budget=unsplit), 78))[2]


@pytest.fixture(scope="module")
def stalled() -> list[tuple[Frame, Frame]]:
    pair = SimPair("rto-stall", seed=1, start=START, onset=20)
    return [pair.step() for _ in range(40)]


def test_waits_heatmap_and_sockets_show_the_rto_stall(stalled) -> None:
    prim = [p for p, _ in stalled]
    v = view(prim[-1], window=tuple(prim))
    waits = text(render_waits(v, 78))
    assert waits[1].split()[:2] == ["event", "waits/s"]
    assert any(line.startswith("log file sync") for line in waits)
    heat = text(render_heatmap(v, 78))
    assert heat[1].strip() == "log file sync"
    top_row = heat[2]  # >128 ms
    width = 78 - AXIS_LEFT
    cells = top_row[AXIS_LEFT:]
    assert len(cells) == width
    assert cells[:-20].strip() == "" and cells[-20:].strip() != ""  # only after the onset
    socks = text(render_sockets(v, 78))
    assert "rto" in socks[1] and "1521" in socks[2]


def test_panels_keep_no_frame_their_window_has_left() -> None:
    """The heatmap, the % OF WAITS row and the sparklines hold no frame the window has moved
    past: the dashboard's history lets a frame go, and nothing drawn may keep it (a cache of
    the bucket shares by frame held 2000 frames, the memo each length a young window had)."""
    pair = SimPair("rto-stall", seed=1, start=START, onset=5)
    memo = SeriesMemo()
    first = pair.step()[0]
    window: deque[Frame] = deque([first], maxlen=30)
    for _ in range(150):  # the window grows to 30 instants, then moves on
        window.append(pair.step()[0])
        v = view(window[-1], window=tuple(window), memo=memo)
        assert text(render_heatmap(v, 78))[1].strip() == "log file sync"
        assert text(render_histogram(v, 78))[1].split()[0] == "event"
        assert "rto" in text(render_sockets(v, 78))[1]
    assert sys.getrefcount(first) == 2  # this test's name and getrefcount's argument


def test_collector_problem_is_one_line_not_a_table() -> None:
    f = Frame(
        "h",
        START,
        1,
        1.0,
        {"oracle_waits": CollectorResult(Status.ERROR, {}, error="ORA-01017: invalid login")},
    )
    lines = text(render_waits(view(f), 78))
    assert lines[1].strip() == "oracle_waits error: ORA-01017: invalid login"


def test_a_stopped_transport_reads_unknown_not_blank() -> None:
    """V$DATAGUARD_STATS with a NULL lag: DGMGRL says '(unknown)', and so does the panel, with
    the age of the datum once it is past its threshold."""
    from sgmon.tui.panels.dataguard import render_dataguard

    grader = declaring("oracle_dg", Field("datum_age", "s", Kind.GAUGE, "", warn=60))
    row = {"role": "standby", "transport_lag": None, "lag_unknown": 1, "datum_age": 95.0}
    v = view(frame({"db": row}, collector="oracle_dg"), grader=grader)
    shown = "\n".join(text(render_dataguard(v, 100)))
    assert "transport lag s unknown datum 95 s old" in shown
    quiet = view(
        frame(
            {"db": {**row, "lag_unknown": 0, "transport_lag": 0.0, "datum_age": 1.0}},
            collector="oracle_dg",
        ),
        grader=grader,
    )
    assert "transport lag s 0 " in "\n".join(text(render_dataguard(quiet, 100)))


def test_destination_states_take_the_judgements_colours() -> None:
    """The DATA GUARD panel grades no destination state itself: a DEFERRED destination (ok in
    the one judgement, sgmon.grading.text_grade) is drawn in the ok colour, an ERROR one and its
    error text crit, a gap warn: the colours of the judgement every other sink reads."""
    rows = {
        "db": {"role": "primary"},
        "dest_2": {"target": "stby", "status": "DEFERRED", "gap_status": "NO GAP"},
        "dest_3": {"target": "far", "status": "ERROR", "gap_status": "RESOLVABLE GAP",
                   "error": "ORA-12541: TNS:no listener"},
    }  # fmt: skip
    f = frame(rows, collector="oracle_dg")
    v = view(f)
    verdict = Judgement(f, Grader())
    lines = render_dataguard(v, 120).renderables

    def colour(line: Text, word: str) -> object:
        at = line.plain.index(word)
        return next(sp.style for sp in reversed(line.spans) if sp.start <= at < sp.end)

    def sev(inst: str, name: str) -> object:
        return PALETTE.sev(verdict.grade("oracle_dg", inst, name))

    deferred = next(t for t in lines if "dest_2" in t.plain)
    failed = next(t for t in lines if "dest_3" in t.plain)
    assert colour(deferred, "DEFERRED") == sev("dest_2", "status") == PALETTE.sev("ok")
    assert colour(failed, "ERROR") == sev("dest_3", "status") == PALETTE.sev("crit")
    assert colour(failed, "RESOLVABLE") == PALETTE.sev("warn")
    assert colour(failed, "ORA-12541") == PALETTE.sev("crit")


def test_the_switchover_status_is_shown_whole_or_not_at_all() -> None:
    """V$DATABASE.SWITCHOVER_STATUS in the DATA GUARD header: a panel too narrow for it leaves
    it out rather than cut it ("switchover NOT ALLOWED" cropped to "switchover NOT" reads as
    the opposite)."""
    from sgmon.tui.panels.dataguard import render_dataguard

    row = {"role": "standby", "db_unique_name": "STBY", "protection_level": "MAXIMUM AVAILABILITY",
           "switchover_status": "NOT ALLOWED"}  # fmt: skip
    v = view(frame({"db": row}, collector="oracle_dg"))
    wide = text(render_dataguard(v, 100))[0]
    assert wide.rstrip().endswith("MAXIMUM AVAILABILITY  switchover NOT ALLOWED")
    room = len(wide.rstrip())
    assert "switchover NOT ALLOWED" in text(render_dataguard(v, room))[0]
    narrow = text(render_dataguard(v, room - 1))[0]
    assert "switchover" not in narrow and "MAXIMUM AVAILABILITY" in narrow


def test_line_strips_equal_rich_render() -> None:
    """Panel lines skip Rich's render where their spans do not overlap: the same segments, so
    the screen is the same (overlapping, string-styled and base-styled lines included)."""
    console = Console(width=40, color_system="truecolor")
    red, bold = Style(color="red"), Style(bold=True)
    ground = Style(color="white", bgcolor="blue")
    lines = [
        Text("plain"),
        Text("a 12 b 345", spans=[Span(2, 4, red), Span(7, 10, bold)]),
        Text("abutting", spans=[Span(0, 3, red), Span(3, 3, bold), Span(3, 8, bold)]),
        Text("overlap hi", spans=[Span(0, 10, red), Span(8, 10, bold)]),
        Text("named style", spans=[Span(0, 5, "bold")]),
        Text("based", style=red, spans=[Span(1, 2, bold)]),
        Text("cropped to ten cells, not more", spans=[Span(5, 25, red)]),
        Text("wide 汉字 cells", spans=[Span(5, 7, bold)]),
    ]
    options = console.options.update(width=10, no_wrap=True, overflow="crop")
    for line in lines:
        want = console.render_lines(line, options, pad=True)[0]
        got = list(to_strips(console, line, 10)[0])
        assert [(s.text, s.style) for s in got] == [(s.text, s.style) for s in want], line
        # on a widget's background: as if the background were applied after
        on_blue = list(to_strips(console, line, 10, base=ground)[0])
        under = list(Segment.apply_style(want, ground))
        assert [(s.text, s.style) for s in on_blue] == [(s.text, s.style) for s in under], line


def test_log_switches_per_minute_and_on_the_axis_through_the_memo() -> None:
    """log-switch-storm switches every 5 s: the DATA GUARD panel says about 12 a minute, marks
    each switch on the time axis and lists the last switches, and a memo carried from tick to
    tick (as the timeline's) draws what a fresh one draws at every tick."""
    pair = SimPair("log-switch-storm", seed=1, start=START, onset=0.0)
    frames: deque[Frame] = deque(maxlen=100)
    memo = SeriesMemo()
    try:
        for tick in range(90):
            frames.append(next(f for f in pair.step() if f.host == "primary"))
            window = tuple(frames)
            carried = view(window[-1], window, memo=memo)
            fresh = view(window[-1], window, memo=SeriesMemo())
            lines = text(render_dataguard(carried, 120))
            assert lines == text(render_dataguard(fresh, 120)), tick
    finally:
        pair.close()
    rate = next(line for line in lines if "switches/min" in line)
    per_minute = int(rate.split("switches/min ")[1].split()[0])
    assert 10 <= per_minute <= 14, rate
    axis = next(line for line in lines if line.lstrip().startswith("switches "))
    assert 10 <= axis[-60:].count("│") <= 14, axis
    assert any("log switch" in line.lower() for line in lines[-3:]), lines


def test_a_destination_not_protecting_shows_the_running_count_in_its_findings_colour() -> None:
    """While the transport is stopped, the destination's line carries what the analysis has
    counted on no standby so far, coloured as the finding that says it (crit: no standby holds
    them), and it grows tick by tick."""
    from sgmon.analysis import Analyzer

    pair = SimPair("transport-stopped", seed=3, start=START, onset=10.0)
    a = Analyzer()
    seen: list[str] = []
    try:
        while pair.t < 20.0:
            frames = pair.step()
            for f in frames:
                a.feed(f)
            primary = frames[0]
            state = a.state()
            v = PaneView("primary", "primary", PALETTE, primary,
                         judgement=Judgement(primary, Grader(), state))  # fmt: skip
            line = next(t for t in render_dataguard(v, 200).renderables if "dest_2" in t.plain)
            seen.append(line.plain)
    finally:
        pair.close()
    (u,) = state.unprotected
    assert u.text() in seen[-1] and "on no standby" in seen[-1]
    assert not any("on no standby" in s for s in seen[:4])  # before the stop: nothing
    counts = [s for s in seen if "on no standby" in s]
    assert len(set(counts)) == len(counts) > 3  # a running figure
    assert next(sp.style for sp in line.spans if "commits" in line.plain[sp.start : sp.end]) == (
        PALETTE.sev("crit")
    )
