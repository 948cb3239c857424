"""Every scenario at every terminal size: what the top finding cites is on screen, in its pane.

One real `sgmon demo` per scenario runs in a private tmux server; the test resizes its window
through the sizes people use, waits for the scenario's finding, pauses (so the finding and the
panes show one instant) and reads the screen: the finding's own numbers must stand next to their
labels in the pane of the host the finding is about, without scrolling.
"""

from __future__ import annotations

import re
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from tmuxkit import Tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

SIZES = ((220, 60), (160, 48), (120, 40), (80, 24))
NUM = r"[\d.]+"


@dataclass(frozen=True)
class Cited:
    """What one scenario's top finding says, and where its evidence must be read."""

    host: str
    """The pane's title (PRIMARY or STANDBY)."""
    finding: str
    """A regex on the findings' text; its named groups are the numbers the finding cites."""
    shown: tuple[str, ...]
    """Regexes the host's pane must match, ``{name}`` standing for the finding's number."""


CASES = {
    "primary-cpu-starved": Cited(  # LGWR's own run-queue delay, not %idle, names the cause
        "PRIMARY",
        rf"(?P<name>LGWR|LG\d\d|NSS\d) waits for a CPU (?P<runq>{NUM}) ms/s",
        (rf"\b{{name}}\s+[RSD]\S*\s+{NUM}\s+{{runq}}\s",),
    ),
    "rto-stall": Cited(
        "PRIMARY",
        rf"DG socket retransmits, rto (?P<rto>{NUM}) ms",
        (
            r"rtt +var +rto .*retx",
            rf"10\.0\.1\.2:1521 +{NUM} +{NUM} +{{rto}} ",
            rf"host retx/s {NUM} +rto-expiries/s {NUM}",
        ),
    ),
    "rto-stall-fixed": Cited(
        "PRIMARY",
        rf"DG socket retransmits, rto (?P<rto>{NUM}) ms",
        (
            r"rtt +var +rto .*retx",
            rf"10\.0\.1\.2:1521 +{NUM} +{NUM} +{{rto}} ",
            rf"host retx/s {NUM} +rto-expiries/s {NUM}",
        ),
    ),
    "standby-iops-cap": Cited(
        "STANDBY",
        rf"disk (?P<dev>\w+) await (?P<aw>{NUM}) ms vs svctm (?P<svctm>{NUM}) ms, queue "
        rf"(?P<queue>{NUM})",
        (
            r"\b{dev} .* {aw} +{queue} +{svctm} ",
            rf"RFS write +{NUM}" + rf" +(?:{NUM}|-)" * 4,
        ),  # no write in a burst of reads: "-"
    ),
    "log-switch-storm": Cited(
        "PRIMARY",
        r"<- log switch",
        (rf"thread_1 .*switches\S* ({NUM}|-) ",),  # - until the view has a rate
    ),
    "transport-stopped": Cited(
        "PRIMARY",
        r"destination status ERROR",
        (r"dest_2 +STBY +SYNC +YES +ERROR",),
    ),
    "healthy": Cited(  # the title's numbers are the analysis' budget, smoothed over ticks
        "PRIMARY",
        r"SYNC Remote Write .* consider Fast Sync",
        (rf"SYNC Remote Write +{NUM} +{NUM} +{NUM} +{NUM}", rf"standby io {NUM} "),
    ),
}


def box(screen: str, title: str) -> str | None:
    """The text inside the bordered box whose top border starts with ``title``, or None."""
    lines = screen.splitlines()
    for y, line in enumerate(lines):
        x = line.find(f"╭─ {title}")
        if x < 0:
            continue
        right = line.find("╮", x)
        inside = []
        for row in lines[y + 1 :]:
            if row[x : x + 1] == "╰":
                return "\n".join(inside)
            inside.append(row[x + 1 : right])
        return "\n".join(inside)
    return None


PEAK = re.compile(r"\(peak (\d\d:\d\d:\d\d) of")


def _peak_in_full(tmux: Tmux, host: str) -> re.Match[str] | None:
    """The top finding's peak time read as a person reads it where the findings box is too
    short for the whole title: f, Enter (the whole finding, given the screen), then Enter, z
    and f back to the panes."""
    tmux.keys("f")
    tmux.keys("Enter")
    screen = tmux.settled(lambda s: bool(PEAK.search(" ".join(findings(s).split()))), "the finding")
    for key in ("Enter", "z", "f"):
        tmux.keys(key)
    tmux.settled(lambda s: box(s, host) is not None, "the panes again")
    return PEAK.search(" ".join(findings(screen).split()))


def findings(screen: str) -> str:
    """The findings' text as one line (a title wraps at spaces in a narrow column)."""
    text = box(screen, "FINDINGS") or ""
    return " ".join(line.strip() for line in text.splitlines())


class Demos:
    """One demo per scenario, started when its first size is tested, stopped at the next."""

    def __init__(self) -> None:
        self.tmux = Tmux("sizes")
        self.scenario = ""

    def show(self, scenario: str, width: int, height: int) -> Tmux:
        """The scenario's demo, live, at this size."""
        if scenario != self.scenario:
            old = self.tmux.session
            self.tmux.session = scenario
            # 3x speed, fault 5 simulated seconds in: the analysis sees it within seconds.
            self.tmux.start(
                f"{sys.executable} -m sgmon demo --scenario {scenario} --speed 3 --onset 5s",
                width,
                height,
            )
            if self.scenario:  # after the start: the server ends with its last session
                self.tmux.run("kill-session", "-t", old)
            self.scenario = scenario
        else:
            self.tmux.resize(width, height)
            self.tmux.keys("End")  # back to live after the last size's pause
            self.tmux.wait_for(lambda s: " LIVE " in s, "live")
        return self.tmux


