"""The grading vocabulary every stage shares: the severity scale, the limits and the grader.

A cell's static grade comes from here; the analysis raises it while the series is an open
outlier (``sgmon.verdicts.Judgement.grade``).  Where a limit comes from, lowest precedence first:

1. the fields' declarations in the frames' own schema (``Field.warn``/``crit``; the built-in
   collectors take theirs from seed 000's "Monitoring system resources" and "Network": %sys >
   30, %idle near 0, aqu-sz > 1, %util near 100, drops/overruns > 0, scan > 200 pages/s,
   swapping, rto >= 200 ms, RTT > 5 ms), so a remote or third-party collector counts;
2. ``SEED_LIMITS`` below, for what no collector declares (the commit path's waits) or declares
   differently (one log switch is not an outlier: the log_switches rule judges their frequency),
   and ``CORE_MULTIPLES`` for load and run queue, which scale with the host's CPU count;
3. ``[thresholds]`` in sgmon.toml: ``"collector.field" = {warn = .., crit = ..}``, or
   ``"collector.instance.field"`` for one instance (``"oracle_waits.log file sync.p99"``).

Below the analysis: it imports neither the analysis nor Textual, so the agent, the exporter and
every sink can grade without running it.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from sgmon.errors import ConfigError
from sgmon.events import (
    COMMIT_EVENTS,
    GCS_LOG_FLUSH,
    LNS_SENDREQ,
    LOG_FILE_SYNC,
    RFS_WRITE,
    SYNC_REMOTE_WRITE,
    TRANSPORT_MISC,
)
from sgmon.model import Field, Frame, Schema, Value, number


class Severity(enum.StrEnum):
    """The one severity scale, mildest first; each is its own word (``"warn"``) wherever a
    severity is written, compared or stored."""

    OK = "ok"
    INFO = "info"
    WARN = "warn"
    CRIT = "crit"


SEVERITIES: tuple[str, ...] = tuple(Severity)
"""The scale's words, mildest first."""
RANK: dict[str, int] = {s: i for i, s in enumerate(SEVERITIES)}


def rank(severity: str | None) -> int:
    """Order of a severity: ok/None 0, info 1, warn 2, crit 3."""
    return RANK.get(severity or "ok", 0)


def worst(severities: Iterable[str | None]) -> str | None:
    """The highest of several severities, None when there is none."""
    best: str | None = None
    for s in severities:
        if s is not None and (best is None or rank(s) > rank(best)):
            best = s
    return best


WAIT_WARN_MS, WAIT_CRIT_MS = 8.0, 100.0
"""Commit-path waits on average: over 8 ms is an outlier (seed 000, Table 5); 100 ms+ is the
128-256 ms bucket of seed 001.  A sudden departure of a commit-path wait warns only from
WAIT_WARN_MS up: a p90 moving from 1 to 4 ms is a change worth seeing, not an incident."""


@dataclass(frozen=True, slots=True)
class Limit:
    """Warn and crit levels of one series, and where they come from."""

    warn: float | None
    crit: float | None
    higher_is_worse: bool = True
    source: str = ""

    def grade(self, value: float) -> str | None:
        """Severity of ``value`` against this limit, None when within it."""
        if self.higher_is_worse:
            if self.crit is not None and value >= self.crit:
                return "crit"
            if self.warn is not None and value >= self.warn:
                return "warn"
        else:
            if self.crit is not None and value <= self.crit:
                return "crit"
            if self.warn is not None and value <= self.warn:
                return "warn"
        return None


