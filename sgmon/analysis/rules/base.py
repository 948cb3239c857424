"""What every rule shares: its parameters, the claim it makes, and how a claim becomes a finding.

A rule is a function of the evaluation ``Context`` that yields ``Claim``s, registered with the
``rule`` decorator, which states as data what the rule is: its name, its seed, and its weight (a
cause, a cause inferred from the database alone, or advice).  A rule about each host on its own
(``host_rule``: a function of the context and one host's view) is evaluated once a tick for
every host, not once per primary instance (RAC), from a context that has no primary instance.
``make`` turns a claim into a ``Finding``, taking the commit-path chain into account.  A new rule
is one decorated function in the module of its family.

Rule parameters that are not per-field thresholds live here as constants, with their source.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from statistics import median

from sgmon import buckets
from sgmon.analysis.context import PEAK_TICKS, Chain, Context, HostView, now
from sgmon.analysis.findings import STATE, Persist
from sgmon.events import LOG_FILE_SYNC, REMOTE_WRITES, SYNC_REMOTE_WRITE
from sgmon.fields import DISK, ORACLE_REDO, ORACLE_WAITS
from sgmon.grading import RANK, worst
from sgmon.model import Frame
from sgmon.units import field_label, fmt_num, fmt_step
from sgmon.verdicts import Finding, Outlier, SeriesKey

CAUSE, ADVICE, GENERIC = 3.0, 1.0, 0.5  # score weights: a mechanism beats a setting beats "slow"
INFERRED = 2.0  # a cause read from the database alone, without the OS evidence the seed saw
R_MIN = 0.3  # correlation that counts as "lines up"
RECENT = 10  # ticks a one-tick event (a retransmit) keeps counting
SPIKE_S = 10.0
"""Samples longer than this cannot show the few seconds a switch spikes the remote write."""
COARSE_S = 30.0
"""From this step on (OSWatcher's 30 s, sar's 10 min, AWR's 15-30 min) a finding says the
resolution it rests on: every value is an average over a whole sample."""
SETTLE_S = 60.0
"""After a role change, the seconds a switchover's own steps (the old primary mounted as a
standby, the new one opened, redo apply started, transport re-established) may leave a standby
not applying or not receiving: that is the switchover, not a fault."""
LOSSY = 3  # retransmits within RECENT ticks that make steady loss, not the odd one (seed 001)
DEEP_QUEUE = 4.0  # seed 003: avgqu-sz 30-87 while capped; MAA: > 1 is saturation
QUEUED_IDLE = 20.0  # % not running code below which a run queue over 2x cores is starvation
OVERHEAD_MIN = 0.2  # LGWR overhead's share of log file sync below which its CPU wait is no cause
AWAIT_RATIO = 5.0  # seed 003: await 57-134 ms vs svctm 0.9-1.5 ms
STORM_S, GUIDE_S = 60.0, 1200.0  # a storm; seed 000: logs sized for >= 20 min at peak
TABLE2 = ((5e6, 4), (25e6, 16), (50e6, 32), (float("inf"), 64))  # redo B/s up to -> log GB
LGWR_TRACE = "lgwr"
"""The oracle_trace row of the LGWR trace: its slow writes, broadcast waits and polling."""


@dataclass(slots=True)
class Claim:
    """One conclusion of a rule about one subject of one host, before the chain is weighed.

    ``cause (where): conclusion`` is the title; ``series`` are the outliers it rests on.
    ``overlap`` scores a point event against the chain when correlation cannot (a log switch);
    ``explains`` False keeps it off a chain it cannot explain whatever the correlation (the
    budget says so); ``bonus`` (0-1, budget evidence) ranks it among equals.  ``rule`` and
    ``weight`` override the rule's own for a claim of another kind it also makes.
    """

    host: str
    subject: str
    severity: str
    cause: str
    where: str | None
    """None: the Data Guard route seen from ``host`` (``Context.route``), which names the
    primary instance of each evaluation, so a per-host rule leaves it to ``make``."""
    conclusion: str
    evidence: list[str]
    series: list[SeriesKey]
    overlap: float | None = None
    explains: bool = True
    bonus: float = 0.0
    rule: str = ""
    weight: float | None = None


Check = Callable[[Context], Iterable[Claim]]
HostCheck = Callable[[Context, HostView], Iterable[Claim]]
HostClaims = dict[str, dict[str, list[Claim]]]
"""Per-host rule name -> host -> its claims this tick (``host_claims``)."""


@dataclass(frozen=True, slots=True)
class Rule:
    """A rule as data: its name, its seed, its weight, and the check that yields its claims."""

    name: str
    seed: str
    weight: float
    check: Check | None = field(compare=False)
    host_check: HostCheck | None = field(default=None, compare=False)
    """Instead of ``check``: the claims about one host, which may read that host's view and
    what every evaluation of the tick shares (grader, tracker, topology, time), never the
    primary instance, its budget or its chain (``host_claims`` gives it none of them)."""
    persist: Persist = STATE
    """How long its findings must hold before they open (``sgmon.analysis.findings``)."""

    def findings(self, ctx: Context, hosts: HostClaims) -> Iterable[Finding]:
        """The rule's claims now, as findings; a per-host rule's are the tick's (``hosts``)
        about the hosts of this evaluation, in their order."""
        if self.check is not None:
            claims = self.check(ctx)
        else:
            claims = (c for h in ctx.hosts for c in hosts[self.name][h])
        return (make(ctx, self, c) for c in claims)


RULES: list[Rule] = []
"""Every registered rule, causes and advice, in registration order."""


def rule(name: str, seed: str, weight: float, persist: Persist = STATE) -> Callable[[Check], Check]:
    """Register a rule's check under its name, seed, weight and persistence."""

    def register(check: Check) -> Check:
        RULES.append(Rule(name, seed, weight, check, persist=persist))
        return check

    return register


