"""`sgmon report`: a real recording made into the HTML report and opened in real headless
Chromium with no network: it draws with no console error, each chart holds the archive's
samples (counted from the CSV files themselves), it names the finding `check --from` names, and
its screenshot shows the charts."""

from __future__ import annotations

import csv
import html
import json
import math
import re
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import headless_chromium as chromium
import pytest
from kits.report import charts, collector_of, samples, sgmon, span
from paths import DATA

from sgmon.archive import parse_time

pytestmark = pytest.mark.skipif(
    chromium.CHROMIUM is None, reason="needs Debian's chromium package (tests/run.sh installs it)"
)


def test_report_loads_nothing_from_outside(report: Path) -> None:
    text = report.read_text()
    loads = re.findall(r"""(?:src|href)\s*=\s*["']?[a-z]*:?//|url\(|@import|fetch\(""", text)
    assert loads == []
    assert "<script src" not in text and "<link" not in text
    # the only address in the file is uPlot's licence banner, a comment
    assert set(re.findall(r"https?://[^\s\"')]+", text)) <= {"https://github.com/leeoniya/uPlot"}


def test_report_draws_every_chart_without_errors(opened: chromium.Run) -> None:
    dom = opened.stdout
    head = dom[: dom.index("<head")]
    assert "data-drawn=" in head, head
    assert "data-errors" not in head, head
    assert opened.console() == []
    drawn = charts(dom)
    assert int(re.search(r'data-charts="(\d+)"', head)[1]) == len(drawn)
    # both hosts, each of the four groups
    for want in ("primary-waits-avg", "primary-budget", "standby-waits-avg", "standby-await",
                 "primary-rtt", "primary-cpu", "standby-runq"):  # fmt: skip
        assert want in drawn, sorted(drawn)


def test_a_range_draws_only_its_ticks(archive: Path) -> None:
    out = archive.parent / "range.html"
    r = sgmon("report", str(archive), "--from", "+20s", "--to", "+50s", "-o", str(out))
    assert r.returncode == 0, r.stderr
    run = chromium.run(out, "--dump-dom", "--virtual-time-budget=10000")
    assert run.console() == []
    first, _ = span(archive)
    drawn = charts(run.stdout)
    assert drawn
    for cid, points in drawn.items():
        host, collector = collector_of(cid)
        want = samples(archive, host, collector, first + 20, first + 50)
        assert points == want == 31, (cid, points, want)


def test_findings_are_the_ones_check_names(archive: Path, opened: chromium.Run) -> None:
    r = sgmon("check", "--from", str(archive), "--format", "json")
    assert r.returncode == 2, r.stderr
    found = json.loads(r.stdout)["findings"]
    top = found[0]
    assert top["rule"] == "rto_stall" and top["seed"] == "001"
    dom = opened.stdout
    diagnosis = re.search(r'id="top-finding">(.*?)</div>', dom, re.S)[1]
    assert html.escape(f"{top['host']}: {top['title']}", quote=False) in diagnosis
    listed = re.findall(r'<li class="finding (\w+)" data-rule="([^"]+)" data-seed="(\d+)">', dom)
    assert listed == [(f["severity"], f["rule"], f["seed"]) for f in found]
    # the evidence is there, quoted as check quotes it
    for line in top["evidence"]:
        assert f"<li>{html.escape(line, quote=False)}</li>" in dom
    fix = next(e for e in top["evidence"] if "fix: " in e).split("fix: ", 1)[1]
    assert "rto_min" in fix
    source = html.escape("A story about Data Guard and network latency", quote=False)
    assert f"What to do ({source}): {html.escape(fix, quote=False)}" in dom
    assert "log file sync" in re.search(r'<ul class="budget">(.*?)</ul>', dom, re.S)[1]


def test_screenshot_shows_the_charts(report: Path, tmp_path: Path) -> None:
    from PIL import Image

    png = tmp_path / "shot.png"
    run = chromium.run(
        report, f"--screenshot={png}", "--window-size=1400,1600", "--virtual-time-budget=10000"
    )
    assert png.is_file(), run.stderr[-2000:]
    img = Image.open(png).convert("RGB")
    assert img.size == (1400, 1600)
    colours = img.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 200
    # the series drawn in the first colour (Okabe-Ito blue), and the crit finding's shading
    blue = sum(n for n, (r, g, b) in colours if r < 60 and 90 < g < 140 and 150 < b < 210)
    shade = sum(n for n, (r, g, b) in colours if r > 240 and 200 < g < 235 and 180 < b < 215)
    assert blue > 500, blue
    assert shade > 5000, shade