@pytest.fixture(scope="module")
def demos() -> Iterator[Demos]:
    d = Demos()
    try:
        yield d
    finally:
        d.tmux.kill()


@pytest.mark.parametrize(
    ("scenario", "size"),
    [(s, z) for s in CASES for z in SIZES],
    ids=[f"{s}-{w}x{h}" for s in CASES for w, h in SIZES],
)
def test_the_top_findings_evidence_is_on_screen(
    demos: Demos, scenario: str, size: tuple[int, int]
) -> None:
    width, height = size
    case = CASES[scenario]
    tmux = demos.show(scenario, width, height)
    pattern = re.compile(case.finding)

    def ready(screen: str) -> bool:
        lines = screen.splitlines()
        return (
            len(lines) == height
            and all(len(line) <= width for line in lines)
            and bool(pattern.search(findings(screen)))
        )

    tmux.wait_for(ready, f"the {scenario} finding at {width}x{height}", timeout=90)
    tmux.keys("space")  # hold one instant: the finding and the panes show the same one
    screen = tmux.settled(lambda s: " PAUSED " in s, "pause")
    said = pattern.search(findings(screen))
    assert said is not None, f"the finding went away on pause:\n{screen}"
    pane = box(screen, case.host)
    assert pane is not None, f"no {case.host} pane at {width}x{height}:\n{screen}"
    if width >= 100:  # the one-pane view shows the finding's host; wider, both hosts
        assert box(screen, "PRIMARY") is not None and box(screen, "STANDBY") is not None
    values = {k: re.escape(v) for k, v in said.groupdict().items()}
    peak = PEAK.search(" ".join(findings(screen).split()))
    if peak is None and "(peak" in findings(screen):
        peak = _peak_in_full(tmux, case.host)  # 80x24 cuts the title before its peak's time
    if peak is not None and f" at {peak.group(1)} " not in pane:
        # the finding is titled by its episode's worst moment: its numbers are that instant's
        tmux.keys("g")
        tmux.wait_for(lambda s: "go to" in s.lower(), "the go-to line")
        tmux.run("send-keys", "-t", tmux.session, "-l", peak.group(1))
        tmux.keys("Enter")
        screen = tmux.settled(lambda s: f" at {peak.group(1)} " in s, f"the cursor at {peak[1]}")
        pane = box(screen, case.host) or ""
    for shown in case.shown:
        want = shown.format(**values)
        assert re.search(want, pane), (
            f"{scenario} at {width}x{height}: /{want}/ is not in the {case.host} pane, "
            f"though the finding says: {said.group(0)}\n{screen}"
        )


HOSTS = ("primary", "standby_b", "standby_a", "standby_c")
"""Seed 003's configuration (``cascade-iops-cap``) along its commit path."""


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_every_host_has_a_pane_or_a_line_of_the_strip(demos: Demos, size: tuple[int, int]) -> None:
    """Four hosts: the panes take the primary, then the SYNC standby; the ASYNC and the
    cascaded standby are each one line of the strip with their place and lag, whole, between
    the panes and the findings; in the one-pane view the strip lists the three others."""
    width, height = size
    tmux = demos.show("cascade-iops-cap", width, height)
    entry = re.compile(rf"^ ?({'|'.join(HOSTS)})(  | · |\s*$)")  # short entries share a line

    def ready(screen: str) -> bool:
        lines = screen.splitlines()
        return (
            len(lines) == height
            and all(len(line) <= width for line in lines)
            and re.search(
                rf"^ standby_c  cascaded from standby_b \(dest_2 ASYNC\) · lag {NUM}/{NUM} s",
                screen,
                re.M,
            )
            is not None
        )

    tmux.wait_for(ready, f"the strip at {width}x{height}", timeout=90)
    tmux.keys("space")
    screen = tmux.settled(lambda s: " PAUSED " in s, "pause")
    lines = screen.splitlines()
    panes = re.findall(r"╭─ (?:PRIMARY|STANDBY)  (\w+)", screen)
    strip = [
        (y, m.group(1))
        for y, line in enumerate(lines)
        for part in line.split(" │ ")
        if (m := entry.match(part))
    ]
    assert sorted(panes + [name for _, name in strip]) == sorted(HOSTS), screen
    if width >= 100:
        assert panes == ["primary", "standby_b"], screen
    else:
        assert len(panes) == 1 and len(strip) == 3, screen
    if width < 210:  # the findings under the panes and the strip, not beside them
        findings = next(y for y, line in enumerate(lines) if "FINDINGS" in line)
        panes_end = max(y for y, line in enumerate(lines[:findings]) if line.startswith("╰"))
        assert all(panes_end < y < findings for y, _ in strip), screen
    assert "q quit" in lines[-1]
    a = next(p for line in lines for p in line.split(" │ ") if p.lstrip().startswith("standby_a  "))
    assert re.search(rf"standby_a  ASYNC lag risk · lag {NUM}/{NUM} s · dest_3 VALID", a), a