def host_rule(
    name: str, seed: str, weight: float, persist: Persist = STATE
) -> Callable[[HostCheck], HostCheck]:
    """Register a rule about each host on its own (``Rule.host_check``)."""

    def register(check: HostCheck) -> HostCheck:
        RULES.append(Rule(name, seed, weight, None, check, persist=persist))
        return check

    return register


def host_claims(ctx: Context) -> HostClaims:
    """Every per-host rule's claims about every host of ``ctx``, a context of no primary
    instance: RAC evaluates each instance apart, and the claims about a standby are the same
    from each, so they are made once a tick."""
    assert ctx.primary_name is None and ctx.budget is None and ctx.chain is None
    return {
        r.name: {h: list(r.host_check(ctx, v)) for h, v in ctx.hosts.items()}
        for r in RULES
        if r.host_check is not None
    }


def make(ctx: Context, spec: Rule, claim: Claim) -> Finding:
    """A finding whose severity and title take the commit-path chain into account.

    The cause lines up with the chain by its best Pearson link (``r=``) or, for point events,
    by the event-overlap score (``overlap=``), whichever is higher.
    """
    if why := ctx.off_path(claim.host, claim.series):
        claim = lag_risk(claim, claim.rule or spec.name, why, _upstream(ctx, claim.host))
    weight = spec.weight if claim.weight is None else claim.weight
    score, strength = _alignment(ctx, claim)
    severity, evidence, series = claim.severity, claim.evidence, claim.series
    where = ctx.route(claim.host) if claim.where is None else claim.where
    title = f"{claim.cause} ({where}): {claim.conclusion}"
    drawn = ctx.chain is not None and score is not None and score >= R_MIN
    if ctx.chain is not None and drawn:
        # only a cause that lines up is drawn as the symptom's cause ("<-")
        title = f"{ctx.chain.label} <- {title}"
        severity, evidence, series = _drawn(ctx, ctx.chain, claim, strength)
        ctx.explained = ctx.explained or weight >= INFERRED
    evidence = [*evidence, *resolution(ctx)]
    rank = RANK[severity] * 10 + weight + (score or 0.0) + claim.bonus
    name = claim.rule or spec.name
    key = f"{name}:{claim.host}:{claim.subject}"
    cost, commits = tick_cost(ctx) if drawn else (0.0, 0.0)
    return Finding(
        key,
        severity,
        claim.host,
        title,
        evidence,
        series,
        name,
        "003" if name == LAG_RISK else spec.seed,
        ctx.now,
        None,
        rank,
        cost_ms=cost,
        commits=commits,
        drawn=drawn,
        moment=(cost, float(RANK[severity]), out_of_line(ctx, series)),
    )


