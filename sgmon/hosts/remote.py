"""A remote host: the user's own ``ssh`` running ``sgmon agent`` there, its NDJSON stream consumed.

No daemon and no open port: ssh brings the user's keys, ssh config and known_hosts.  ``BatchMode``
makes a host that wants a password fail at once with one line instead of prompting;
``ServerAliveInterval`` makes ssh itself notice a dead link.

- **Staleness.**  When no frame arrived for ``2 x interval`` (``SILENT_INTERVALS``), or at once
  when the ssh session ends, the host is marked stale: a frame whose collectors are all ``stale``
  is emitted every interval, so every sink shows it (the analysis raises it as a silent host),
  until frames flow again.  A silent connection is killed after ``dead_after`` seconds.
- **Reconnects** back off 1, 2, 4 ... ``max_backoff`` seconds, back to 1 after a good session.
- **Attribution.**  Only frames of this source's own ssh process are read, only for the agent's
  host named in its header, and each is re-labelled with the configured host name and role, so a
  frame can never land on another host; sequence numbers must increase within a session.
- **Clock offset** (Cristian's method): every ``ping_every`` seconds the consumer writes ``ping t0``
  (its clock) on the agent's stdin; the agent answers ``{"pong": t0, "time": t_agent}``; at
  receipt ``t3``, ``offset = t_agent - (t0 + t3) / 2`` with an error of at most half the round
  trip.  Of the last 8 samples the one with the shortest round trip is kept (queueing only ever
  adds delay).  ``clock_offset`` is remote minus local, in seconds; ``None`` until measured.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable

from sgmon.config import HostConfig
from sgmon.hosts import HostInfo
from sgmon.model import (
    SILENT_INTERVALS,
    CollectorResult,
    Frame,
    Schema,
    Status,
    schema_from_dict,
    silence,
)


class RemoteSource:
    """Frames of one remote host through ``ssh ... sgmon agent``."""

    def __init__(
        self,
        host: HostConfig,
        interval: float | None = None,
        max_backoff: float = 30.0,
        ping_every: float = 5.0,
        dead_after: float = 30.0,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self.config = host
        self.name = host.name
        self.hosts = [HostInfo(host.name, host.role)]
        self.interval = interval or 1.0
        self._agent_interval = interval
        self.max_backoff = max_backoff
        self.ping_every = ping_every
        self.dead_after = dead_after
        self.warn = warn or (lambda m: print(f"sgmon: {m}", file=sys.stderr, flush=True))
        self._schema: Schema = {}
        self._samples: deque[tuple[float, float]] = deque(maxlen=8)  # (rtt, offset)
        self.clock_offset: float | None = None
        """Remote clock minus local clock, seconds (see the module docstring)."""
        self.rtt: float | None = None
        self.stale = True
        self.connected = False
        self.last_error: str | None = None
        self.dropped = 0
        """Lines ignored: malformed, another host's, or out of sequence."""
        self._proc: subprocess.Popen | None = None
        self._seq = 0
        self._last_frame = time.monotonic()
        self._last_stale = 0.0

    def argv(self) -> list[str]:
        """The ssh command line."""
        alive = max(1, round(min(self.interval * 3, 10)))
        remote = f"{self.config.sgmon_path} agent"
        if self._agent_interval:
            remote += f" --interval {self._agent_interval:g}"
        if self.config.role:  # config check allows only primary or standby: no quoting needed
            remote += f" --role {self.config.role}"
        return [
            *(self.config.ssh_command or ("ssh",)),
            "-T",
            "-o", "BatchMode=yes",
            "-o", f"ServerAliveInterval={alive}",
            "-o", "ServerAliveCountMax=3",
            "-o", "ConnectTimeout=10",
            *self.config.ssh_options,
            self.config.ssh,
            remote,
        ]  # fmt: skip

    def schema(self, host: str) -> Schema:
        """The agent's declared fields (empty until its header arrived)."""
        return self._schema

    # --- the session loop -----------------------------------------------------------------

    def run(self, emit: Callable[[Frame], None], stop: threading.Event) -> None:
        """Connect, stream, reconnect with backoff, until ``stop``."""
        backoff = 1.0
        while not stop.is_set():
            good = self._session(emit, stop)
            if stop.is_set():
                break
            self._mark_stale(emit, gone=True)  # the agent or its ssh is gone: news at once
            backoff = 1.0 if good else min(backoff * 2, self.max_backoff)
            end = time.monotonic() + backoff
            while not stop.is_set() and time.monotonic() < end:
                self._mark_stale(emit)
                stop.wait(min(self.interval, end - time.monotonic()))

    def _session(self, emit: Callable[[Frame], None], stop: threading.Event) -> bool:
        """One ssh session; True if the agent's header arrived."""
        try:
            proc = subprocess.Popen(
                self.argv(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # our own process group: killed whole, never orphaned
            )
        except OSError as e:
            self._report(f"cannot run ssh: {e.strerror}; install openssh-client")
            return False
        self._proc = proc
        lines: queue.Queue[bytes | None] = queue.Queue()
        errors: deque[str] = deque(maxlen=5)
        threading.Thread(target=_pump, args=(proc.stdout, lines.put), daemon=True).start()

        def keep_error(line: bytes | None) -> None:
            if line:  # None: the stream ended
                errors.append(line.decode(errors="replace").strip())

        threading.Thread(target=_pump, args=(proc.stderr, keep_error), daemon=True).start()
        got_header = False
        remote_host: str | None = None
        self._seq = 0
        next_ping = last_data = time.monotonic()
        try:
            while not stop.is_set():
                now = time.monotonic()
                if got_header and now >= next_ping:
                    self._ping(proc)
                    next_ping = now + self.ping_every
                if now - last_data > self.dead_after:
                    errors.append(f"no data for {self.dead_after:g}s")
                    break
                self._mark_stale(emit)
                try:
                    raw = lines.get(timeout=min(self.interval, 0.5))
                except queue.Empty:
                    continue
                if raw is None:
                    break
                last_data = time.monotonic()
                try:
                    d = json.loads(raw)
                except ValueError:
                    self.dropped += 1
                    continue
                if not isinstance(d, dict):
                    self.dropped += 1
                elif "sgmon_agent" in d:
                    remote_host = self._header(d)
                    got_header = remote_host is not None
                    if got_header:
                        self._last_frame = time.monotonic()
                        self.connected = True
                        if self.last_error is not None:
                            self.warn(f"{self.config.ssh}: connected again")
                        self.last_error = None
                elif "pong" in d:
                    self._pong(d)
                elif "v" in d and got_header:
                    self._frame(d, remote_host, emit)
                else:
                    self.dropped += 1
        finally:
            self.connected = False
            self._kill(proc)
        if not stop.is_set():
            rc = proc.returncode
            why = errors[-1] if errors else f"ssh exited with status {rc}"
            self._report(_explain(why, rc))
        return got_header

    def _header(self, d: dict) -> str | None:
        names = [h.get("name") for h in d.get("hosts", [])]
        if not names:
            self.dropped += 1
            return None
        remote = self.name if self.name in names else names[0]
        try:
            self._schema = schema_from_dict(d.get("schemas", {}).get(remote, {}))
        except (KeyError, ValueError, TypeError):
            self.dropped += 1
            return None
        self.interval = float(d.get("interval", self.interval))
        return remote

    def _frame(self, d: dict, remote_host: str | None, emit: Callable[[Frame], None]) -> None:
        if d.get("host") != remote_host:
            self.dropped += 1  # another host of a multi-host agent: not ours
            return
        try:
            f = Frame.from_dict(d)
        except (KeyError, ValueError, TypeError):
            self.dropped += 1
            return
        if f.seq <= self._seq:
            self.dropped += 1
            return
        self._seq = f.seq
        self._last_frame = time.monotonic()
        self.stale = False
        role = self.hosts[0].role or f.role
        emit(Frame(self.name, f.time, f.seq, f.interval, f.collectors, f.events, role))

    def _mark_stale(self, emit: Callable[[Frame], None], gone: bool = False) -> None:
        """While frames do not come, emit an all-stale frame every interval; at once when the
        session is ``gone``."""
        now = time.monotonic()
        silent = now - self._last_frame
        if not gone and silent < SILENT_INTERVALS * self.interval:
            return
        if now - self._last_stale < self.interval:
            return
        self.stale = True
        self._last_stale = now
        if not self._schema:
            return
        err = silence(self.config.ssh, silent)
        t = time.time() + (self.clock_offset or 0.0)
        results = {c: CollectorResult(Status.STALE, error=err) for c in self._schema}
        emit(Frame(self.name, t, 0, self.interval, results, (), self.hosts[0].role))

    # --- clock offset ---------------------------------------------------------------------

    def _ping(self, proc: subprocess.Popen) -> None:
        assert proc.stdin is not None
        with contextlib.suppress(OSError, ValueError):
            proc.stdin.write(f"ping {time.time():.6f}\n".encode())
            proc.stdin.flush()

    def _pong(self, d: dict) -> None:
        t3 = time.time()
        try:
            t0, remote = float(d["pong"]), float(d["time"])
        except (KeyError, TypeError, ValueError):
            self.dropped += 1
            return
        if not t0 <= t3:
            return
        self._samples.append((t3 - t0, remote - (t0 + t3) / 2))
        self.rtt, self.clock_offset = min(self._samples)

    # --- process handling -----------------------------------------------------------------

    def _kill(self, proc: subprocess.Popen) -> None:
        with contextlib.suppress(OSError):
            if proc.stdin:
                proc.stdin.close()
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(2)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(2)
        self._proc = None

    def _report(self, message: str) -> None:
        """One line per distinct problem, not one per retry."""
        if message != self.last_error:
            self.warn(f"{self.config.ssh}: {message}")
        self.last_error = message

    def close(self) -> None:
        """Stop the ssh process if one is running."""
        if self._proc is not None:
            self._kill(self._proc)


def _pump(stream, put: Callable) -> None:
    """Copy lines from a pipe to ``put``; ``None`` at the end."""
    try:
        for line in iter(stream.readline, b""):
            put(line)
    except (OSError, ValueError):
        pass
    put(None)


def _explain(why: str, rc: int | None) -> str:
    """ssh's last words, with what to do."""
    low = why.lower()
    if "permission denied" in low or "password" in low:
        return f"{why} (BatchMode is on: set up key login for sgmon, no password prompts)"
    if "host key verification failed" in low:
        return f"{why} (connect once by hand to accept the host key)"
    if rc == 127 or "not found" in low:
        return f"{why} (set sgmon_path for this host to the sgmon command on the far side)"
    return f"{why}; retrying"
