"""Frames and a source that plays a fixed list of them, for the Monitor's tests."""

from __future__ import annotations

import threading
from collections.abc import Callable

from sgmon.hosts import HostInfo
from sgmon.model import CollectorResult, Frame, Status


def frame(host: str, t: float, v: float) -> Frame:
    rows = {"all": {"x": v}}
    return Frame(host, t, int(t), 1.0, {"c": CollectorResult(Status.OK, rows)})


class ListSource:
    """A source that plays a fixed list of frames and ends."""

    def __init__(self, host: str, frames: list[Frame]) -> None:
        self.hosts = [HostInfo(host, "")]
        self.interval = 1.0
        self._frames = frames
        self.closed = False

    def schema(self, host: str) -> dict:
        return {}

    def run(self, emit: Callable[[Frame], None], stop: threading.Event) -> None:
        for f in self._frames:
            if stop.is_set():
                return
            emit(f)

    def close(self) -> None:
        self.closed = True
