"""The simulated pair's conditions: a healthy baseline and the faults the seeds describe.

A scenario is the baseline ``Conditions`` before ``onset`` and a modified copy after it.  Every
number has a source: seed 000 (Tables 6-9: sub-millisecond local and remote writes at 1 ms RTT,
~20 kB redo writes, thousands of commits/s; log switches as an outlier source), seed 001 (rare
TCP tail losses retransmitted after a 200 ms RTO -> 128-256 ms outliers, 80-120 a minute, in
bursts that now and then lose the resent segment too, the RTO doubled -> 512 ms-1 s, or the
redo write after the stall -> 256-512 ms; after ``rto_min 10ms`` the same losses cost ~10 ms
more; its AWR tables: log file sync 15.9 ms on average, 3.7 % in 128-256 ms, SYNC Remote Write
4.34 ms), seed 003 (standby volume IOPS-capped by lost-write reads: await 50-130 ms, svctm
~1.2 ms, aqu-sz 50-80, %util 100; its AWR histogram: log file sync 470 ms on average, 6.0 %
under 2 ms, 7.2 % over 1 s, 5.1 % of those in 4-8 s: the volume's holds while its allowance
refills).  tests/system/simulation/test_sim_calibration.py holds the seed scenarios to those
tables.

A scenario also has a layout: the database version, the standbys and the primary's instances.
Every scenario is 19c, single-instance, with one SYNC standby named "standby", but
``rac-rto-stall``, ``rac-lms-slow``, ``rac-thread-lag`` and ``rac-thread-slow`` (seed 001's
two-node RAC primary; the fault reaches node 1 only, in ``rac-thread-slow`` its link to an ASYNC
standby A beside the SYNC one), ``rac-gcs-flush`` (the same primary; the slow redo disk is
node 2's), ``cascade-iops-cap``, seed 003's 11.2.0.4 configuration after the switchover (SYNC
AFFIRM to B, ASYNC to A, C cascaded from B by B's own ASYNC destination, the IOPS cap on B's
and C's volumes),
``async-iops-cap``, where the cap reaches only an ASYNC standby (the case issue 15's lab asks
for: never the cause of commit time), and ``far-sync-slow`` and ``far-sync-terminal-cap``: a far
sync instance ``farsync`` (SYNC AFFIRM from the primary) forwarding ASYNC to ``standby``, the
cap on the far sync's SRL volume (on the commit path) or on the terminal standby's (a lag risk),
and ``far-sync-terminal-down``, where the far sync's destination to the terminal standby fails.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True, slots=True)
class Conditions:
    """What drives the model during one phase."""

    commits: float = 900.0  # user commits per second (arrivals at LGWR)
    redo_per_commit: float = 5200.0  # bytes (seed 000 test 1: 5K redo per transaction)
    lgwr_cpu_ms: float = 0.015  # mean wait of LGWR for a CPU (step 2)
    fg_cpu_ms: float = 0.02  # mean wait of a foreground for a CPU after the post (step 12)
    post_ms: float = 0.01  # steps 10-11: on-disk SCN, post
    local_ms: float = 0.42  # median 'log file parallel write' (step 6)
    local_sigma: float = 0.30  # lognormal spread
    rtt_ms: float = 0.30  # network round trip
    link_mbit: float = 10000.0  # DG link speed
    rfs_ms: float = 0.45  # median SRL write on the standby ('RFS write')
    rfs_sigma: float = 0.30
    tail_loss: float = 0.0
    """Chance that a redo write's last segment is lost on the DG socket (a TCP tail loss: the
    write waits out an RTO).  A chance a write, not a rate in time: a lost segment with more of
    the write behind it is resent at the next ACK, so each write has one chance whatever its
    size, and a path with more writes a second has more timeouts a second (the lab's nftables
    loss: timeouts on 0.49 % of 157 writes a second, on 0.81 % of 186 under ``rto_min 10ms``)."""
    rto_min_ms: float = 200.0  # the route's rto_min (Linux default 200 ms)
    loss_burst: float = 0.0
    """Chance that the segment resent after an RTO is lost too (losses come in bursts): the RTO
    doubles, a remote write of three RTOs (seed 001's 0.2 % of log file syncs in 512 ms-1 s)."""
    next_loss: float = 0.0
    """Chance that the redo write sent after an RTO is lost too, in the same burst: a commit
    queued behind both waits two RTOs (seed 001's 0.2 % in 256-512 ms).  Higher than
    ``loss_burst``: that write carries the redo of every commit queued behind the stall, tens of
    segments where the resend is one, and goes out with the congestion window restarted at one
    segment (Linux after an RTO, RFC 5681's loss window), in flights too small to draw the three
    duplicate ACKs of a fast retransmit, so a loss in it waits out another RTO."""
    switch_every: float = 900.0  # seconds between log switches
    switch_spike_ms: float = 0.0  # extra SRL write time right after a switch (decays in 1.5 s)
    cpu_busy: float = 0.32  # primary CPU utilisation
    runq_extra: float = 0.0  # runnable tasks beyond the CPUs (primary)
    standby_cap: bool = False  # standby redo volume IOPS-capped (seed 003)
    standby_queue: float = 0.0  # target aqu-sz on the capped volume
    cap_duty: float = 1.0
    """Share of the time the capped volume's queue is full: recovery's lost-write reads come in
    bursts, and between them the SRL writes are fast (seed 003's bimodal histogram)."""
    cap_burst_s: float = 4.0  # mean length of one such burst
    calm_rfs_ms: float = 0.45  # median SRL write between bursts
    hold_every: float = 0.0
    """Seconds between two holds of the capped volume's I/O while its allowance refills (0:
    none; see ``sgmon.sim.capped``; seed 003's waits of 4-8 s)."""
    hold_ms: float = 0.0  # how long each such hold lasts
    short_hold_ms: float = 0.0
    """How long every ``SHORT_EVERY``-th hold lasts instead (0: as long as the others)."""
    calm_rfs_sigma: float = 0.30
    near_share: float = 0.0
    """Share of the phases between bursts in which recovery's reads keep the capped volume just
    under its cap: an SRL write waits behind a short queue, ``near_ms`` on average (an M/D/1
    queue near saturation: exponential waits of a few to tens of ms)."""
    near_ms: float = 0.0
    lwd_per_read: float = 0.0  # redo bytes for lost write detection per cache read
    reads_cache: float = 450.0  # physical reads cache per second (primary)
    transport_stopped: bool = False  # the standby receives nothing: its lag goes unknown
    link_down: bool = False  # the DG link drops every packet, silently: no RST, no ICMP
    boc_ms: float = 0.0  # RAC: mean wait for the other instances' SCN ack beyond the write
    gc_per_commit: float = 0.0  # RAC: blocks a commit's transaction takes from another instance
    async_mbit: float = 0.0  # throughput cap of the link to the ASYNC standbys (0: none)
    onward_down: bool = False
    """A far sync instance's destination to its terminal standby fails (ORA-03135): the far sync
    still acknowledges the primary's SYNC redo, and forwards none of it."""
    sessions: int = 400
    """Sessions that commit: each waits in its own commit and starts no next one, so while
    LGWR hangs at most this many commits queue (seed 001's "dozens of database connections")."""


HEALTHY = Conditions()
SEED001 = replace(HEALTHY, rtt_ms=2.2, link_mbit=1000.0, sessions=13)
"""Seed 001's link and workload: a remote write of ~2.7 ms without a loss (its SYNC Remote Write
averages 4.34 ms with 0.8 % of the writes in 128-256 ms), and dozens of connections of which a
stall holds 10 to 14 commits, not every arrival (570 of its log file syncs in 128-256 ms and 801
over 64 ms for its 57 stalled remote writes)."""
SEED003 = replace(HEALTHY, rtt_ms=0.95, commits=500.0)
"""Seed 003's link and workload: log file syncs of 2-4 ms between the bursts (29.2 % of them),
~390 commits a second (348,922 in its 15-minute AWR interval)."""
LINK = ("rto_min_ms", "rtt_ms", "link_mbit", "sessions", "commits", "gc_per_commit")
"""What a scenario's conditions hold before its onset as well: the link and the workload, not
the fault (the fixed route's rto_min, the RTT, the sessions, the blocks RAC instances share)."""

DEFAULT_ONSET = 30.0
"""Simulated seconds before a scenario's fault starts, in every command: the analysis learns
the healthy baseline first, and a 30 s run sees nothing but that."""

SCENARIOS: dict[str, str] = {
    "healthy": "SYNC AFFIRM pair at 0.3 ms RTT, sub-millisecond local and remote writes",
    "rto-stall": "rare TCP tail losses on the DG socket, retransmitted after a 200 ms RTO "
    '(as in "A story about Data Guard and network latency"): log file sync outliers in the '
    "128-256 ms buckets",
    "rto-stall-fixed": "the same losses after `ip route change ... rto_min 10ms`: a retransmit "
    "costs ~10 ms more than the round trip and the 128-256 ms outliers are gone",
    "standby-iops-cap": "the standby's volume hits its IOPS cap in bursts of lost-write-protect "
    "reads (as in \"Oracle Database Migrated to Cloud Starts Experiencing 'log file sync' "
    'Waits"): await >> svctm, aqu-sz 50-80, %util 100; commits of a '
    "few ms between bursts and of hundreds of ms to seconds in them",
    "log-switch-storm": "a log switch every 5 s (undersized redo logs): remote write "
    "outliers after each switch",
    "primary-cpu-starved": "the primary's CPUs are saturated: LGWR and the foregrounds wait for "
    "CPU, log file sync rises while the writes stay fast",
    "transport-stopped": "the standby stops receiving: its transport lag goes unknown (NULL), "
    "the lag's datum stops moving, the primary's destination errors and the protection drops",
    "cascade-iops-cap": "standby-iops-cap's 11.2.0.4 primary: SYNC AFFIRM to standby B, "
    "ASYNC to A, C cascaded from B; the IOPS cap hits B and C, and only B's slows commits",
    "async-iops-cap": "the IOPS cap hits only the ASYNC standby A: commits stay fast, A falls "
    "behind, a lag risk and never the cause (standby-iops-cap's ASYNC standby)",
    "rac-rto-stall": "a two-node RAC primary (rto-stall's system): rare TCP tail "
    "losses with a 200 ms RTO on node 1's link to the standby only; node 2's commits stay fast",
    "switchover": "a planned switchover at the onset: site_a, the primary, becomes the standby "
    "and site_b the primary after 12 s in which nothing commits; the panes and the DG socket "
    "follow the roles, and the gap is no fault",
    "rac-lms-slow": "a two-node RAC primary whose node 2 acknowledges node 1's commit SCN "
    "broadcasts late (LMS starved: steps 4 and 9 of the SYNC commit path): node 1's LGWR "
    "waits beyond its writes, which stay fast",
    "failover": "the primary site_a dies at the onset (its host stops answering) and site_b, "
    "its SYNC standby, is failed over to and opens as the primary 20 s later, with no standby "
    "left: the panes follow the roles, the dead host is reported unreachable, and the gap is "
    "no commit fault",
    "rac-thread-lag": "a two-node RAC primary whose node 1 loses its link to the standby: its "
    "destination errors and its commits stop waiting, thread 1 falls behind on the standby while "
    "thread 2 stays current; the standby's one transport lag does not say which thread",
    "rac-gcs-flush": "a two-node RAC primary whose node 2 redo disk is slow: node 2's LMS waits "
    "on 'gcs log flush sync' before shipping a block, and node 1's sessions wait for those "
    "blocks (gc current block busy) while node 1's own commits stay fast",
    "standby-unreachable": "the DG link goes silent (no packet passes, nothing resets the "
    "connection): LGWR's remote write waits out NET_TIMEOUT (30 s) while no commit completes and "
    "the NSS socket backs its RTO off, then the destination errors and commits go on "
    "unprotected",
    "rac-thread-slow": "a two-node RAC primary shipping SYNC to one standby and ASYNC to "
    "standby A; node 1's link to A carries 25 Mbit/s of the ~37 its thread generates: thread 1 "
    "still arrives, ever later, while thread 2 stays current; commits stay fast (a lag risk)",
    "far-sync-slow": "a far sync instance between the primary and its standby: SYNC AFFIRM to "
    "far sync FS1, which forwards ASYNC to the terminal standby; FS1's SRL volume is capped, so "
    "its SRL writes, on the commit path, slow every commit; the terminal standby is a lag risk",
    "far-sync-terminal-cap": "the same far sync layout with the cap on the terminal standby's "
    "volume only: commits stay fast, the standby behind the far sync falls behind, a lag risk",
    "far-sync-terminal-down": "the same far sync layout; the far sync's destination to the "
    "terminal standby fails (its link drops the connection): commits stay fast, acknowledged by "
    "the far sync, yet the redo is on no standby database, as a far sync has no datafiles and "
    "cannot be failed over to",
    "fast-sync-iops-cap": "standby-iops-cap's capped standby redo volume behind a Fast Sync "
    "(SYNC NOAFFIRM) destination: the standby acknowledges on receipt, so commits stay fast "
    "and the slow SRL writes are the standby's own trouble",
    "lgwr-post-slow": "LGWR posts the committing sessions ~5 ms late after each write (the "
    "commit path's post step) while the CPUs idle: a wake-up that no statistic or collector "
    "times (a deep CPU idle state, a post to hundreds of waiters); log file sync rises while "
    "the writes, the network, the standby and the CPUs stay as healthy, so the cause is unclear",
}

TAIL_LOSS = 0.0090
"""A redo write's chance of a tail loss in seed 001, set to its AWR report as the rate in time
it replaces was: over half an hour (test_sim_calibration.py, seed 0) log file sync
averages 14.5 ms (the report: 15.9) with 3.9 % in 128-256 ms (3.7), at about 200 redo writes a
second."""

_FAULTS: dict[str, Conditions] = {
    "healthy": HEALTHY,
    "rto-stall": replace(SEED001, tail_loss=TAIL_LOSS, loss_burst=0.047, next_loss=0.068),
    "rto-stall-fixed": replace(
        SEED001, tail_loss=TAIL_LOSS, loss_burst=0.047, next_loss=0.068, rto_min_ms=10.0
    ),
    "standby-iops-cap": replace(
        SEED003,
        standby_cap=True,
        standby_queue=65.0,
        rfs_ms=560.0,  # its LGWR's slow writes: 505 ms to 1.2 s
        rfs_sigma=0.27,
        cap_duty=0.42,
        cap_burst_s=0.8,
        calm_rfs_ms=1.03,  # its 5.5 % in 4-8 ms as the collector reads them (µs buckets)
        calm_rfs_sigma=0.35,
        near_share=0.33,
        near_ms=11.0,
        hold_every=200.0,
        hold_ms=4800.0,  # its waits of 4-8 s
        short_hold_ms=3000.0,  # and its fewer of 2-4 s: every fourth hold
        lwd_per_read=900.0,
        reads_cache=9000.0,
    ),
    "log-switch-storm": replace(HEALTHY, switch_every=5.0, switch_spike_ms=35.0),
    "primary-cpu-starved": replace(
        HEALTHY, cpu_busy=0.995, runq_extra=38.0, lgwr_cpu_ms=6.0, fg_cpu_ms=4.0
    ),
    "transport-stopped": replace(HEALTHY, transport_stopped=True),
    "standby-unreachable": replace(HEALTHY, link_down=True),
    "lgwr-post-slow": replace(HEALTHY, post_ms=5.0),
}
_FAULTS["cascade-iops-cap"] = _FAULTS["async-iops-cap"] = _FAULTS["standby-iops-cap"]
_FAULTS["fast-sync-iops-cap"] = _FAULTS["standby-iops-cap"]
_FAULTS["rac-rto-stall"] = _FAULTS["rto-stall"]
_FAULTS["rac-lms-slow"] = replace(HEALTHY, boc_ms=14.0)
_FAULTS["rac-thread-lag"] = _FAULTS["transport-stopped"]
_FAULTS["rac-thread-slow"] = replace(HEALTHY, async_mbit=25.0)
_FAULTS["switchover"] = _FAULTS["failover"] = HEALTHY
_FAULTS["far-sync-terminal-down"] = replace(HEALTHY, onward_down=True)
_FAULTS["rac-gcs-flush"] = replace(HEALTHY, local_ms=14.0, gc_per_commit=0.25)
_FAULTS["far-sync-slow"] = _FAULTS["far-sync-terminal-cap"] = replace(
    _FAULTS["standby-iops-cap"], lwd_per_read=0.0, reads_cache=HEALTHY.reads_cache
)  # the same capped SRL volume; a far sync has no datafiles, so no lost-write reads


def uncapped(c: Conditions) -> Conditions:
    """``c`` on a standby the IOPS cap does not reach: its SRL writes as healthy."""
    if not c.standby_cap:
        return c
    return replace(c, standby_cap=False, rfs_ms=HEALTHY.rfs_ms, rfs_sigma=HEALTHY.rfs_sigma)


def spared(c: Conditions) -> Conditions:
    """``c`` on a RAC instance the fault does not reach: no TCP losses on its own link, no late
    SCN acks for its own commits, its own redo disk as healthy, its own transport shipping, its
    own link to the ASYNC standbys uncapped."""
    return replace(
        c,
        tail_loss=0.0,
        boc_ms=0.0,
        local_ms=HEALTHY.local_ms,
        transport_stopped=False,
        async_mbit=0.0,
    )


@dataclass(frozen=True, slots=True)
class Instance:
    """One primary instance: its host, INSTANCE_NUMBER, THREAD#, and whether the fault reaches
    it (each RAC instance ships its own thread over its own NSS socket, seed 000 Table 3 and
    step 5, and waits for the other instances' acks of its own commits, steps 4 and 9)."""

    name: str
    inst_id: int = 1
    thread: int = 1
    faulted: bool = True


@dataclass(frozen=True, slots=True)
class Standby:
    """One simulated standby: its host name, DB_UNIQUE_NAME, the destination that ships to it
    (the primary's, or ``via``'s when it is cascaded from that standby), transmit mode, whether
    the fault's IOPS cap hits its volume, and whether a SYNC destination waits for its SRL
    write (AFFIRM; NOAFFIRM is Fast Sync, 12.1 on: acknowledged on receipt)."""

    name: str
    db_unique_name: str
    dest_id: int
    mode: str  # SYNCHRONOUS | ASYNCHRONOUS
    capped: bool = True
    via: str | None = None
    """The standby whose own destination ships to this one (None: the primary's does)."""
    affirm: bool = True
    far_sync: bool = False
    """A far sync instance (12.1 on): it takes the primary's SYNC redo into its SRLs,
    acknowledges, and forwards it to the standbys whose ``via`` it is; it applies nothing."""


@dataclass(frozen=True, slots=True)
class Layout:
    """The database version, the standbys of a scenario (the first one is the SYNC one) and the
    primary's instances (one, unless it is RAC)."""

    version: str
    standbys: tuple[Standby, ...]
    primaries: tuple[Instance, ...] = (Instance("primary"),)
    switch_gap: float | None = None
    """A switchover at the onset: seconds from the primary's conversion to standby until the
    standby opens as the new primary (None: no switchover)."""
    failover: bool = False
    """The role change at the onset is a failover: the primary's host dies instead of becoming
    a standby, and the new primary has no standby left."""


PAIR = Layout("19.21.0.0.0", (Standby("standby", "STBY", 2, "SYNCHRONOUS"),))
RAC = Layout(
    PAIR.version, PAIR.standbys, (Instance("node1", 1, 1), Instance("node2", 2, 2, faulted=False))
)
_LAYOUTS = {
    "cascade-iops-cap": Layout(
        "11.2.0.4.0",
        (
            Standby("standby_b", "STBY_B", 2, "SYNCHRONOUS"),
            Standby("standby_a", "STBY_A", 3, "ASYNCHRONOUS", capped=False),
            Standby("standby_c", "STBY_C", 2, "ASYNCHRONOUS", via="standby_b"),
        ),
    ),
    "async-iops-cap": Layout(
        PAIR.version,
        (
            Standby("standby", "STBY", 2, "SYNCHRONOUS", capped=False),
            Standby("standby_a", "STBY_A", 3, "ASYNCHRONOUS"),
        ),
    ),
    "rac-rto-stall": RAC,
    "switchover": Layout(
        PAIR.version,
        (Standby("site_b", "SITE_B", 2, "SYNCHRONOUS"),),
        (Instance("site_a"),),
        switch_gap=12.0,
    ),
    "rac-lms-slow": RAC,
    "rac-thread-lag": RAC,
    "rac-thread-slow": Layout(
        PAIR.version,
        (
            Standby("standby", "STBY", 2, "SYNCHRONOUS", capped=False),
            Standby("standby_a", "STBY_A", 3, "ASYNCHRONOUS", capped=False),
        ),
        RAC.primaries,
    ),
    "failover": Layout(
        PAIR.version,
        (Standby("site_b", "SITE_B", 2, "SYNCHRONOUS"),),
        (Instance("site_a"),),
        switch_gap=20.0,
        failover=True,
    ),
    "fast-sync-iops-cap": Layout(
        PAIR.version, (Standby("standby", "STBY", 2, "SYNCHRONOUS", affirm=False),)
    ),
    "far-sync-slow": Layout(
        PAIR.version,
        (
            Standby("farsync", "FS1", 2, "SYNCHRONOUS", far_sync=True),
            Standby("standby", "STBY", 3, "ASYNCHRONOUS", capped=False, via="farsync"),
        ),
    ),
    "far-sync-terminal-cap": Layout(
        PAIR.version,
        (
            Standby("farsync", "FS1", 2, "SYNCHRONOUS", capped=False, far_sync=True),
            Standby("standby", "STBY", 3, "ASYNCHRONOUS", via="farsync"),
        ),
    ),
    "far-sync-terminal-down": Layout(
        PAIR.version,
        (
            Standby("farsync", "FS1", 2, "SYNCHRONOUS", capped=False, far_sync=True),
            Standby("standby", "STBY", 3, "ASYNCHRONOUS", capped=False, via="farsync"),
        ),
    ),
    "rac-gcs-flush": Layout(
        PAIR.version,
        PAIR.standbys,
        (Instance("node1", 1, 1, faulted=False), Instance("node2", 2, 2)),
    ),
}


def layout(scenario: str) -> Layout:
    """The version and standbys of a scenario (a 19c SYNC pair unless it says otherwise)."""
    return _LAYOUTS.get(scenario, PAIR)


def conditions(scenario: str, t: float, onset: float) -> Conditions:
    """The conditions at simulated second ``t`` (the fault applies from ``onset`` on)."""
    if scenario not in _FAULTS:
        raise KeyError(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
    if t < onset:
        fault = _FAULTS[scenario]
        return replace(HEALTHY, **{k: getattr(fault, k) for k in LINK})
    return _FAULTS[scenario]