def tick_cost(ctx: Context) -> tuple[float, float]:
    """The extra commit time of this tick on the primary instance, in ms, and its commits:
    log file sync's average above its baseline (its calm points' median before the baseline
    is fitted), times the commits of the tick (``oracle_redo`` user_commits per second times
    the step).  Nothing when either is unknown."""
    p = ctx.primary
    if p is None:
        return 0.0, 0.0
    lfs = ORACLE_WAITS.avg.at(p.frame, LOG_FILE_SYNC)
    series = ctx.tracker.series(ORACLE_WAITS.avg.key(p.name, LOG_FILE_SYNC))
    base = None
    if series is not None:  # before its fit (an early fault), the calm points it has
        base = (
            series.median if series.median is not None or not series.calm else median(series.calm)
        )
    commits = ORACLE_REDO.user_commits.at(p.frame, ORACLE_REDO.Rows.db.fixed)
    if lfs is None or base is None or not commits:
        return 0.0, 0.0
    n = commits * ctx.interval
    return max(0.0, lfs - base) * n, n


def out_of_line(ctx: Context, series: Iterable[SeriesKey]) -> float:
    """How far the most departed of ``series`` is from its baseline now, as a ratio (1: in
    line); what tells two moments of an episode of equal cost and severity apart (the device
    at 100 % with a 513 ms await, not the one idling beside it)."""
    worst_ratio = 1.0
    for key in series:
        view = ctx.hosts.get(key[0])
        o = view.outliers.get(key) if view is not None else None
        if o is None or not isinstance(o.value, int | float) or o.baseline is None:
            continue
        lo, hi = sorted((abs(float(o.value)), abs(o.baseline)))
        worst_ratio = max(worst_ratio, (hi + 1e-3) / (lo + 1e-3))
    return worst_ratio


def _upstream(ctx: Context, host: str) -> str:
    """What feeds ``host`` when it is cascaded (``lag_risk``'s ``upstream``), "" otherwise."""
    return ctx.topology.upstream(host) if ctx.topology is not None else ""


def _alignment(ctx: Context, claim: Claim) -> tuple[float | None, str]:
    """How well ``claim`` lines up with the chain, and that in words: its best link's
    correlation or, for a point event, its overlap score, whichever is higher."""
    link = ctx.link(claim.series) if claim.explains else None
    score, strength = (link.r, link.strength(ctx.interval)) if link else (None, "")
    if claim.overlap is not None and (score is None or claim.overlap > score):
        return claim.overlap, f"it spiked after {claim.overlap:.0%} of them"
    return score, strength


def _drawn(
    ctx: Context, chain: Chain, claim: Claim, strength: str
) -> tuple[str, list[str], list[SeriesKey]]:
    """(severity, evidence, series) of a cause drawn as the chain's: as severe as the symptom
    it explains, how well it lines up said in words, and the trigger among its series (the
    title cites it: its panel proves it too)."""
    severity = worst((claim.severity, chain.trigger.severity)) or claim.severity
    evidence = [*claim.evidence, f"lines up with {chain.label}, {chain_peak(ctx)}: {strength}"]
    series = claim.series
    if chain.trigger.key not in series:
        series = [*series, chain.trigger.key]
    return severity, evidence, series


LAG_RISK = "lag_risk"


