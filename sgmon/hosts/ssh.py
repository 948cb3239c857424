"""One remote host over the user's own ``ssh``: the session loop shared by the pump's source and
the installed agent's (sgmon/hosts/remote.py).

No daemon and no open port: ssh brings the user's keys, ssh config and known_hosts.  ``BatchMode``
makes a host that wants a password fail at once with one line instead of prompting;
``ServerAliveInterval`` makes ssh itself notice a dead link.

- **Staleness.**  When no frame arrived for ``2 x interval`` (``SILENT_INTERVALS``), or at once
  when the ssh session ends, the host is marked stale: a frame whose collectors are all ``stale``
  is emitted every interval, so every sink shows it (the analysis raises it as a silent host),
  until frames flow again.  A silent connection is killed after ``dead_after`` seconds.
- **Reconnects** back off 1, 2, 4 ... ``max_backoff`` seconds, back to 1 after a good session.
- **Attribution.**  Only messages of this source's own ssh process are read, and each frame is
  labelled with the configured host name and role, so a frame can never land on another host;
  an agent's frames only for the host named in its header, sequence numbers increasing.
- **Clock offset** (Cristian's method): every ``ping_every`` seconds the consumer writes ``ping t0``
  (its clock) on the far side's stdin; it answers ``{"pong": t0, "time": t_remote}``; at
  receipt ``t3``, ``offset = t_remote - (t0 + t3) / 2`` with an error of at most half the round
  trip.  Of the last 8 samples the one with the shortest round trip is kept (queueing only ever
  adds delay).  ``clock_offset`` is remote minus local, in seconds; ``None`` until measured.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import IO

from sgmon.collector import Collector
from sgmon.config import HostConfig
from sgmon.engine import Engine
from sgmon.errors import one_line
from sgmon.hosts import HostInfo, kin
from sgmon.hosts.farside import (
    SHOWN,
    STDERR_LINE,
    Inbox,
    Message,
    Notes,
    bounded_lines,
    far_text,
    plausible,
    stamp,
)
from sgmon.model import SILENT_INTERVALS, CollectorResult, Frame, Schema, Status, silence


class SshSource:
    """One remote host through ``ssh``: sessions, reconnects, staleness, the clock offset."""

    def __init__(
        self,
        host: HostConfig,
        interval: float | None = None,
        max_backoff: float = 30.0,
        ping_every: float = 5.0,
        dead_after: float = 30.0,
        warn: Callable[[str], None] | None = None,
        database: list[Collector] | None = None,
        once: bool = False,
        connect_timeout: int = 10,
    ) -> None:
        self.config = host
        self.name = host.name
        self.hosts = [HostInfo(host.name, host.role)]
        self.interval = interval or 1.0
        self._asked_interval = interval
        self.max_backoff = max_backoff
        self.ping_every = ping_every
        self.dead_after = dead_after
        self.warn = warn or (lambda m: print(f"sgmon: {one_line(m)}", file=sys.stderr, flush=True))
        self.notes = Notes(lambda m: self.warn(f"{self.config.ssh}: {m}"))
        """What the far side says or does wrong, each said once and its repeats counted."""
        self._why: str | None = None
        """Why this side ended the session (a corrupt stream), said as its end."""
        self.once = once
        """One session only (``config --check``): no message promises a retry."""
        self.connect_timeout = connect_timeout
        self._schema: Schema = {}
        self._samples: deque[tuple[float, float]] = deque(maxlen=8)  # (rtt, offset)
        self.clock_offset: float | None = None
        """Remote clock minus local clock, seconds (see the module docstring)."""
        self.rtt: float | None = None
        self.stale = True
        self.connected = False
        self.last_error: str | None = None
        self.far_hostname: str | None = None
        """The far side's hostname, from its hello (the pump) or its header (the agent)."""
        self.dropped = 0
        """Messages ignored: malformed, another host's, or out of sequence."""
        self.refused_clock: float | None = None
        """The last far-side time refused as over a day from ours (None: none was)."""
        self._proc: subprocess.Popen | None = None
        self._kin: list[kin.Kin] = []
        """The ssh command's descendants found at its end, until they are gone."""
        self._sessions = 0
        """Sessions started: with sgmon's pid and this source's, each one's kin.MARK."""
        self._greeted = False
        self._last_frame = time.monotonic()
        self._last_stale = 0.0
        self._database = Engine(database, self.interval, host.name, host.role) if database else None
        """The host's database collectors, run here on this machine's clock: sampled as each
        remote tick arrives, and on their own while the far side is silent."""

    def remote_command(self) -> str:
        """What ssh runs on the far side."""
        raise NotImplementedError

    def argv(self) -> list[str]:
        """The ssh command line."""
        alive = max(1, round(min(self.interval * 3, 10)))
        return [
            *(self.config.ssh_command or ("ssh",)),
            "-T",
            "-o", "BatchMode=yes",
            "-o", f"ServerAliveInterval={alive}",
            "-o", "ServerAliveCountMax=3",
            "-o", f"ConnectTimeout={self.connect_timeout}",
            *self.config.ssh_options,
            self.config.ssh,
            self.remote_command(),
        ]  # fmt: skip

    def schema(self, host: str) -> Schema:
        """The host's declared fields (empty until the far side first answered)."""
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
        """One ssh session; True if the far side greeted and sent nothing corrupt."""
        kin.adopt_orphans(self.warn)
        self._sessions += 1
        try:
            proc = kin.start_command(self.argv(), self._mark())
        except OSError as e:
            self._report(f"cannot run ssh: {e.strerror}; install openssh-client")
            return False
        self._proc = proc
        inbox = Inbox()
        errors: deque[str] = deque(maxlen=5)
        threading.Thread(target=self._read, args=(proc.stdout, inbox.put), daemon=True).start()

        def keep_error(line: bytes | None) -> None:
            if line and line.strip():  # None: the stream ended
                errors.append(far_text(line))

        stderr = threading.Thread(
            target=bounded_lines, args=(proc.stderr, STDERR_LINE, keep_error), daemon=True
        )
        stderr.start()
        self._greeted, self._why = False, None
        self._begin(proc)
        try:
            self._stream(proc, inbox, emit, stop, errors)
        finally:
            self.connected = False
            inbox.close()
            self._kill(proc)
        stderr.join(2)  # its last words, which may come after stdout's end
        self.notes.flush()
        if not stop.is_set():
            rc = proc.returncode
            why = self._why or (errors[-1] if errors else f"ssh exited with status {rc}")
            self._report(self._explain(why, rc))
        return self._greeted and self._why is None  # garbage after a hello: back off all the same

    def _stream(
        self,
        proc: subprocess.Popen,
        inbox: Inbox,
        emit: Callable[[Frame], None],
        stop: threading.Event,
        errors: deque[str],
    ) -> None:
        """Take the far side's messages until it ends, falls silent, or sends garbage."""
        next_ping = last_data = time.monotonic()
        while not stop.is_set() and self._why is None:
            now = time.monotonic()
            if self._greeted and now >= next_ping:
                self._write(proc, f"ping {time.time():.6f}\n")
                next_ping = now + self.ping_every
            if now - last_data > self.dead_after:
                errors.append(f"no data for {self.dead_after:g}s")
                return
            self._mark_stale(emit)
            self.notes.tick()
            try:
                msg = inbox.get(timeout=min(self.interval, 0.5))
            except TimeoutError:
                continue
            if msg is None:
                return
            last_data = time.monotonic()
            self._handle(*msg, proc, emit)

    def _begin(self, proc: subprocess.Popen) -> None:
        """Whatever the far side needs on stdin first."""

    def _read(self, stream: IO[bytes], put: Callable[[Message | None], None]) -> None:
        """Hand the far side's messages to the session; None at the end."""
        raise NotImplementedError

    def _handle(
        self, kind: bytes, payload: bytes, proc: subprocess.Popen, emit: Callable[[Frame], None]
    ) -> None:
        raise NotImplementedError

    def _greet(self) -> None:
        """The far side answered: connected (again)."""
        self._greeted = True
        self._last_frame = time.monotonic()
        self.connected = True
        if self.last_error is not None:
            self.warn(f"{self.config.ssh}: connected again")
        self.last_error = None

    def _emit(self, frame: Frame, emit: Callable[[Frame], None]) -> None:
        """A frame of this host, with its database's figures of the same tick added."""
        self._last_frame = time.monotonic()
        self.stale = False
        if self._database is not None:
            db = self._database.tick(frame.time)
            frame = Frame(
                self.name,
                frame.time,
                frame.seq,
                frame.interval,
                {**frame.collectors, **db.collectors},
                (*frame.events, *db.events),
                frame.role,
            )
        emit(frame)

    def _database_schema(self) -> Schema:
        return self._database.schema() if self._database is not None else {}

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
        results = {c: CollectorResult(Status.STALE, error=err) for c in self._schema}
        events: tuple = ()
        now_t = time.time()
        if self._database is not None:  # read from here: the database goes on without ssh
            db = self._database.tick(now_t)
            results.update(db.collectors)
            events = db.events
        emit(Frame(self.name, now_t, 0, self.interval, results, events, self.hosts[0].role))

    # --- clock offset ---------------------------------------------------------------------

    def _pong(self, d: object) -> None:
        """A clock sample, unless the pong names no ping of ours (sent within a minute) or a
        far clock over a day from ours."""
        t3 = time.time()
        try:
            t0, remote = float(d["pong"]), float(d["time"])  # type: ignore[index]
        except (KeyError, TypeError, ValueError, OverflowError):
            self.dropped += 1
            return
        if not t3 - 60 <= t0 <= t3:
            self.dropped += 1
            return
        if not plausible(remote, t3):
            self.refuse_clock("a clock reading", remote)
            return
        self._samples.append((t3 - t0, remote - (t0 + t3) / 2))
        self.rtt, self.clock_offset = min(self._samples)

    # --- process handling -----------------------------------------------------------------

    @staticmethod
    def _write(proc: subprocess.Popen, text: str) -> None:
        assert proc.stdin is not None
        with contextlib.suppress(OSError, ValueError):
            proc.stdin.write(text.encode())
            proc.stdin.flush()

    def refuse_clock(self, what: str, t: float) -> None:
        """One note (then a count) for a far-side time that cannot be one of ours."""
        self.dropped += 1
        self.refused_clock = t
        key = "a time from the far side over a day from this machine's clock refused"
        self.notes.say(
            f"{what} stamped {stamp(t)} is over a day from this machine's clock: refused (is the "
            "host's clock wrong?); this host's figures resume with a sane clock",
            key,
        )

    def unrecorded(self) -> str | None:
        """Why nothing of this host was recorded although its far side answered (its clock),
        or None: it was never reached, and the lines said on the way say why."""
        if self.refused_clock is None:
            return None
        return (
            f"every time it sent was over a day from this machine's clock (the last "
            f"{stamp(self.refused_clock)}); set the host's clock right (NTP)"
        )

    def _mark(self) -> str:
        """This session's kin.MARK: its descendants carry it, whoever their parent now is."""
        return f"{os.getpid()}.{id(self)}.{self._sessions}"

    def _kill(self, proc: subprocess.Popen) -> None:
        """End the ssh command and all it started (kin.end_command).  The descendants are kept
        until they are gone: a stop's ``close`` comes while the session's own ``_kill`` may be
        waiting on them, and must wait as well."""
        found = kin.of_command(proc, self._mark())
        self._kin = list(dict.fromkeys([*self._kin, *found]))
        with contextlib.suppress(OSError):
            if proc.stdin:
                proc.stdin.close()
        kin.end_command(proc, self._kin)
        self._kin = [k for k in self._kin if kin.alive(k)]
        self._proc = None

    def _report(self, message: str) -> None:
        """One line per distinct problem, not one per retry."""
        message = far_text(message, 2 * SHOWN)
        if message != self.last_error:
            self.warn(f"{self.config.ssh}: {message}")
        self.last_error = message

    def _explain(self, why: str, rc: int | None) -> str:
        """ssh's last words, with what to do."""
        low = why.lower()
        if "permission denied" in low or "password" in low:
            return f"{why} (BatchMode is on: set up key login for sgmon, no password prompts)"
        if "host key verification failed" in low:
            return f"{why} (connect once by hand to accept the host key)"
        return why if self.once else f"{why}; retrying"

    def close(self) -> None:
        """Stop the ssh process if one is running, and the database collectors."""
        if self._proc is not None:
            self._kill(self._proc)
        if self._database is not None:
            self._database.close()
