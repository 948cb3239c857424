"""Between the Monitor's dispatcher and the screen: the judgements by instant, and liveness.

The Monitor judges every frame once (``sgmon.judgement``) and calls ``Feed.add`` with the frame
and its verdict; the UI thread reads what it needs for the instant under the cursor.  The
verdicts are kept per frame, so the cursor shows the grades, findings and outliers *of that
instant*, not today's.
"""

from __future__ import annotations

import bisect
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from sgmon.judgement import Judge
from sgmon.model import Frame, Schema, unheard
from sgmon.monitor import History
from sgmon.topology import Topology
from sgmon.verdicts import AnalysisState, Judgement


class Feed:
    """Frames and their judgements in (any thread), views of one instant out (UI thread)."""

    def __init__(self, history: History, judge: Judge, keep: int = 900) -> None:
        self.history = history
        self.judge = judge
        self.keep = keep
        self.schemas: dict[str, Schema] = {}
        """Schemas of hosts no source declares (frames ingested by tests and snapshots)."""
        self._states: OrderedDict[float, AnalysisState] = OrderedDict()
        self._verdicts: dict[str, OrderedDict[float, Judgement]] = {}
        self._arrived: dict[str, float] = {}  # host -> monotonic time of its last frame heard
        self._heard: dict[str, float] = {}  # host -> time of its last frame with numbers
        self._lock = threading.Lock()
        self.what_if: tuple[str, ...] | None = None
        """What a change would buy, as the primaries' commit budget panels show it after the
        ``w`` key (None: not shown; one line while it is being worked out)."""

    def work_out_what_if(self, clock: Callable[[float], str]) -> list[str]:
        """What a change would buy, from every host's frames of the history (off the drawing
        thread: it takes a second or two)."""
        frames = [f for h in self.history.hosts() for f in self.history.frames(h)]
        frames.sort(key=lambda f: (f.time, f.host))
        return self.judge.what_if(frames, clock)

    @property
    def analysis_note(self) -> str:
        """Why there are no findings, when the analysis could not start or stopped."""
        return self.judge.note

    @property
    def topology(self) -> Topology | None:
        """The hosts' places at the analysis' latest evaluation (None: no analysis, or none
        yet): the newest, not the cursor's; the panes' order and the strip read it."""
        analyzer = self.judge.analyzer
        return analyzer.topology if analyzer is not None else None

    def add(self, frame: Frame, judgement: Judgement, in_history: bool = True) -> None:
        """Take one judged frame (and into the history, unless the Monitor already put it)."""
        if not in_history:
            self.history.add(frame)
        with self._lock:
            if not unheard(frame):  # a silent host's stand-in frames are no sign of life
                self._arrived[frame.host] = time.monotonic()
                self._heard[frame.host] = frame.time
            verdicts = self._verdicts.setdefault(frame.host, OrderedDict())
            if verdicts:  # the live view moves on: the cursor rarely comes back
                next(reversed(verdicts.values())).forget_grades()
            verdicts[frame.time] = judgement
            while len(verdicts) > self.keep:
                verdicts.popitem(last=False)
            if judgement.state is not None:
                self._states[frame.time] = judgement.state
                self._states.move_to_end(frame.time)
                while len(self._states) > self.keep:
                    self._states.popitem(last=False)

    def state_at(self, t: float) -> AnalysisState | None:
        """The analysis state of the newest frame time at or before ``t``."""
        with self._lock:
            times = list(self._states)
            i = bisect.bisect_right(times, t + 1e-6)
            return self._states[times[i - 1]] if i else None

    def verdict(self, frame: Frame | None) -> Judgement | None:
        """The judgement of one frame of the history."""
        if frame is None:
            return None
        with self._lock:
            verdicts = self._verdicts.get(frame.host)
            return verdicts.get(frame.time) if verdicts is not None else None

    def heard(self, host: str) -> float | None:
        """Time of the host's last frame with numbers (None: none yet)."""
        with self._lock:
            return self._heard.get(host)

    def quiet_for(self, host: str) -> float | None:
        """Seconds since the host's last frame with numbers arrived (None: never)."""
        with self._lock:
            got = self._arrived.get(host)
        return None if got is None else time.monotonic() - got

    def skew_ms(self, host: str, reference: str) -> float | None:
        """Estimated clock offset of ``host`` against ``reference`` (the Judge's estimate)."""
        return self.judge.skew_ms(host, reference)
