"""The simulated primary/standby pair: frames of both hosts, tick by tick, under a seed.

The OS rows come from ``hostos``; the oracle_* rows come from the *real* database collectors
running their exact SQL against two SQLite stand-ins that the commit model fills with cumulative
V$ counters, so the demo, the analysis tests and the recorder see what a live pair would give.
Everything is a function of (scenario, seed, interval, onset): the same arguments give the same
frames (apart from the measured ``duration_ms``), whatever the wall clock does.

A scenario's layout (``scenarios.layout``) may add standbys off the commit path (an ASYNC
destination, a cascaded standby: ``offpath``); ``step()`` then returns one frame per host,
primary and SYNC standby first, and ``hosts`` names them with their roles.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, replace

from collectors.oracle.dg import OracleDgCollector
from collectors.oracle.redo import OracleRedoCollector
from collectors.oracle.trace import OracleTraceCollector
from collectors.oracle.waits import OracleWaitsCollector
from sgmon.collector import Collector, RawRows
from sgmon.engine import check_interval
from sgmon.model import CollectorResult, Event, Frame, Schema, Status, silence
from sgmon.oracle.session import Session
from sgmon.registry import builtin
from sgmon.sim.alternatives import AS_IS, Change
from sgmon.sim.build import address, databases, demote, destinations, promote, wire
from sgmon.sim.hostos import NSS_PORT, HostOS, Link
from sgmon.sim.interval import TickStats, merged
from sgmon.sim.model import CommitModel
from sgmon.sim.offpath import Shipped, off_path
from sgmon.sim.rac import ship_blocks
from sgmon.sim.scenarios import (
    DEFAULT_ONSET,
    SCENARIOS,
    Conditions,
    Instance,
    Layout,
    Standby,
    conditions,
    layout,
    spared,
    uncapped,
)
from sgmon.sim.traces import TraceWriter

OS_COLLECTORS = ("cpu", "paging", "disk", "netdev", "tcp", "procs")
DB_COLLECTORS: tuple[type[Collector], ...] = (
    OracleWaitsCollector,
    OracleRedoCollector,
    OracleDgCollector,
)


@dataclass(frozen=True, slots=True)
class _Tick:
    """One interval as the hosts' frames see it."""

    cond: Conditions  # the scenario's
    synced: Conditions  # the SYNC standby's (its cap spared unless the layout caps it)
    conds: dict[str, Conditions]  # each primary instance that commits: its own
    shipped: dict[str, TickStats]  # and what it did
    st: TickStats  # what all the instances did (what an off-path standby is sent)
    arrived: TickStats  # what reaches the SYNC standby
    links: list[Link]  # the SYNC standby's sockets: sender's address and port, what it shipped

    def switched(self, instance: str) -> bool:
        """Whether ``instance`` committed and switched logs this interval."""
        return instance in self.shipped and bool(self.shipped[instance].switches)