_P99 = (
    "Best Practices for Synchronous Redo Transport, Table 5 (waits over 8 ms are outliers); "
    "A story about Data Guard and network latency (128-250 ms stalls)"
)
_AVG = (
    "Best Practices for Synchronous Redo Transport, Table 5: a commit path averaging over 8 ms is "
    "made of outliers"
)
SEED_LIMITS: dict[str, Limit] = {
    **{f"oracle_waits.{e}.p99": Limit(64.0, 256.0, source=_P99) for e in COMMIT_EVENTS},
    # the SRL write a SYNC AFFIRM commit waits for (seed 000 step 7): its tail shows a capped
    # volume's bursts that its average, mostly the fast writes between them, hides (seed 003)
    f"oracle_waits.{RFS_WRITE}.p99": Limit(64.0, 256.0, source=_P99),
    **{
        f"oracle_waits.{e}.avg": Limit(WAIT_WARN_MS, WAIT_CRIT_MS, source=_AVG)
        # Redo Transport MISC and 11.2's LNS wait are the same remote write seen from NSS
        # (seed 001's chain): graded alike, one time is one colour
        for e in (LOG_FILE_SYNC, SYNC_REMOTE_WRITE, TRANSPORT_MISC, LNS_SENDREQ, RFS_WRITE)
    },
    # LMS's 'log file sync' before it ships a block (90 % under 2 ms when healthy)
    f"oracle_waits.{GCS_LOG_FLUSH}.avg": Limit(WAIT_WARN_MS, WAIT_CRIT_MS, source=_AVG),
    "oracle_dg.log_switches": Limit(
        None, None, source="one switch is normal; the log_switches rule judges their frequency"
    ),
}
CORE_MULTIPLES: dict[str, tuple[float, float]] = {
    "cpu.load1": (2.0, 4.0),  # seed 000: load > 2x cores busy, > 4x cores overloaded
    "cpu.runq_sz": (2.0, 4.0),  # seed 000: runq-sz indicates CPU saturation
}
TEXT_STATES = ("status", "error", "gap_status", "apply_state", "archive_gap")
"""oracle_dg text fields whose value alone is a state (never a baseline)."""


def idle_rto(collector: str, name: str, row: Mapping[str, object]) -> bool:
    """An rto that costs nothing: seed 001's 200 ms RTO only stalls commits when a segment is
    resent, and every healthy Linux socket sits at rto 204, so a socket that resent and lost
    nothing this interval is not graded on its rto."""
    return (
        collector == "tcp" and name == "rto" and not row.get("retransmits") and not row.get("lost")
    )


def text_grade(collector: str, name: str, value: str) -> tuple[str | None, str]:
    """Destination states that are bad whatever their history (oracle-views §5.4, §5.5)."""
    if collector != "oracle_dg":
        return None, ""
    v = value.strip().upper()
    if name == "status" and v in ("ERROR", "DISABLED", "BAD PARAM", "ALTERNATE"):
        return "crit", f"destination status {value}"
    if name == "error" and v:
        return "crit", f"destination error {value}"
    if name == "gap_status" and v not in ("", "NO GAP"):
        return "warn", f"destination gap status {value}"
    if name == "archive_gap" and v:
        return "crit", f"archive gap {value}: logs missing on the standby (V$ARCHIVE_GAP)"
    if name == "apply_state" and v != "APPLYING_LOG":
        sev = "crit" if v in ("NOT RUNNING", "WAIT_FOR_GAP", "ERROR") else "warn"
        return sev, f"redo apply (MRP0) {value.lower() if v == 'NOT RUNNING' else value}"
    return None, ""


def cpu_count(frame: Frame) -> int:
    """CPUs the frame's cpu collector reports (0 without one): load limits scale with it."""
    return sum(1 for i in frame.rows("cpu") if i != "all")


def _local_schema(collector: str) -> tuple[Field, ...]:
    """The fields this machine's collector class declares: the schema of frames that come with
    none (an Analyzer fed by hand)."""
    from sgmon import registry

    try:
        return registry.load(collector).fields
    except (KeyError, ImportError, AttributeError):
        return ()