def test_report_of_a_recording_still_being_written(tmp_path: Path) -> None:
    """The recorder keeps writing (a torn last row is possible) while the report reads."""
    rec = tmp_path / "live"
    cmd = [sys.executable, "-m", "sgmon", "record", "--simulate", "standby-iops-cap",
           "--speed", "20", "--duration", "10m", "--dir", str(rec), "--quiet"]  # fmt: skip
    recorder = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        # 45 samples on disk, 40 in every chart: the budget of the newest ticks may wait for a
        # late host (the analysis waits up to 3 ticks), so its chart trails the tables a little
        while samples_so_far(rec) < 45 and time.monotonic() < deadline:
            assert recorder.poll() is None, recorder.stderr.read() if recorder.stderr else ""
            time.sleep(0.2)
        assert samples_so_far(rec) >= 45
        out = tmp_path / "live.html"
        r = sgmon("report", str(rec), "-o", str(out))
        assert recorder.poll() is None  # still recording while the report was made
    finally:
        recorder.send_signal(signal.SIGTERM)
        recorder.wait(timeout=30)
    assert r.returncode == 0, r.stderr
    run = chromium.run(out, "--dump-dom", "--virtual-time-budget=10000")
    assert run.console() == []
    drawn = charts(run.stdout)
    assert drawn and min(drawn.values()) >= 40


def samples_so_far(rec: Path) -> int:
    return sum(
        1 for p in rec.glob("standby/cpu_*.csv") for ln in p.read_text().splitlines()
        if ",all," in ln
    )  # fmt: skip


