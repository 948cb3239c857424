"""A remote host over the user's own ``ssh`` (the session: sgmon/hosts/ssh.py): a byte pump sent
over the connection, or an installed ``sgmon agent``.

- **The pump** (``PumpSource``, the default: nothing installed there).  ssh runs the host's own
  ``python3 -I -c`` with a bootstrap that reads sgmon/remote/pump.py from stdin; each tick the
  pump ships the raw /proc files and the Data Guard sockets' netlink replies as they are, and
  they are written into a local mirror of the host's tree (sgmon/remote/mirror.py) that the
  usual collectors read through their ``root`` option, ticked as each tick arrives.  Rates span
  the far side's own reading times, and the frame is placed on this machine's time axis by the
  measured clock offset; the pump is told the offset, so its ticks fall on this machine's
  interval boundaries, where the local hosts' ticks are.
- **The installed agent** (``RemoteSource``, where ``sgmon_path`` names the command there):
  ``sgmon agent``'s NDJSON stream.
- **The database** is read from this machine with the host's own name (``db_from = "agent"``
  leaves it to an installed agent): its collectors are sampled as each remote tick arrives, so
  the OS and the database figures are one frame of one host; while the far side is silent they
  go on in the stale frames, so a cut ssh link does not hide a database that is still there.
"""

from __future__ import annotations

import contextlib
import json
import math
import struct
import subprocess
import time
from collections.abc import Callable, Mapping
from typing import IO, TYPE_CHECKING

from sgmon.collector import Collector
from sgmon.config import HostConfig
from sgmon.engine import Engine
from sgmon.hosts.farside import (
    AGENT_LINE,
    BAD_HEADER,
    NOT_A_NUMBER,
    UNTIL_HEADER,
    Pace,
    agent_header,
    bounded_lines,
    far_text,
    finite,
    plausible,
)
from sgmon.hosts.ssh import Message, SshSource
from sgmon.model import Frame

if TYPE_CHECKING:
    from sgmon.readers.inet_diag import Selection
    from sgmon.remote.mirror import Shipped, Tick

SHIFT_STEP = 0.002
"""Seconds the measured offset must move before the pump is told to shift its ticks again."""
MESSAGE_MOST = 8 << 20
"""Bytes one pump message may hold (a tick is tens of kB, its trace tails at most 4 MiB): a
longer length is a corrupt stream, never an allocation."""
BANNER_MOST = 64 << 10
"""Bytes the remote shell may print before the pump's start (a login banner, a message of the
day): beyond it, no pump is talking."""
HEADER = struct.Struct(">cI")


class Corrupt(Exception):
    """The far side's stream is not the pump's: the session ends and starts again."""


def _start(stream: IO[bytes]) -> bytes | None:
    """Read up to the pump's MAGIC; what came before it (a banner), or None at the end."""
    from sgmon.remote.pump import MAGIC

    seen = bytearray()
    while not seen.endswith(MAGIC):
        if len(seen) > BANNER_MOST:
            raise Corrupt(
                f"the far side sent {BANNER_MOST >> 10} KiB on stdout without sgmon's program "
                "starting (does something print there at login?)"
            )
        byte = stream.read(1)
        if not byte:
            return None
        seen += byte
    return bytes(seen[: -len(MAGIC)])


def _messages(stream: IO[bytes], put: Callable[[Message | None], None]) -> None:
    """The pump's messages, each checked for size before it is read."""
    while len(raw := stream.read(HEADER.size)) == HEADER.size:
        kind, size = HEADER.unpack(raw)
        if size > MESSAGE_MOST:
            raise Corrupt(
                f"a message longer than the {MESSAGE_MOST >> 20} MiB one may hold: the stream "
                "is corrupt"
            )
        payload = stream.read(size)
        if len(payload) < size:
            return
        put((kind, payload))


