"""What the database collectors cost per tick: statements, and CPU of sgmon's own work.

Runs the real oracle_waits / oracle_redo / oracle_dg collectors of both simulated databases
(a 19c primary and its standby, fed by the commit model) against the SQLite stand-in, twice:

* end to end: CPU per tick including SQLite executing the statements (an upper bound; on a real
  database that part is the server's, plus the network round trips);
* collector only: the same statements' results replayed from memory, so the CPU is sgmon's own
  (parsing rows, deltas, histograms, percentiles) -- the issue's target is <= 2 ms per tick.

Usage: python bench/oracle_cost.py [--ticks 300] [--no-append]
Appends the results to bench/README.md under "## Database collector (issue 3)".
"""

from __future__ import annotations

import argparse
import datetime as _dt
import platform
import random
import time
from collections.abc import Callable

from readme import append_section

from collectors.oracle.dg import OracleDgCollector
from collectors.oracle.redo import OracleRedoCollector
from collectors.oracle.waits import OracleWaitsCollector
from sgmon.oracle.session import Session
from sgmon.sim.model import CommitModel
from sgmon.sim.scenarios import HEALTHY
from sgmon.sim.standin import StandIn

HEADING = "## Database collector (issue 3)"
CLASSES = (OracleWaitsCollector, OracleRedoCollector, OracleDgCollector)


class _Recorder:
    """Connections that run on the stand-in and keep every result, in order."""

    def __init__(self, db: StandIn) -> None:
        self.db = db
        self.log: list[tuple[str, list[tuple]]] = []

    def connect(self) -> _RecConn:
        return _RecConn(self)


class _RecConn:
    def __init__(self, rec: _Recorder) -> None:
        self.rec = rec
        self.real = rec.db.connect()

    def cursor(self) -> _RecCursor:
        return _RecCursor(self)

    def close(self) -> None:
        self.real.close()


class _RecCursor:
    def __init__(self, conn: _RecConn) -> None:
        self.conn = conn
        self.rows: list[tuple] = []

    def execute(self, sql: str) -> None:
        self.rows = self.conn.real.execute(sql).fetchall()
        self.conn.rec.log.append((sql, self.rows))

    def fetchone(self) -> tuple | None:
        return self.rows[0] if self.rows else None

    def fetchall(self) -> list[tuple]:
        return self.rows

    def close(self) -> None:
        pass


class _Replay:
    """A connection answering each statement with the recorded result (no database work)."""

    def __init__(self, log: list[tuple[str, list[tuple]]]) -> None:
        self.log = log
        self.i = 0

    def connect(self) -> _Replay:
        return self

    def cursor(self) -> _Replay:
        return self

    def execute(self, sql: str) -> None:
        expected, self.rows = self.log[self.i]
        assert expected == sql, "replay out of step"
        self.i += 1

    def fetchone(self) -> tuple | None:
        return self.rows[0] if self.rows else None

    def fetchall(self) -> list[tuple]:
        return self.rows

    def close(self) -> None:
        pass


def _run(
    connects: dict, ticks: int, clock: list[float], advance: Callable[[int], object] | None = None
) -> tuple[dict, dict, int]:
    """CPU ms per tick per collector, statements per tick per host, and the rows derived;
    ``advance(tick)`` moves the databases on between ticks (the recording pass)."""
    sessions = {h: Session(role=h, connect=c, clock=lambda: clock[0]) for h, c in connects.items()}
    cols = {h: [cls({"session": s}) for cls in CLASSES] for h, s in sessions.items()}
    cpu: dict[str, float] = {}
    prev: dict[tuple[str, str], dict] = {}
    for h in cols:
        for c in cols[h]:
            c.open()
    start = dict.fromkeys(sessions, 0)
    rows = 0
    for tick in range(ticks + 1):
        clock[0] = float(tick)
        if tick == 1:
            start = {h: s.statements for h, s in sessions.items()}
        for h, cs in cols.items():
            for c in cs:
                t0 = time.process_time()
                raw = c.sample()
                out = c.derive(prev.get((h, c.name)), raw, 1.0)
                if tick:
                    cpu[c.name] = cpu.get(c.name, 0.0) + time.process_time() - t0
                    rows += len(out)
                prev[(h, c.name)] = raw
        if advance is not None:
            advance(tick)
    stmts = {h: (s.statements - start[h]) / ticks for h, s in sessions.items()}
    return {k: v * 1000 / ticks / 2 for k, v in cpu.items()}, stmts, rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticks", type=int, default=300)
    ap.add_argument("--no-append", action="store_true", help="print only")
    args = ap.parse_args()
    prim = StandIn(role="PRIMARY", version="19.21.0.0.0")
    stby = StandIn(role="PHYSICAL STANDBY", version="19.21.0.0.0", db_unique_name="STBY")
    model = CommitModel(random.Random(1), prim, stby)
    model.advance(-1.0, 1.0, HEALTHY)
    recs = {"primary": _Recorder(prim), "standby": _Recorder(stby)}
    clock = [0.0]
    e2e, stmts, rows = _run(
        {h: r.connect for h, r in recs.items()},
        args.ticks,
        clock,
        lambda t: model.advance(float(t), 1.0, HEALTHY),
    )
    own, _, _ = _run({h: _Replay(r.log).connect for h, r in recs.items()}, args.ticks, clock)
    lines = [
        (
            f"### {_dt.datetime.now(_dt.UTC):%Y-%m-%d %H:%M} UTC, {platform.node()}, "
            f"python {platform.python_version()}"
        ),
        "",
        (
            f"`python bench/oracle_cost.py --ticks {args.ticks}`: both simulated 19c databases "
            "(healthy load, ~900 commits/s), SQLite stand-in; CPU = time.process_time per tick "
            "per database, averaged over primary and standby."
        ),
        "",
        (
            "| collector | CPU ms/tick end to end (with SQLite) | CPU ms/tick sgmon's own | "
            "own / 2 ms target |"
        ),
        "|---|---|---|---|",
    ]
    for c in CLASSES:
        lines.append(
            f"| {c.name} | {e2e[c.name]:.3f} | {own[c.name]:.3f} | {own[c.name] / 2.0:.2f} |"
        )
    total_own = sum(own.values())
    lines += [
        f"| all three | {sum(e2e.values()):.3f} | {total_own:.3f} | {total_own / 2.0:.2f} |",
        "",
        (
            f"Statements per tick: primary {stmts['primary']:.1f}, standby {stmts['standby']:.1f} "
            "(each a single SELECT fetched in one round trip; the startup-time check is shared by "
            f"the collectors of a host). Rows derived per tick: {rows / args.ticks:.0f}."
        ),
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if not args.no_append:
        append_section(HEADING, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
