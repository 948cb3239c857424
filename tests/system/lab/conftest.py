"""The lab's end-to-end tests: a real SYNC pair between namespaces, faults, sgmon's analysis.

Each test builds its own lab (about 3 s) and keeps its scenario short, so the whole directory
stays within a few minutes on two cores.  Without root, namespaces or cgroup v1 blkio every test
is skipped with the reason.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import nslab
import pytest

from sgmon.grading import RANK
from sgmon.hosts.replay import ReplaySource
from sgmon.judgement import Judge, judge_for
from sgmon.model import Frame
from sgmon.sinks.csvarchive import ArchiveWriter


@pytest.fixture
def lab(request) -> Iterator:
    """A running lab, removed after the test whatever happens.  A test changes its options with
    ``@pytest.mark.parametrize("lab", [{"loss_permille": 20}], indirect=True)``."""
    nslab.require_lab()
    from sgmon.lab.run import Lab, LabOptions

    with Lab(LabOptions(duration=150, **getattr(request, "param", {}))) as running:
        yield running


AROUND = 3  # ticks either side of a finding whose waits a failure message shows


class Run:
    """The lab's frames fed to sgmon's analysis, as the dashboard and the recorder get them."""

    def __init__(self, lab, archive: Path) -> None:
        self.lab = lab
        self.source = lab.source()
        self.judge = judge_for(lab.config(), [self.source])
        self.archive = archive
        self.recorder = ArchiveWriter(archive, self.source.schema, lab.opts.interval)
        self.frames: list[Frame] = []
        self.findings: list[tuple[float, list]] = []  # (frame time, active findings then)

    def collect(self, seconds: float) -> list[Frame]:
        """Feed the next ``seconds`` of frames to the recorder and the analysis; returns them."""
        got = self.source.frames(seconds)
        self.frames += got
        self._analyse(self.judge, got, self.findings)
        for f in got:
            self.recorder(f)
        return got

    @staticmethod
    def _analyse(judge: Judge, frames: list[Frame], out: list) -> None:
        for f in frames:
            state = judge(f).state
            assert state is not None, judge.note
            out.append((f.time, [x for x in state.findings if x.active]))

    def replayed(self) -> Run:
        """The same analysis over what the recorder wrote, read back by ``sgmon replay``'s
        source: a copy of this run whose findings come from the archive."""
        self.recorder.close()
        frames: list[Frame] = []
        replay = ReplaySource(self.archive, speed=0)
        replay.run(frames.append, threading.Event())
        copy = Run.__new__(Run)
        copy.frames, copy.findings = frames, []
        self._analyse(judge_for(self.lab.config(), [replay]), frames, copy.findings)
        return copy

    def switch(self, fault: str, on: bool = True) -> float:
        """Switch a fault; returns the wall-clock time it took effect."""
        self.lab.fault(fault, on)
        return time.time()

    def first(self, rule: str, host: str, since: float) -> float | None:
        """Time of the first frame after ``since`` with an active warn+ finding of ``rule`` on
        ``host``."""
        for t, active in self.findings:
            if t >= since and any(
                f.rule == rule and f.host == host and RANK[f.severity] >= RANK["warn"]
                for f in active
            ):
                return t
        return None

    def blamed(self, rule: str, since: float) -> dict[str, int]:
        """For each frame after ``since``: the host of the highest-ranked active finding of
        ``rule`` (findings come ranked); counts per host.  Two namespaces share one kernel, so
        load on the other host may raise the rule there too, but it must rank below."""
        hosts: dict[str, int] = {}
        for t, active in self.findings:
            top = next((f for f in active if f.rule == rule), None) if t >= since else None
            if top is not None:
                hosts[top.host] = hosts.get(top.host, 0) + 1
        return hosts

    def above_info(self, since: float = 0.0) -> list[str]:
        """Every warn+ finding active after ``since``: ``severity host rule: first title``."""
        out: dict[tuple[str, str, str], str] = {}
        for t, active in self.findings:
            for f in active:
                if t >= since and RANK[f.severity] > RANK["info"]:
                    out.setdefault((f.severity, f.host, f.rule), f.title)
        return [f"{s} {h} {r}: {title}" for (s, h, r), title in sorted(out.items())]

    def timeline(self) -> str:
        """Each warn+ finding's first tick, with its evidence, and the primary's commit waits
        around it: what a failure message needs to tell a real stall from a false alarm."""
        out = []
        seen: set[str] = set()
        for t, active in self.findings:
            for f in active:
                if RANK[f.severity] > RANK["info"] and f.key not in seen:
                    seen.add(f.key)
                    out.append(f"{t:.0f} {f.severity} {f.host} {f.rule}: {f.title}")
                    out += [f"    {e}" for e in f.evidence]
                    out += [f"    {line}" for line in self.waits_around(t)]
        return "\n".join(out)

    def waits_around(self, t: float) -> list[str]:
        """The primary's and the standby's non-empty wait histograms of the ticks near ``t``."""
        lines = []
        for f in self.frames:
            if abs(f.time - t) <= AROUND:
                for ev, row in f.rows("oracle_waits").items():
                    hist = [(b, c) for b, c in row.get("hist") or [] if c]
                    if hist:
                        lines.append(f"{f.time:.0f} {f.host} {ev}: {hist}")
        return lines

    def close(self) -> None:
        """Stop the collector processes and the recorder."""
        self.source.close()
        self.recorder.close()


@pytest.fixture
def run(lab, tmp_path) -> Iterator[Run]:
    """The running lab watched by sgmon's collectors, recorder and analysis."""
    r = Run(lab, tmp_path / "archive")
    yield r
    r.close()