class PumpSource(SshSource):
    """Frames of one remote host from the pump sent over ssh: nothing installed there."""

    def __init__(
        self,
        host: HostConfig,
        collectors: Callable[[str], list[Collector]],
        sockets: Selection | None,
        shipped: Shipped,
        tails: tuple[tuple[str, str], ...] = (),
        interval: float | None = None,
        trace: Mapping[str, object] | None = None,
        processes: Mapping[str, object] | None = None,
        **kwargs,  # type: ignore[no-untyped-def]
    ) -> None:
        super().__init__(host, interval, **kwargs)
        from sgmon.remote.mirror import Mirror

        self._collectors = collectors
        """root -> the host's collectors reading that tree (built at the first tick: their
        options are checked against the host's devices and interfaces)."""
        self._sockets, self._tails = sockets, tails
        """The DG sockets (the tcp collector's selection; None for none); the trace files to
        tail, as (directory, name pattern)."""
        self._trace, self._processes = trace, processes
        """The tracepoints the pump records there (the retrans collector's) and the processes
        it follows (the procs collector's), None for none."""
        self.mirror = Mirror(
            host.name,
            shipped,
            (directory for directory, _ in tails),
            traced=trace is not None,
            processes=processes is not None,
        )
        self._engine: Engine | None = None
        self._tcp: Collector | None = None
        """The tcp collector here, whose end of the DG port follows the database's role."""
        self._remote_clock = time.monotonic()
        """The far side's monotonic clock at its last tick (the span of its /proc rates)."""
        self._shift: float | None = None
        self.python: str | None = None
        """The far side's python3 version, from its hello."""
        self._pace = Pace(self.interval)
        self.coalesced = 0
        """Ticks not read because the far side sent them faster than the interval."""
        self._banner_said = False

    def remote_command(self) -> str:
        """The host's own python3 (platform-python on RHEL/OL 8 where there is no python3),
        isolated (no user site, no PYTHON* variables), reading the pump from stdin."""
        from sgmon.remote.mirror import BOOTSTRAP

        run = f"-I -c '{BOOTSTRAP}'"
        return (
            f"for p in python3 /usr/libexec/platform-python; do "
            f"command -v $p >/dev/null 2>&1 && exec $p {run}; done; "
            "echo 'no python3 on this host' >&2; exit 127"
        )

    def _clock(self) -> float:
        return self._remote_clock

    def _begin(self, proc: subprocess.Popen) -> None:
        from sgmon.remote.mirror import request

        self._shift = None
        assert proc.stdin is not None
        with contextlib.suppress(OSError, ValueError):
            orphan = max(10.0, 6 * self.ping_every)  # its pings keep it alive
            spec = request(
                self.interval,
                self.mirror.shipped,
                self._sockets,
                self._tails,
                orphan,
                self._trace,
                self._processes,
            )
            proc.stdin.write(spec)
            proc.stdin.flush()

    def _read(self, stream: IO[bytes], put: Callable[[Message | None], None]) -> None:
        try:
            banner = _start(stream)
            if banner is not None:
                if banner:
                    put((b"B", banner))
                _messages(stream, put)
        except Corrupt as e:
            put((b"X", str(e).encode()))
        except (OSError, ValueError):
            pass
        put(None)

    def _handle(
        self, kind: bytes, payload: bytes, proc: subprocess.Popen, emit: Callable[[Frame], None]
    ) -> None:
        if kind == b"T" and self._greeted:
            self._tick(payload, emit)
            self._aim(proc)
        elif kind == b"P":
            with contextlib.suppress(ValueError):
                self._pong(json.loads(payload))
            offset = self.clock_offset
            if offset is not None and (
                self._shift is None or abs(offset - self._shift) > SHIFT_STEP
            ):
                self._shift = offset
                self._write(proc, f"shift {offset:.6f}\n")
        elif kind == b"H":
            self._hello(payload)
            self._write(proc, f"ping {time.time():.6f}\n")  # the offset before the first frame
        elif kind == b"E":
            self.notes.say(far_text(payload))
        elif kind == b"B":
            self._banner(payload)
        elif kind == b"X":
            self._why = payload.decode()
        else:
            self.dropped += 1

    def _hello(self, payload: bytes) -> None:
        with contextlib.suppress(ValueError, AttributeError):
            hello = json.loads(payload)
            python, hostname = hello.get("python"), hello.get("hostname")
            self.python = far_text(python, 32) if isinstance(python, str) else None
            self.far_hostname = far_text(hostname, 64) if isinstance(hostname, str) else None
        self._greet()

    def _banner(self, banner: bytes) -> None:
        """Said once per host: the lines the remote shell printed before the pump started."""
        if self._banner_said:
            return
        self._banner_said = True
        lines = [line for line in banner.splitlines() if line.strip()]
        first = f": {far_text(lines[0], 80)!r}" if lines else ""
        self.warn(
            f"{self.config.ssh}: skipped {len(lines)} line(s) the remote shell printed before "
            f"sgmon's program started (a login banner){first}"
        )

    def _sane(self, tick: Tick) -> bool:
        """Whether a tick's clocks can place it: its wall clock within a day of ours, its
        monotonic clock a number of seconds since the host's boot."""
        if not plausible(tick.time, time.time()):
            self.refuse_clock("a tick", tick.time)
            return False
        if not (math.isfinite(tick.monotonic) and 0 <= tick.monotonic < 1e10):
            self.refuse_clock("a tick's monotonic clock", tick.monotonic)
            return False
        return True

    def _tick(self, payload: bytes, emit: Callable[[Frame], None]) -> None:
        """Write the tick into the mirror and sample it (the first one only primes); a tick
        with a clock that cannot be ours is refused, one faster than the interval not read."""
        from sgmon.remote.mirror import Tick

        try:
            head = Tick.of(payload)
            if not self._sane(head):
                return
            offset = self.clock_offset or 0.0
            local_time = head.time - offset
            early = not self._pace.take(local_time, offset) and self._engine is not None
            if early:
                self._early()
                if not head.carries_news():
                    return
            tick = self.mirror.apply(payload)
            if early:
                return
        except ValueError:
            self.dropped += 1
            return
        except OSError as e:  # /dev/shm or the temporary directory full: this tick is lost
            self.dropped += 1
            self._report(f"cannot keep this host's files in {self.mirror.root}: {e.strerror}")
            return
        self._remote_clock = tick.monotonic
        if self._engine is None:
            collectors = self._collectors(self.mirror.root)
            self._tcp = next((c for c in collectors if c.name == "tcp"), None)
            self._engine = Engine(
                collectors,
                self.interval,
                self.name,
                self.hosts[0].role,
                clock=self._clock,
            )
            self._schema = {**self._engine.schema(), **self._database_schema()}
            self._engine.tick(local_time)  # primes the counters, as a local engine's first tick
            if self._database is not None:
                self._database.tick(local_time)
            return
        self._emit(self._engine.tick(local_time), emit)

    def _aim(self, proc: subprocess.Popen) -> None:
        """After a switchover the tcp collector takes the other end (``auto``): the pump is
        sent that end's search, so that it never reads the clients of the database's port."""
        from sgmon.remote.mirror import aim

        if self._tcp is None or self._sockets is None:
            return
        if self._tcp.direction == self._sockets.direction:  # type: ignore[attr-defined]
            return  # every tick but a switchover's: nothing built, nothing sent
        self._sockets = self._tcp.remote_selection()  # type: ignore[attr-defined]
        self._write(proc, f"sockets {json.dumps(aim(self._sockets), separators=(',', ':'))}\n")

    def _early(self) -> None:
        self.coalesced += 1
        self.notes.say(
            f"the far side sends ticks faster than every {self.interval:g}s: the extra ones "
            "are not read (counted; the files they carry are kept)",
            "ticks faster than the interval not read",
        )

    def _explain(self, why: str, rc: int | None) -> str:
        if "python3" in why:  # none there, or one older than 3.6
            again = "" if self.once else "; retrying"
            return f"{why} (sgmon runs there with the host's python3 3.6 or later{again})"
        return super()._explain(why, rc)

    def close(self) -> None:
        """Stop ssh, the collectors, and remove the mirror."""
        super().close()
        if self._engine is not None:
            self._engine.close()
        self.mirror.close()