class Grader:
    """Limits by series from the frames' schema, the seeds and the config; grades values.

    ``schema_of(host)`` gives the schema a host's frames came with (the Monitor's, a
    recording's); without it, the local collector classes' declarations are used.
    """

    def __init__(
        self,
        overrides: Mapping[str, Mapping[str, float]] | None = None,
        schema_of: Callable[[str], Schema] | None = None,
    ) -> None:
        self.overrides = {k: _parse_override(k, v) for k, v in (overrides or {}).items()}
        self.schema_of = schema_of
        self._fields: dict[tuple[str, str], dict[str, Field]] = {}
        self._limits: dict[tuple[str, str, str, str, int], Limit | None] = {}
        self._may: dict[tuple[str, str, str], bool] = {}

    def meta(self, host: str, collector: str, name: str) -> Field | None:
        """The declared field (unit, direction, thresholds) of a host's collector."""
        try:
            fields = self._fields[(host, collector)]
        except KeyError:
            declared: tuple[Field, ...] = ()
            if self.schema_of is not None:
                try:
                    declared = self.schema_of(host).get(collector, ())
                except KeyError:
                    declared = ()
            else:
                declared = _local_schema(collector)
            fields = self._fields[(host, collector)] = {f.name: f for f in declared}
        return fields.get(name)

    def limit(
        self, host: str, collector: str, instance: str, name: str, ncpu: int = 0
    ) -> Limit | None:
        """The limit of one series, or None when nothing bounds it (cached per series)."""
        key = (host, collector, instance, name, ncpu)
        try:
            return self._limits[key]
        except KeyError:
            lim = self._limits[key] = self._lookup(host, collector, instance, name, ncpu)
            return lim

    def forget(self, series: set[tuple[str, str, str, str]]) -> None:
        """Drop the cached limits of (host, collector, instance, name) series that stopped
        reporting: a socket that reconnects on a new port is a new instance."""
        if series:
            for key in [k for k in self._limits if k[:4] in series]:
                del self._limits[key]

    def may_limit(self, host: str, collector: str, name: str) -> bool:
        """Whether any instance of this field can have a limit (to skip the rest cheaply);
        asked for every cell of every frame by the exporter and the replay summary: cached."""
        key = (host, collector, name)
        try:
            return self._may[key]
        except KeyError:
            may = self._may[key] = self._may_limit(host, collector, name)
            return may

    def _may_limit(self, host: str, collector: str, name: str) -> bool:
        meta = self.meta(host, collector, name)
        if meta is not None and (meta.warn is not None or meta.crit is not None):
            return True
        if f"{collector}.{name}" in CORE_MULTIPLES or (
            collector == "oracle_dg" and name in TEXT_STATES
        ):
            return True
        return any(
            k.startswith(f"{collector}.") and k.endswith(f".{name}")
            for k in (*self.overrides, *SEED_LIMITS)
        )

    def grade(
        self,
        host: str,
        collector: str,
        instance: str,
        name: str,
        value: Value,
        row: Mapping[str, object] | None = None,
        ncpu: int = 0,
    ) -> str:
        """The static grade of one value: ``ok``, ``warn`` or ``crit`` ("ok" when unbounded)."""
        if isinstance(value, str):
            return text_grade(collector, name, value)[0] or "ok"
        v = number(value)
        if v is None or (row is not None and idle_rto(collector, name, row)):
            return "ok"
        lim = self.limit(host, collector, instance, name, ncpu)
        return (lim.grade(v) if lim is not None else None) or "ok"

    def judge(
        self, host: str, collector: str, instance: str, name: str, ncpu: int = 0
    ) -> Callable[[float], str]:
        """``value -> grade`` for a series' history (sparklines colour past values with it)."""
        lim = self.limit(host, collector, instance, name, ncpu)
        if lim is None:
            return _always_ok
        return lambda v: lim.grade(v) or "ok"

    def _lookup(
        self, host: str, collector: str, instance: str, name: str, ncpu: int
    ) -> Limit | None:
        meta = self.meta(host, collector, name)
        hiw = meta.higher_is_worse if meta else True
        keys = (f"{collector}.{instance}.{name}", f"{collector}.{name}")
        base = next((SEED_LIMITS[k] for k in keys if k in SEED_LIMITS), None)
        mult = CORE_MULTIPLES.get(f"{collector}.{name}")
        if base is None and mult and ncpu:
            why = f"Best Practices for Synchronous Redo Transport: load vs {ncpu} CPUs"
            base = Limit(mult[0] * ncpu, mult[1] * ncpu, True, why)
        if base is None and meta and (meta.warn is not None or meta.crit is not None):
            base = Limit(meta.warn, meta.crit, hiw, "default limit")
        over = next((k for k in keys if k in self.overrides), None)
        if over is None:
            return base
        warn, crit = self.overrides[over]  # a level the config leaves out keeps its default
        return Limit(
            warn if warn is not None else base.warn if base else None,
            crit if crit is not None else base.crit if base else None,
            hiw,
            f"config [thresholds] {over!r}",
        )


def _always_ok(_: float) -> str:
    return "ok"


def _parse_override(key: str, value: object) -> tuple[float | None, float | None]:
    if key.count(".") < 1 or not isinstance(value, Mapping):
        raise ConfigError(f'[thresholds] {key!r}: use "collector.field" = {{ warn = N, crit = N }}')
    extra = set(value) - {"warn", "crit"}
    if extra:
        raise ConfigError(
            f"[thresholds] {key!r}: unknown key(s) {', '.join(sorted(extra))}; only warn and crit"
        )
    out: list[float | None] = []
    for name in ("warn", "crit"):
        v = value.get(name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int | float)):
            raise ConfigError(f"[thresholds] {key!r}: {name} must be a number, not {v!r}")
        out.append(None if v is None else float(v))
    return out[0], out[1]