def lag_risk(claim: Claim, rule: str, why: str, upstream: str = "") -> Claim:
    """A fault off the commit path (an ASYNC or cascaded standby, an ASYNC socket): a risk to
    the lag and to a failover, never the cause of commit time (seed 003: the capped ASYNC standby
    did not slow commits), so at most warn and never drawn as a chain's cause.  ``upstream``:
    what feeds a cascaded host (``cascaded from B (dest_2 ASYNC)``), said in the title."""
    said = f"{upstream}, " if upstream else ""
    return replace(
        claim,
        subject=f"{rule}:{claim.subject}",
        severity="info" if claim.severity == "info" else "warn",
        conclusion=f"lag risk, {said}not on the commit path: {claim.conclusion}",
        evidence=[*claim.evidence, why],
        explains=False,
        overlap=None,
        rule=LAG_RISK,
        weight=ADVICE,
    )


def describe(o: Outlier) -> str:
    """``standby disk sdb w_await 40 ms`` for a chain link; a wait event or database statistic
    is named by itself (``node2 gcs log flush sync avg 14.4 ms``)."""
    unit = f" {o.unit}" if o.unit and not isinstance(o.value, str) else ""
    what = f"{o.instance} {field_label(o.field)}"
    if not o.collector.startswith("oracle_"):
        what = f"{o.collector} {what}"
    if isinstance(o.value, int | float) and buckets.is_bucket_field(o.collector, o.field):
        return f"{o.host} {what} {buckets.quantile_text(o.value)}"
    value = o.value if isinstance(o.value, str) else fmt_num(o.value)
    return f"{o.host} {what} {value}{unit}"


def chain_peak(ctx: Context) -> str:
    """What the chain's title value is: the trigger's highest of the last ticks, beside its
    value now and baseline (one instant, so the lines of a finding agree)."""
    assert ctx.chain is not None
    return f"the highest of the last {PEAK_TICKS} ticks; now {now(ctx.chain.trigger)}"


def switching(ctx: Context) -> bool:
    """Whether a log switch explains a remote-write spike now: one in the last ``RECENT`` ticks
    (seed 000, Figure 3), or switches more often than Table 2's sizing allows."""
    p = ctx.primary
    t: Sequence[float] = p.switches if p is not None else ()
    if t and ctx.interval <= SPIKE_S and ctx.now - t[-1] <= RECENT * ctx.interval:
        return True
    return len(t) > 1 and max(t[-1] - t[-2], ctx.now - t[-1]) < GUIDE_S


def busiest_disk(view: HostView) -> tuple[str, float, float | None]:
    """(device, aqu-sz, %util) of the host's device with the deepest queue now."""
    best: tuple[str, float, float | None] = ("", 0.0, None)
    for dev, row in view.frame.rows(DISK.name).items():
        aqu = DISK.aqu_sz.of(row)
        if aqu is not None and aqu > best[1]:
            best = (dev, aqu, DISK.util.of(row))
    return best


def remote_write_event(ctx: Context) -> str:
    """The primary's remote-write event: 12.1's ``SYNC Remote Write``, or 11.2's ``LNS wait on
    SENDREQ`` (whose release has no Fast Sync, seed 003); the 12.1 name when neither is known."""
    p = ctx.primary
    return remote_event(p.frame if p is not None else None)


def remote_event(frame: Frame | None) -> str:
    """A primary instance's remote-write event, as ``remote_write_event``."""
    return next(
        (
            e
            for e in REMOTE_WRITES
            if frame is not None and e in frame.rows(ORACLE_WAITS.name)  # waited on now or not
        ),
        SYNC_REMOTE_WRITE,
    )


def resolution(ctx: Context) -> list[str]:
    """The line a finding from coarse samples (an AWR report, sar's 10 minutes) ends with: what
    such samples can and cannot show."""
    if ctx.interval < COARSE_S:
        return []
    return [
        (
            f"resolution: {fmt_step(ctx.interval)} samples; each value is the sample's "
            "average, so stalls shorter than a sample show only as raised averages"
        )
    ]
