"""Between the collection threads and the screen: history, analysis by instant, liveness.

The Monitor's dispatcher thread calls ``Feed.add`` for every frame (a sink); the UI thread reads
what it needs for the instant under the cursor.  The analysis state is kept per frame time so the
cursor shows the findings and outliers *of that instant*, not today's.
"""

from __future__ import annotations

import bisect
import threading
import time
from collections import OrderedDict
from typing import Any

from sgmon.config import Config
from sgmon.model import Frame, Schema
from sgmon.monitor import History


def make_analyzer(config: Config | None) -> tuple[Any, str]:
    """The analysis engine if it is installed, else (None, why not)."""
    try:
        from sgmon.analysis import Analyzer
    except ImportError as e:
        return None, f"analysis not available ({e})"
    try:
        return Analyzer(config), ""
    except Exception as e:  # a broken analysis must not take the dashboard down
        return None, f"analysis failed to start: {e}"


class Feed:
    """Frames in (any thread), views of one instant out (UI thread)."""

    def __init__(
        self,
        history: History,
        analyzer: Any = None,
        keep: int = 900,
        offsets: dict[str, Any] | None = None,
        note: str = "",
    ) -> None:
        self.history = history
        self.offsets = offsets or {}
        """host -> its source, where the source measures its clock offset (``clock_offset``)."""
        self.analyzer = analyzer
        self.analysis_note = note or ("" if analyzer is not None else "analysis not available")
        """Why there are no findings, when the analysis could not start or stopped."""
        self.keep = keep
        self.schemas: dict[str, Schema] = {}
        self._states: OrderedDict[float, Any] = OrderedDict()
        self._arrived: dict[str, tuple[float, float]] = {}  # host -> (monotonic, wall) of arrival
        self._skew: dict[str, float] = {}
        self._lock = threading.Lock()

    def add(self, frame: Frame, in_history: bool = True) -> None:
        """Take one frame: history (unless the Monitor already added it), analysis, liveness."""
        if not in_history:
            self.history.add(frame)
        now_wall = time.time()
        measured = getattr(self.offsets.get(frame.host), "clock_offset", None)
        with self._lock:
            self._arrived[frame.host] = (time.monotonic(), now_wall)
            # A remote agent's ping/pong offset beats the arrival time, which includes transport.
            self._skew[frame.host] = measured if measured is not None else frame.time - now_wall
            spread = max(self._skew.values()) - min(self._skew.values())
        if self.analyzer is None:
            return
        self.analyzer.skew = spread  # the correlation's lag tolerance follows the skew
        try:
            self.analyzer.feed(frame)
            state = self.analyzer.state()
        except Exception as e:  # keep the screen alive; say why the analysis stopped
            self.analyzer, self.analysis_note = None, f"analysis stopped: {e}"
            return
        with self._lock:
            self._states[frame.time] = state
            self._states.move_to_end(frame.time)
            while len(self._states) > self.keep:
                self._states.popitem(last=False)

    def state_at(self, t: float) -> Any:
        """The analysis state of the newest frame time at or before ``t``."""
        with self._lock:
            times = list(self._states)
            i = bisect.bisect_right(times, t + 1e-6)
            return self._states[times[i - 1]] if i else None

    def quiet_for(self, host: str) -> float | None:
        """Seconds since the host's last frame arrived (None: never)."""
        with self._lock:
            got = self._arrived.get(host)
        return None if got is None else time.monotonic() - got[0]

    def skew_ms(self, host: str, reference: str) -> float | None:
        """Estimated clock offset of ``host`` against ``reference``, from frame arrival times."""
        with self._lock:
            a, b = self._skew.get(host), self._skew.get(reference)
        return None if a is None or b is None else (a - b) * 1000.0