SEQ_MAX = 1 << 53
"""A far frame's sequence number is below this (a frame a nanosecond for 100 days)."""


class RemoteSource(SshSource):
    """Frames of one remote host through ``ssh ... sgmon agent`` (sgmon installed there)."""

    def __init__(self, host: HostConfig, interval: float | None = None, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(host, interval, **kwargs)
        self._seq = 0
        self._remote_host: str | None = None

    def remote_command(self) -> str:
        """``sgmon agent`` with this consumer's interval and role for the host."""
        remote = f"{self.config.sgmon_path or 'sgmon'} agent"
        if self._asked_interval:
            remote += f" --interval {self._asked_interval:g}"
        if self.config.role:  # config check allows only primary or standby: no quoting needed
            remote += f" --role {self.config.role}"
        return remote

    def _read(self, stream: IO[bytes], put: Callable[[Message | None], None]) -> None:
        bounded_lines(stream, AGENT_LINE, lambda line: put(None if line is None else (b"L", line)))

    def _handle(
        self, kind: bytes, payload: bytes, proc: subprocess.Popen, emit: Callable[[Frame], None]
    ) -> None:
        if len(payload) >= AGENT_LINE and not payload.endswith(b"\n"):
            self.dropped += 1
            self.notes.say(f"a line over {AGENT_LINE >> 20} MiB from the agent skipped")
            return
        try:
            d = json.loads(payload)
        except (ValueError, RecursionError):  # RecursionError: arrays nested 100,000 deep
            self.dropped += 1
            return
        if not isinstance(d, dict):
            self.dropped += 1
        elif "sgmon_agent" in d:
            self._seq, self._remote_host = 0, None
            try:
                self._remote_host = self._header(d)
            except ValueError as e:
                self.dropped += 1
                self.notes.say(f"{BAD_HEADER} ({e}); {UNTIL_HEADER}", BAD_HEADER)
                return
            self._greet()
        elif "pong" in d:
            self._pong(d)
        elif "v" in d and self._greeted:
            self._frame(d, emit)
        else:
            self.dropped += 1

    def _header(self, d: dict) -> str:
        """Take the agent's header (ValueError: one it cannot be read from); the far host whose
        frames are this host's."""
        remote, schema, interval = agent_header(d, self.name, self.interval)
        self._schema = {**schema, **self._database_schema()}
        self.interval = interval
        hostname = d.get("hostname")
        self.far_hostname = far_text(hostname, 64) if isinstance(hostname, str) else None
        return remote

    def _frame(self, d: dict, emit: Callable[[Frame], None]) -> None:
        if d.get("host") != self._remote_host:
            self.dropped += 1  # another host of a multi-host agent: not ours
            return
        try:
            f = Frame.from_dict(d)
        except (KeyError, ValueError, TypeError, AttributeError, OverflowError):
            self.dropped += 1  # a part of the wrong type: a list for a table, 1e400 for a time
            return
        if not self._seq < f.seq < SEQ_MAX:  # a huge one would hold back every later frame
            self.dropped += 1
            return
        if not plausible(f.time, time.time()):
            self.refuse_clock("a frame", f.time)
            return
        if not 0.01 <= f.interval <= 3600:  # NaN too
            self.dropped += 1
            return
        self._seq = f.seq
        role = self.hosts[0].role or f.role
        t = f.time
        if self._database is not None:  # with a database read here: on this machine's axis
            t -= self.clock_offset or 0.0
        collectors, events, bad = finite(f.collectors, f.events)
        if bad:
            self.dropped += bad
            self.notes.say(NOT_A_NUMBER)
        self._emit(Frame(self.name, t, f.seq, f.interval, collectors, events, role), emit)

    def _explain(self, why: str, rc: int | None) -> str:
        if rc == 127 or "not found" in why.lower():
            return f"{why} (set sgmon_path for this host to the sgmon command on the far side)"
        return super()._explain(why, rc)
