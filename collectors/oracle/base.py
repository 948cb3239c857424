"""What the oracle_* collectors share: the session, fatal errors, notes, restart re-basing."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from sgmon.collector import Collector, RawRows, Unavailable
from sgmon.config.rules import Rule
from sgmon.model import Event, Rows
from sgmon.oracle.errors import OracleError
from sgmon.oracle.session import Session, acquire, release

EPOCH = "_epoch"  # raw-only row: the session epoch the sample belongs to


class OracleCollector(Collector):
    """Base of the database collectors: ``read()`` returns raw rows, ``compute()`` frame rows."""

    default_enabled: ClassVar[bool] = False  # only where a [host.db] is configured
    timeout: ClassVar[float] = 2.5  # above the default call timeout, so the driver speaks first
    solo: ClassVar[bool] = True  # a database round trip may take seconds: not on the shared worker
    option_rules: ClassVar[Mapping[str, Rule]] = {}  # their login is the host's [host.db]

    def __init__(self, options: Any = None) -> None:
        super().__init__(options)
        self.session: Session | None = None
        self.clock: Callable[[], float] = self.options.get("clock") or time.time

    def open(self) -> None:
        """Join the host's shared session (connecting happens on the first sample)."""
        if self.options.get("db") is not None:
            try:
                import oracledb  # noqa: F401 - only to say early that the driver is missing
            except ImportError:
                raise Unavailable(
                    "python-oracledb is not installed: pip install 'oracledb>=2.1'"
                ) from None
        try:
            self.session = acquire(self.options)
        except OracleError as e:
            raise Unavailable(str(e)) from None

    def sample(self) -> Rows:
        """Raw rows tagged with the session epoch; notes become timeline events."""
        s = self.session
        assert s is not None, "open() first"
        try:
            s.refresh()
            rows = self.read(s)
        except OracleError as e:
            if e.fatal:
                raise Unavailable(str(e)) from None
            raise
        finally:
            for note in s.take_notes():
                self.emit_event(Event(self.clock(), self.name, "note", "db", note))
        rows[EPOCH] = {"epoch": s.epoch}
        return rows

    def derive(self, prev: RawRows | None, cur: RawRows, dt: float) -> Rows:
        """Frame rows; a previous sample from before an instance restart is not subtracted."""
        restarted = prev is not None and prev.get(EPOCH) != cur.get(EPOCH)
        cur = {k: v for k, v in cur.items() if k != EPOCH}
        if prev is not None:
            prev = None if restarted else {k: v for k, v in prev.items() if k != EPOCH}
        return self.compute(prev, cur, dt)

    def read(self, s: Session) -> Rows:
        """Run this collector's queries; raw (cumulative) rows keyed by instance."""
        raise NotImplementedError

    def compute(self, prev: Rows | None, cur: Rows, dt: float) -> Rows:
        """Raw -> frame rows (default: by field kind)."""
        return super().derive(prev, cur, dt)

    def close(self) -> None:
        """Leave the shared session (the last collector closes it)."""
        if self.session is not None:
            release(self.session)
            self.session = None