class SimPair:
    """A simulated SYNC Data Guard pair; ``step()`` returns (primary frame, standby frame),
    then the frames of any standbys off the commit path."""

    def __init__(
        self,
        scenario: str = "healthy",
        seed: int = 0,
        interval: float = 1.0,
        start: float | None = None,
        onset: float = DEFAULT_ONSET,
        change: Change = AS_IS,  # an alternative commit path for the whole run
    ) -> None:
        if scenario not in SCENARIOS:
            raise ValueError(f"unknown scenario {scenario!r}: use one of {', '.join(SCENARIOS)}")
        self.scenario, self.seed = scenario, seed
        self.interval = check_interval(interval)
        self.onset, self.change = onset, change
        self.start = float(int(time.time())) if start is None else float(start)
        self.t, self._seq = 0.0, 0
        lay = change.layout(layout(scenario))
        sync, *others = lay.standbys
        self.hosts: list[tuple[str, str]] = [
            *((p.name, "primary") for p in lay.primaries),
            *((sb.name, "standby") for sb in lay.standbys),
        ]
        """(host name, role) of every simulated host: the primary instance(s), the SYNC
        standby, then the standbys off the commit path."""
        # seed 003: DB_LOST_WRITE_PROTECT TYPICAL on every database
        lwp = conditions(scenario, onset, onset).lwd_per_read > 0
        self.dbs = databases(lay, self.start, lwp)
        self._sync_capped = sync.capped
        self._gap, self._failover = lay.switch_gap, lay.failover
        self._converting = False
        self._alone = False  # a failover's new primary: no standby left to ship to
        self.dead: dict[str, float] = {}
        """Hosts that stopped answering (a failover's old primary), with when: their collectors
        report no frames, as a remote host's source does for a silent host."""
        self.nodes: dict[str, tuple[Instance, CommitModel]] = {}
        """Each primary instance: its layout and its commit model (its trace files are its
        ``writers``)."""
        self.writers: dict[str, TraceWriter] = {}
        """The trace files of every host that is or will be a primary: a switchover's standby
        has its own, which its LGWR and NSS write once it is the primary (the RFS trace of the
        standby of the moment is written beside them, as the primary's collector reads it)."""
        self._primaries(lay, sync)
        self.offpath = off_path(others, self.dbs, seed)
        self._ships = tuple((sb.via, sb.dest_id) for sb in others)
        """Each off-path standby's destination: on every primary instance (via None), or on the
        cascading standby that forwards to it (seed 003: B to C, ASYNC)."""
        destinations(lay, self.dbs)
        self.os = {
            h: HostOS(role, random.Random(f"sgmon-sim/{seed}/{h}"), *address(lay, h))
            for h, role in self.hosts
        }
        self._feeds = wire(lay, self.os, self.dbs)
        self.sessions = {
            h: Session(role=role, connect=self.dbs[h].connect, clock=lambda: self.t)
            for h, role in self.hosts
        }
        self.collectors: dict[str, list[Collector]] = {
            h: self._collectors(h, s) for h, s in self.sessions.items()
        }
        self._prev: dict[tuple[str, str], RawRows] = {}
        self.last: _Tick | None = None  # the latest interval (``sgmon.sim.truth`` reads it)
        # prime: one interval before start, so the first step already has rates
        for _p, model in self.nodes.values():
            model.advance(-self.interval, self.interval, self._conditions(-1.0))
        for h in self.collectors:
            self._oracle(h)

    def _primaries(self, lay: Layout, sync: Standby) -> None:
        """Each primary instance's commit model, shipping to the SYNC standby, and its trace
        files (a switchover's standby has its own, for when it is the primary)."""
        rac = len(lay.primaries) > 1
        if self._gap is not None:
            self.writers[sync.name] = TraceWriter(
                self.now_of,
                sync.db_unique_name,
                standby=self.dbs[lay.primaries[0].name].db_unique_name,
            )
        first: CommitModel | None = None
        for p in lay.primaries:
            rng = random.Random(f"sgmon-sim/{self.seed}/db" + (f"/{p.name}" if first else ""))
            model = CommitModel(
                rng,
                self.dbs[p.name],
                self.dbs[sync.name],
                sync.db_unique_name,
                p.thread,
                first,
                sync.affirm,
                sync.far_sync,
            )
            model.wall = self.now_of
            sid = f"PROD{p.inst_id}" if rac else "PROD"
            self.writers[p.name] = TraceWriter(self.now_of, sid, p.thread)
            self.nodes[p.name] = (p, model)
            first = first or model

    def _collectors(self, host: str, session: Session) -> list[Collector]:
        """The real database collectors of a host, opened on its session; a primary's
        oracle_trace reads its trace files."""
        cs = [cls({"session": session, "clock": self.now}) for cls in DB_COLLECTORS]
        writer = self.writers.get(host)
        if writer:  # LGWR and NSS live on the primary; the RFS trace is copied over
            paths = {k: str(p) for k, p in writer.paths.items()}
            cs.append(OracleTraceCollector({**paths, "clock": self.now}))
        for c in cs:
            c.open()
        return cs

    def _switching(self) -> bool:
        """A switchover under way (from the onset, for the layout's gap): the primary has
        become a standby and nothing commits or ships; at its end the standby opens as the new
        primary, shipping to the old one over a socket the other way round."""
        if self._gap is None or self.t < self.onset or not self.nodes:
            return False
        old = next(iter(self.nodes))
        if self.t < self.onset + self._gap:
            if not self._converting:
                self._converting = True
                if self._failover:  # the host dies: nothing of it answers any more
                    self.dead[old] = self.now()
                else:
                    demote(self.dbs[old])
            return True
        if self._converting:
            self._converting, self._gap = False, None
            self._swap(old)
        return False

    def _swap(self, old: str) -> None:
        new = next(h for h, role in self.hosts if role == "standby")
        promote(self.dbs[new], self.dbs[old], self._failover)
        self._alone = self._failover  # a failover leaves the new primary no standby
        model = CommitModel(
            random.Random(f"sgmon-sim/{self.seed}/db/{new}"),
            self.dbs[new],
            self.dbs[old],
            self.dbs[old].db_unique_name,
        )
        model.wall = self.now_of
        # the old primary's LGWR and NSS write no more; the new one's take over
        self.nodes = {new: (Instance(new), model)}
        # a dead host keeps the role it was given (what a silent remote source reports)
        self.hosts = [(new, "primary"), (old, "primary" if self._failover else "standby")]
        addr = {h: self.os[h].addr for h in (old, new)}
        self.os = {
            new: HostOS("primary", random.Random(f"sgmon-sim/{self.seed}/{new}/primary"),
                        addr[new], peer=addr[old]),
            old: HostOS("standby", random.Random(f"sgmon-sim/{self.seed}/{old}/standby"),
                        addr[old]),
        }  # fmt: skip

    def _conditions(self, t: float) -> Conditions:  # the scenario's at ``t``, changed
        return self.change.conditions(conditions(self.scenario, t, self.onset))

    @property
    def model(self) -> CommitModel:
        """The (first) primary instance's commit model."""
        return next(iter(self.nodes.values()))[1]

    def now(self) -> float:
        """The simulated wall-clock time (epoch seconds)."""
        return self.start + self.t

    def now_of(self, t: float) -> float:
        """Simulated seconds -> epoch seconds."""
        return self.start + t

    def schema(self, host: str) -> Schema:
        """Declared fields of every collector of a host (oracle_trace: primary only): the
        built-in collectors', whose rows the simulation writes."""
        out: Schema = {name: builtin(name).fields for name in OS_COLLECTORS}
        out.update({c.name: c.fields for c in self.collectors[host]})
        return out

    def step(self) -> tuple[Frame, ...]:
        """Advance one interval; the frames of the primary and the SYNC standby, then of the
        standbys off the commit path."""
        switching = self._switching()  # may swap the roles, and so the nodes, first
        cond = self._conditions(self.t)
        if self._alone:  # its destination is the dead host: it commits locally only, from
            cond = replace(cond, transport_stopped=True)  # the first interval it is open
        synced = cond if self._sync_capped else uncapped(cond)
        conds: dict[str, Conditions] = {
            name: synced if p.faulted else spared(synced)
            for name, (p, _model) in (() if switching else self.nodes.items())
        }
        for standby in self.offpath.values():  # a far sync's onward destination may fail
            standby.begin(cond)
        tick = self.last = self._tick(cond, synced, conds, self._commit(conds))
        self.t += self.interval
        self._seq += 1
        for name, (p, model) in self.nodes.items():  # archived as soon as the SYNC one
            for via, dest_id in self._ships if tick.switched(name) else ():
                self.dbs[via or name].set_archived(dest_id, model.sequence - 1, p.thread)
        return tuple(
            self._silent(host, role) if host in self.dead else self._frame(host, role, tick)
            for host, role in self.hosts
        )

    def _tick(
        self,
        cond: Conditions,
        synced: Conditions,
        conds: dict[str, Conditions],
        shipped: dict[str, TickStats],
    ) -> _Tick:
        """The interval as the hosts see it; what reaches the SYNC standby is the redo of the
        instances whose destination ships (one in error writes locally only; its standby's
        disk and socket see none of it)."""
        sending = [n for n in shipped if not conds[n].transport_stopped]
        return _Tick(
            cond,
            synced,
            conds,
            shipped,
            st=merged(list(shipped.values())) if shipped else TickStats(),
            arrived=merged([shipped[n] for n in sending]) if sending else TickStats(),
            links=[(self.os[n].addr, NSS_PORT, shipped[n]) for n in sending],
        )

    def _commit(self, conds: dict[str, Conditions]) -> dict[str, TickStats]:
        """The interval of each primary instance that commits (under its ``conds``), its trace
        files written; then, on RAC, the blocks each instance's transactions take from the
        others."""
        shipped: dict[str, TickStats] = {}
        for name, c in conds.items():
            shipped[name] = self.nodes[name][1].advance(self.t, self.interval, c)
            self.writers[name].write(shipped[name])
        for name, other in ((a, b) for a in shipped for b in shipped if a != b):
            # RAC: the blocks name's transactions take from the other instance
            blocks = round(shipped[name].commits * conds[name].gc_per_commit / (len(shipped) - 1))
            if blocks:
                ship_blocks(self.nodes[other][1], blocks, conds[other], self.nodes[name][1])
        return shipped

    def _frame(self, host: str, role: str, tick: _Tick) -> Frame:
        """A live host's frame: its OS rows from what it saw of the interval, its database
        collectors' rows from its stand-in."""
        seen, mine, feed = self._seen(host, tick)
        results: dict[str, CollectorResult] = {
            name: CollectorResult(Status.OK, rows=rows, duration_ms=0.0)
            for name, rows in self.os[host].rows(seen, mine, self.interval, feed).items()
        }
        db_results, events = self._oracle(host)
        results.update(db_results)
        return Frame(
            host=host,
            role=role,
            time=self.now(),
            seq=self._seq,
            interval=self.interval,
            collectors=results,
            events=tuple(events),
        )

    def _seen(self, host: str, tick: _Tick) -> tuple[TickStats, Conditions, list[Link]]:
        """What ``host`` saw of the interval, under which conditions, over which sockets: a
        primary instance its own writes, the SYNC standby what arrived (nothing over a silent
        link), an off-path standby what its own link and disk let through."""
        seen = tick.shipped.get(host, tick.arrived)
        mine, feed = tick.conds.get(host, tick.synced), tick.links
        if tick.cond.link_down and host not in self.nodes:
            seen = TickStats()  # a silent link: the standby receives and writes nothing
        if host in self.offpath:
            mine = self.offpath[host].conditions(tick.cond)
            threads = self._threads(host, tick.shipped, tick.conds)
            seen = self.offpath[host].advance(tick.st, mine, self.interval, self.now(), threads)
            sender, port = self._feeds[host]
            feed = [] if self.offpath[host].down else [(self.os[sender].addr, port, tick.st)]
        return seen, mine, feed

    def _threads(
        self, host: str, shipped: dict[str, TickStats], conds: dict[str, Conditions]
    ) -> list[Shipped]:
        """Each primary instance's thread as it reaches the off-path standby ``host``: over the
        instance's own link, capped by its ``async_mbit``, or forwarded whole by a cascading
        standby."""
        direct = self._feeds[host][0] in self.nodes
        return [
            (p.thread, model.sequence, shipped[n], conds[n].async_mbit * 1e6 / 8 if direct else 0)
            for n, (p, model) in self.nodes.items()
            if n in shipped
        ]

    def _silent(self, host: str, role: str) -> Frame:
        """A dead host's frame: every collector stale, for the one reason."""
        err = silence(host, self.now() - self.dead[host])
        results = {c: CollectorResult(Status.STALE, error=err) for c in self.schema(host)}
        return Frame(host, self.now(), 0, self.interval, results, (), role)

    def _oracle(self, host: str) -> tuple[dict[str, CollectorResult], list[Event]]:
        """Run the real database collectors of one host against its stand-in."""
        results: dict[str, CollectorResult] = {}
        events: list[Event] = []
        for c in self.collectors[host]:
            t0 = time.perf_counter()
            try:
                raw = c.sample()
            except Exception as e:
                results[c.name] = CollectorResult(Status.ERROR, error=str(e))
                continue
            prev = self._prev.get((host, c.name))
            rows = c.derive(prev, raw, self.interval)
            self._prev[(host, c.name)] = raw
            events.extend(c.take_events())
            ms = (time.perf_counter() - t0) * 1000
            results[c.name] = CollectorResult(Status.OK, rows=rows, duration_ms=round(ms, 3))
        return results, events

    def close(self) -> None:
        """Close the collectors and the stand-ins."""
        for cs in self.collectors.values():
            for c in cs:
                c.close()
        for s in self.sessions.values():
            s.close()
        for db in self.dbs.values():
            db.close()
        for traces in self.writers.values():
            traces.close()
