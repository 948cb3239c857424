"""A layout's hosts as the simulated pair starts them: the stand-ins of their databases (logs,
parameters, destinations), their DG addresses, and the sockets that feed the standbys off the
commit path; and the databases' role changes (a switchover, a failover)."""

from __future__ import annotations

from collections.abc import Mapping

from sgmon.sim.hostos import NSS_PORT, HostOS
from sgmon.sim.scenarios import Layout
from sgmon.sim.standin import StandIn

STARTED = 3 * 86400
"""Seconds every database has been up when the simulation starts."""


def databases(lay: Layout, start: float, lost_write_protect: bool) -> dict[str, StandIn]:
    """The stand-in of every host, the primary instance(s) first, each with every thread's
    online logs and SRLs (``lost_write_protect``: DB_LOST_WRITE_PROTECT TYPICAL on all, as in
    seed 003)."""
    rac = len(lay.primaries) > 1
    dbs: dict[str, StandIn] = {}
    for p in lay.primaries:
        db = StandIn(version=lay.version, role="PRIMARY", db_unique_name="PROD",
                     startup=start - STARTED)  # fmt: skip
        db.set_instance(
            start - STARTED,
            instance_name=f"PROD{p.inst_id}" if rac else "PROD",
            instance_number=p.inst_id,
            **{"THREAD#": p.thread},
        )
        dbs[p.name] = db
    for sb in lay.standbys:
        dbs[sb.name] = StandIn(
            version=lay.version,
            role="FAR SYNC" if sb.far_sync else "PHYSICAL STANDBY",
            db_unique_name=sb.db_unique_name,
            startup=start - STARTED,
        )
    for db in dbs.values():  # each database: every thread's online logs and SRLs
        for p in lay.primaries:
            db.set_online_logs(p.thread)
            db.set_standby_logs(p.thread, active=0)
        if lost_write_protect:
            db.set_parameter("db_lost_write_protect", "TYPICAL")
    return dbs


def destinations(lay: Layout, dbs: Mapping[str, StandIn]) -> None:
    """Each off-path standby as a destination of its senders: every primary instance, or the
    cascading standby it names (``via``, valid in the standby role)."""
    for sb in lay.standbys[1:]:
        senders = [p.name for p in lay.primaries] if sb.via is None else [sb.via]
        role = {} if sb.via is None else {"valid_role": "STANDBY_ROLE"}
        for n in senders:
            dbs[n].set_dest(sb.dest_id, db_unique_name=sb.db_unique_name, transmit_mode=sb.mode,
                            affirm="NO", net_timeout=30, **role)  # fmt: skip


def address(lay: Layout, host: str) -> tuple[str | None, str]:
    """A host's DG address and instance name: RAC nodes each have their own, and so does every
    standby off the commit path."""
    offpath = [sb.name for sb in lay.standbys[1:]]
    if host in offpath:
        return f"10.0.1.{10 + offpath.index(host)}", "PROD"
    nodes = {p.name: p for p in lay.primaries}
    if host not in nodes or len(nodes) == 1:
        return None, "PROD"
    p = nodes[host]
    return f"10.0.1.{2 * p.inst_id - 1}", f"PROD{p.inst_id}"


def wire(
    lay: Layout, oses: Mapping[str, HostOS], dbs: Mapping[str, StandIn]
) -> dict[str, tuple[str, int]]:
    """Each off-path standby's feeder and the port it sends from, with the senders' sockets:
    an ASYNC destination from every primary instance (12c on: TTnn; 11.2: an LNSn, as for
    SYNC), a cascaded standby from its ``via`` (11.2: ARCn, after the log is archived)."""
    old = lay.version.startswith("11.")
    nodes = [p.name for p in lay.primaries]
    feeds: dict[str, tuple[str, int]] = {}
    for k, sb in enumerate(lay.standbys[1:]):
        port = NSS_PORT + 1 + k
        senders = nodes if sb.via is None else [sb.via]
        proc = ("arc2" if sb.via else f"lns{k + 2}") if old else f"tt{k:02d}"
        for n in senders:
            sid = oses[n].sid if n in nodes else dbs[n].db_unique_name
            oses[n].sends += ((oses[sb.name].addr, port, f"ora_{proc}_{sid}"),)
        feeds[sb.name] = (senders[0], port)
    if old:
        for n in nodes:
            oses[n].sender = "lns1"  # 11.2's LNSn serve SYNC and ASYNC alike
    return feeds


def demote(db: StandIn) -> None:
    """A primary converted to a physical standby (a switchover's first half): mounted, its
    apply started only once the new primary is open."""
    db.set_database(database_role="PHYSICAL STANDBY", open_mode="MOUNTED")
    db.set_apply(None)


def promote(new: StandIn, old: StandIn, failover: bool) -> None:
    """A standby opened as the primary: after a failover, by terminal recovery then OPEN
    RESETLOGS (a new incarnation) with its destination failed; after a switchover, with the old
    primary applying its redo."""
    if failover:
        new.resetlogs()
    new.set_database(
        database_role="PRIMARY",
        open_mode="READ WRITE",
        db_unique_name=new.db_unique_name,
        **({"switchover_status": "FAILED DESTINATION"} if failover else {}),
    )
    new.set_apply(None)
    if not failover:
        old.set_apply("APPLYING_LOG")