def test_bad_input_is_one_line(archive: Path, tmp_path: Path) -> None:
    out = str(tmp_path / "x.html")
    (tmp_path / "empty").mkdir()
    cases = [
        (str(tmp_path / "empty"), "-o", out),
        (str(tmp_path / "missing"), "-o", out),
        (str(archive), "--from", "+1h", "-o", out),
        (str(archive), "--from", "+50s", "--to", "+10s", "-o", out),
        (str(archive), "--from", "soon", "-o", out),
        (str(archive), "-o", str(tmp_path / "no-such-dir" / "x.html")),
        (str(archive), "-o", str(tmp_path)),
        (str(archive), "-o", "/proc/sgmon-report.html"),
    ]
    for args in cases:
        r = sgmon("report", *args)
        assert r.returncode == 2, (args, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("sgmon: "), (args, r.stderr)
    assert not Path(out).exists()
    assert not list(tmp_path.glob(".x.html.*"))  # no temporary file left behind


def test_report_runs_without_textual(report: Path, archive: Path) -> None:
    """Headless: making the report imports neither Textual nor rich (nor the database driver)."""
    code = (
        "import sys\n"
        "from sgmon.cli import main\n"
        f"main(['report', {str(archive)!r}, '-o', {str(report.parent / 'again.html')!r}])\n"
        "print(','.join(m for m in ('textual', 'rich', 'oracledb') if m in sys.modules))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == ""
    assert (report.parent / "again.html").stat().st_size > 50_000


def test_a_recorder_outage_is_a_break(tmp_path: Path) -> None:
    """30 s missing from a recording: the charts hold the 90 recorded ticks and break at the
    outage (one tick placed in it), and the page draws without error."""
    from sgmon.sim import SimPair
    from sgmon.sinks.csvarchive import ArchiveWriter

    rec, out = tmp_path / "rec", tmp_path / "outage.html"
    pair = SimPair("healthy", seed=1, interval=1.0)
    writer = ArchiveWriter(rec, pair.schema, 1.0)
    try:
        for i in range(120):
            for frame in pair.step():
                if not 40 <= i < 70:
                    writer(frame)
    finally:
        writer.close()
        pair.close()
    r = sgmon("report", str(rec), "-o", str(out))
    assert r.returncode == 0, r.stderr
    page = out.read_text()
    data = json.loads(re.search(r'id="sgmon-data">(.*?)</script>', page, re.S)[1])
    cpu = next(
        c for s in data["sections"] for c in s["charts"]["standby"] if c["id"].endswith("-cpu")
    )
    busy = cpu["series"][0]
    assert sum(v is not None for v in busy["values"]) == 90
    (gap,) = busy["gaps"]
    assert busy["values"][gap] is None and data["x"][gap] - data["x"][gap - 1] == 1.0
    assert data["x"][gap + 1] - data["x"][gap - 1] == 31.0
    run = chromium.run(out, "--dump-dom", "--virtual-time-budget=10000")
    assert run.console() == [] and "data-errors" not in run.stdout[:2000]
    assert set(charts(run.stdout).values()) == {90}
    breaks = re.search(r'id="standby-cpu" data-points="\d+" data-breaks="(\d+)"', run.stdout)
    assert breaks and breaks[1] == "1"


def test_a_shared_address_zooms_every_chart(report: Path, archive: Path) -> None:
    """#from=...&to=... zooms the first chart; every other chart follows that one zoom."""
    first, _ = span(archive)
    a, b = (datetime.fromtimestamp(first + d, UTC).strftime("%Y-%m-%dT%H:%M:%SZ") for d in (30, 60))
    run = chromium.run(
        report, "--dump-dom", "--virtual-time-budget=10000", fragment=f"from={a}&to={b}"
    )
    assert run.console() == []
    ranges = re.findall(r'<div class="chart" id="[^"]+"[^>]*data-range="([^"]+)"', run.stdout)
    t0 = json.loads(re.search(r'id="sgmon-data">(.*?)</script>', run.stdout, re.S)[1])["t0"]
    assert len(ranges) == len(charts(run.stdout)) >= 16
    assert set(ranges) == {f"{first + 30 - t0:.3f},{first + 60 - t0:.3f}"}
    assert re.search(r'data-zoomed="[\d.]+"', run.stdout[:2000])  # every chart redrew


def test_config_pins_the_redo_devices(archive: Path, report: Path, tmp_path: Path) -> None:
    """The hosts' redo `devices` come first and are labelled, even when they are idle."""
    out = tmp_path / "pinned.html"

    def util_labels(page: Path) -> dict[str, list[str]]:
        data = json.loads(re.search(r'id="sgmon-data">(.*?)</script>', page.read_text(), re.S)[1])
        return {
            c["id"]: [s["label"] for s in c["series"]]
            for sec in data["sections"]
            for cs in sec["charts"].values()
            for c in cs
            if c["id"].endswith("-util")
        }

    plain = util_labels(report)
    idle = plain["standby-util"][-1]  # the least busy of the standby's devices
    cfg = tmp_path / "sgmon.toml"
    cfg.write_text(f'[[host]]\nname = "standby"\nrole = "standby"\ndevices = ["{idle}"]\n')
    r = sgmon("report", str(archive), "--config", str(cfg), "-o", str(out))
    assert r.returncode == 0, r.stderr
    pinned = util_labels(out)
    assert pinned["standby-util"][0] == f"{idle} (redo)"
    assert pinned["primary-util"] == plain["primary-util"]


def test_log_switches_are_marked(tmp_path: Path) -> None:
    """Seed 000's storm: every log switch the recording holds is a mark on the time axis."""
    rec, out = tmp_path / "storm", tmp_path / "storm.html"
    r = sgmon(
        "record", "--simulate", "log-switch-storm", "--speed", "1000", "--duration", "90s",
        "--dir", str(rec), "--quiet",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    r = sgmon("report", str(rec), "-o", str(out))
    assert r.returncode == 0, r.stderr
    recorded = set()
    for path in rec.glob("*/events.csv"):
        for row in csv.DictReader(path.open(newline="")):
            if row["kind"] == "log_switch":
                recorded.add(round(parse_time(row["time"]), 3))
    data = json.loads(re.search(r'id="sgmon-data">(.*?)</script>', out.read_text(), re.S)[1])
    assert len(recorded) >= 2
    assert {round(data["t0"] + t, 3) for t in data["switches"]} == recorded
    run = chromium.run(out, "--dump-dom", "--virtual-time-budget=10000")
    assert run.console() == [] and "data-drawn" in run.stdout[:2000]


def test_mouse_moves_every_cursor_and_drags_one_zoom(report: Path, archive: Path) -> None:
    """Real mouse events through the DevTools protocol: hovering one chart shows the same
    instant in every chart's legend; dragging across it zooms every chart to that range and
    writes it into the address; a double click zooms every chart out again."""
    first, last = span(archive)
    page = chromium.DevTools(width=1400, height=1000)
    try:
        page.open(report, "document.documentElement.dataset.drawn")
        box = page.evaluate(
            "(() => { const o = document.querySelector('#primary-cpu .u-over');"
            " o.scrollIntoView({block: 'center'}); const r = o.getBoundingClientRect();"
            " return [r.left, r.top, r.width, r.height]; })()"
        )
        left, top, width, height = box
        page.mouse("mouseMoved", left + width / 2, top + height / 2)
        shown = page.evaluate(
            "[...document.querySelectorAll('.u-legend .u-series:first-child .u-value')]"
            ".map(e => e.textContent)"
        )
        assert len(shown) >= 16 and len(set(shown)) == 1, shown
        at = parse_time(shown[0].replace(" ", "T") + "+00:00")
        assert abs(at - (first + last) / 2) <= 3, (shown[0], first, last)

        page.mouse("mousePressed", left + width * 0.25, top + 10, buttons=1)
        page.mouse("mouseMoved", left + width * 0.5, top + 10, buttons=1)
        page.mouse("mouseReleased", left + width * 0.5, top + 10)
        ranges = page.evaluate("[...document.querySelectorAll('.chart')].map(e => e.dataset.range)")
        assert len(ranges) >= 16 and len(set(ranges)) == 1, ranges
        lo, hi = (float(v) for v in ranges[0].split(","))
        span_s = last - first
        assert abs(lo - span_s / 4) <= 2 and abs(hi - span_s / 2) <= 2, (lo, hi, span_s)
        assert re.fullmatch(r"#from=[\dT:-]+Z&to=[\dT:-]+Z", page.evaluate("location.hash"))

        for kind in ("mousePressed", "mouseReleased") * 2:
            page.mouse(kind, left + width / 2, top + 10, clicks=2)
        ranges = page.evaluate("[...document.querySelectorAll('.chart')].map(e => e.dataset.range)")
        assert set(ranges) == {f"0.000,{span_s:.3f}"}, set(ranges)
    finally:
        page.close()


SADC = "/usr/lib/sysstat/sadc"


@pytest.mark.skipif(not Path(SADC).exists(), reason="needs sysstat's sadc (tests/run.sh)")
def test_report_of_sar_imports_at_two_steps(tmp_path: Path) -> None:
    """Real sadc files of this machine, at 1 s and at 2 s, imported as the standby and the
    primary: the report judges and draws them on the coarser step, as check --from does, and
    each chart holds one point per 2 s interval the host's CSV rows fall in."""
    files = {"stby": (tmp_path / "sa1", "1", "7"), "prim": (tmp_path / "sa2", "2", "4")}
    runs = [
        subprocess.Popen([SADC, "-S", "XALL", step, count, str(path)])
        for path, step, count in files.values()
    ]
    try:
        for p in runs:
            assert p.wait(timeout=30) == 0
    finally:
        for p in runs:
            if p.poll() is None:
                p.kill()
                p.wait()
    rec, out = tmp_path / "rec", tmp_path / "sar.html"
    for host, role in (("stby", "standby"), ("prim", "primary")):
        r = sgmon("import", "sar", str(files[host][0]), "--dir", str(rec), "--host", host,
                  "--role", role)  # fmt: skip
        assert r.returncode == 0, r.stderr
    r = sgmon("check", "--from", str(rec))
    assert "judged on the coarsest, 2-second samples" in r.stderr, r.stderr
    r = sgmon("report", str(rec), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "judged and drawn on the coarsest, 2-second samples" in out.read_text()
    run = chromium.run(out, "--dump-dom", "--virtual-time-budget=10000")
    assert run.console() == [] and "data-errors" not in run.stdout[:2000]
    drawn = charts(run.stdout)
    assert {"prim-cpu", "stby-cpu", "prim-util", "stby-util"} <= set(drawn), sorted(drawn)
    for cid in ("prim-cpu", "stby-cpu", "prim-runq", "stby-runq"):
        host, collector = collector_of(cid)
        cells = set()
        for path in (rec / host).glob(f"{collector}_*.csv"):
            for row in csv.DictReader(path.open(newline="")):
                cells.add(math.ceil(parse_time(row["time"]) / 2 - 1e-9))
        assert drawn[cid] == len(cells) >= 3, (cid, drawn[cid], len(cells))


def test_report_of_one_awr_text_report(tmp_path: Path) -> None:
    """A DBA's only evidence, one AWR text report (seed 001's waits), imported: one tick, drawn
    as points a step either side of it rather than on an axis of years, and the finding check
    names from it."""
    rec, out = tmp_path / "awr", tmp_path / "awr.html"
    data_file = DATA / "awr" / "awrrpt_seed001.txt"
    r = sgmon("import", "awr-report", str(data_file), "--dir", str(rec), "--role", "primary")
    assert r.returncode == 0, r.stderr
    r = sgmon("report", str(rec), "-o", str(out))
    assert r.returncode == 0, r.stderr
    check = json.loads(sgmon("check", "--from", str(rec), "--format", "json").stdout)
    run = chromium.run(out, "--dump-dom", "--virtual-time-budget=10000")
    assert run.console() == [] and "data-errors" not in run.stdout[:2000]
    drawn = charts(run.stdout)
    assert drawn and set(drawn.values()) == {1}
    step = json.loads(re.search(r'id="sgmon-data">(.*?)</script>', run.stdout, re.S)[1])["step"]
    ranges = set(re.findall(r'<div class="chart" id="[^"]+"[^>]*data-range="([^"]+)"', run.stdout))
    assert ranges == {f"{-step:.3f},{step:.3f}"}, ranges
    top = check["findings"][0]
    diagnosis = re.search(r'id="top-finding">(.*?)</div>', run.stdout, re.S)[1]
    assert html.escape(f"{top['host']}: {top['title']}", quote=False) in diagnosis
