"""The one judgement of every frame: the stage that grades it and runs the analysis once, so
that every sink reads the same verdict.

The Monitor runs a ``Judge`` on each frame and hands each sink the frame with its
``Judgement`` (``sgmon.verdicts``): the dashboard, the status line, the recorder's findings.csv,
the Prometheus exporter, ``check`` and ``replay`` all read grades and findings from it and grade
nothing themselves.  A cell's grade is its static limit's (``sgmon.grading``), raised by the
analysis while the series is an open outlier that is out of line this very tick.

Above the analysis; a ``Judge`` imports it only when asked to run it (the agent and the exporter
grade without it).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from sgmon.config import Config
from sgmon.grading import Grader, cpu_count
from sgmon.model import Frame, Schema
from sgmon.verdicts import Judgement

if TYPE_CHECKING:
    from sgmon.analysis import Analyzer


class Judge:
    """The judgement stage: grades every frame and, when it runs the analysis, feeds it once.

    ``offsets`` maps a host to its source when the source measures its clock offset (a remote
    agent's ping/pong); a ``live`` stage estimates the other hosts' offsets from arrival times.
    A recording is judged with no skew, so the dashboard's replay and ``check --from`` agree.
    """

    def __init__(
        self,
        config: Config | None = None,
        schema_of: Callable[[str], Schema] | None = None,
        analysis: bool = True,
        live: bool = True,
        offsets: Mapping[str, Any] | None = None,
    ) -> None:
        self.config = config or Config()
        self.grader = Grader(self.config.thresholds, schema_of)
        self.live = live
        self.offsets = dict(offsets or {})
        self.analyzer: Analyzer | None = None
        self.note = "" if analysis else "analysis not run"
        """Why there are no findings, when the analysis could not start or stopped."""
        self._skew: dict[str, float] = {}
        self.seconds = 0.0
        """How long judging the latest frame took (the analysis, mostly): `sgmon serve`
        exposes it."""
        if analysis:
            try:
                from sgmon.analysis import Analyzer

                self.analyzer = Analyzer(self.config, self.grader)
            except Exception as e:  # a broken analysis must not take the monitor down
                self.note = f"analysis failed to start: {e}"

    def __call__(self, frame: Frame) -> Judgement:
        """Judge one frame (frames of each host in time order), timed."""
        start = time.perf_counter()
        try:
            return self._judge(frame)
        finally:
            self.seconds = time.perf_counter() - start

    def _judge(self, frame: Frame) -> Judgement:
        measured = getattr(self.offsets.get(frame.host), "clock_offset", None)
        if measured is not None:
            self._skew[frame.host] = measured
        elif self.live:
            self._skew[frame.host] = frame.time - time.time()
        ncpu = cpu_count(frame)
        if self.analyzer is None:
            return Judgement(frame, self.grader, ncpu=ncpu)
        self.analyzer.skew = self.skew()
        try:
            self.analyzer.feed(frame)
            state = self.analyzer.state()
            opened, closed, changed = self.analyzer.changes()
        except Exception as e:  # keep the sinks going; say why the analysis stopped
            self.analyzer, self.note = None, f"analysis stopped: {e}"
            return Judgement(frame, self.grader, ncpu=ncpu)
        return Judgement(
            frame, self.grader, state, tuple(opened), tuple(closed), tuple(changed), ncpu
        )

    def what_if(self, frames: Iterable[Frame], clock: Callable[[float], str]) -> list[str]:
        """What a change would buy, as ``check`` says it, from ``frames`` (the dashboard's
        history, in time order) and the analysis' state now; none without the analysis.  Made
        when asked, never per tick: it replays the commit path, a second or two, so call it off
        the thread that draws."""
        if self.analyzer is None:
            return []
        from sgmon.analysis.whatif import Window

        window = Window()
        for frame in frames:
            window(frame)
        return window.lines(self.analyzer.state(), self.analyzer.topology, clock)

    def skew(self) -> float:
        """The spread of the hosts' clock offsets, seconds (0 with one host or a recording)."""
        if len(self._skew) < 2:
            return 0.0
        return max(self._skew.values()) - min(self._skew.values())

    def skew_ms(self, host: str, reference: str) -> float | None:
        """Estimated clock offset of ``host`` against ``reference``, milliseconds."""
        a, b = self._skew.get(host), self._skew.get(reference)
        return None if a is None or b is None else (a - b) * 1000.0


def judge_for(
    config: Config | None,
    sources: Iterable[Any],
    analysis: bool = True,
    schema_of: Callable[[str], Schema] | None = None,
) -> Judge:
    """The Judge of a set of sources, built the same way for every command: the config's
    thresholds, the sources' schemas, the clock offsets the sources measure, and no skew for
    recordings played back."""
    from sgmon.hosts import schema_lookup
    from sgmon.hosts.replay import replaying

    sources = list(sources)
    return Judge(
        config,
        schema_of or schema_lookup(sources),
        analysis=analysis,
        live=not replaying(sources),
        offsets={h.name: s for s in sources for h in s.hosts if hasattr(s, "clock_offset")},
    )
