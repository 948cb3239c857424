"""The lab's hosts as one sgmon Source: a collector process per namespace, frames as JSON.

The processes tick on the same wall-clock boundaries, so the primary's and the standbys' frames
line up as real hosts' do; the monitor, the recorder and the analysis take them as they take
any other source.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from sgmon.hosts import HostInfo
from sgmon.model import Frame, Schema, schema_from_dict

if TYPE_CHECKING:
    from sgmon.lab.run import Lab


class LabSource:
    """Frames of the lab's ``primary``, ``standby`` and, if it has one, ASYNC standby (see the
    module docstring)."""

    def __init__(self, lab: Lab, interval: float = 1.0) -> None:
        self.lab = lab
        self.interval = interval
        hosts = lab.hosts()
        self.hosts = [HostInfo(h.name, h.role) for h in hosts]
        self._schemas: dict[str, Schema] = {}
        self._queue: queue.Queue[Frame | None] = queue.Queue()
        self._procs: list[subprocess.Popen] = []
        for h in hosts:
            proc = lab.spawn(
                h.side, "sgmon.lab.watch", "--host", h.name, "--role", h.role,
                "--standin", str(h.db), "--sid", h.sid, "--device", h.device,
                "--interface", h.interface, "--port", str(lab.opts.port), "--cpu", str(h.cpu),
                "--interval", str(interval), "--duration", str(lab.opts.duration),
                stdout=subprocess.PIPE,
            )  # fmt: skip
            self._procs.append(proc)
            assert proc.stdout is not None
            first = proc.stdout.readline()
            if not first:
                raise RuntimeError(f"the lab's {h.name} collectors did not start")
            self._schemas[h.name] = schema_from_dict(json.loads(first)["schema"])
            threading.Thread(target=self._read, args=(proc,), daemon=True).start()

    def schema(self, host: str) -> Schema:
        """Declared fields of the host's collectors."""
        return self._schemas[host]

    def _read(self, proc: subprocess.Popen) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            self._queue.put(Frame.from_dict(json.loads(line)))
        self._queue.put(None)

    def run(self, emit: Callable[[Frame], None], stop: threading.Event) -> None:
        """Emit the hosts' frames, in arrival order, until stopped or every stream ends."""
        ended = 0
        while not stop.is_set() and ended < len(self._procs):
            try:
                frame = self._queue.get(timeout=0.2)
            except queue.Empty:
                continue
            if frame is None:
                ended += 1
                continue
            emit(frame)

    def frames(self, seconds: float) -> list[Frame]:
        """Collect the frames of the next ``seconds`` (for tests and scripted runs)."""
        out: list[Frame] = []
        stop = threading.Event()
        timer = threading.Timer(seconds, stop.set)
        timer.start()
        try:
            self.run(out.append, stop)
        finally:
            timer.cancel()
        return out

    def close(self) -> None:
        """Stop the collector processes."""
        for proc in self._procs:
            self.lab.end(proc)
