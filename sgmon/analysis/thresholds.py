"""Static thresholds: the seeds' "this is bad" numbers, overridable per field in the config.

Where a limit comes from, lowest precedence first:

1. the collectors' own field declarations (``Field.warn``/``crit``, taken from seed 000's
   "Monitoring system resources" and "Network": %sys > 30, %idle near 0, aqu-sz > 1, %util near
   100, drops/overruns > 0, scan > 200 pages/s, swapping, rto >= 200 ms, RTT > 5 ms);
2. ``SEED_LIMITS`` below, for what no collector declares (the commit path's p99) or declares
   differently (one log switch is not an outlier: rules.log_switches judges their frequency),
   and ``CORE_MULTIPLES`` for load and run queue, which scale with the host's CPU count;
3. ``[thresholds]`` in sgmon.toml: ``"collector.field" = {warn = .., crit = ..}``, or
   ``"collector.instance.field"`` for one instance (``"oracle_waits.log file sync.p99"``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from sgmon import registry
from sgmon.config import ConfigError
from sgmon.model import Field

WAIT_WARN_MS, WAIT_CRIT_MS = 8.0, 100.0
"""Commit-path waits: over 8 ms is an outlier (seed 000, Table 5); 100 ms+ is the 128-256 ms
bucket of seed 001.  The wait fields declare no thresholds (they differ per event), so the
status line grades with these, and a sudden departure of a commit-path wait warns only from
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


_P99 = "seed 000 Table 5 (waits over 8 ms are outliers), seed 001 (128-250 ms stalls)"
SEED_LIMITS: dict[str, Limit] = {
    **{
        f"oracle_waits.{event}.p99": Limit(64.0, 256.0, source=_P99)
        for event in (
            "log file sync",
            "SYNC Remote Write",
            "Redo Transport MISC",
            "LNS wait on SENDREQ",
        )
    },
    "oracle_dg.log_switches": Limit(
        None, None, source="one switch is normal; rules.log_switches judges their frequency"
    ),
}
CORE_MULTIPLES: dict[str, tuple[float, float]] = {
    "cpu.load1": (2.0, 4.0),  # seed 000: load > 2x cores busy, > 4x cores overloaded
    "cpu.runq_sz": (2.0, 4.0),  # seed 000: runq-sz indicates CPU saturation
}


def idle_rto(collector: str, name: str, row: Mapping[str, object]) -> bool:
    """An rto that costs nothing: seed 001's 200 ms RTO only stalls commits when a segment is
    resent, and every healthy Linux socket sits at rto 204, so a socket that resent and lost
    nothing this interval is not graded on its rto (by the analysis or the dashboard)."""
    return (
        collector == "tcp" and name == "rto" and not row.get("retransmits") and not row.get("lost")
    )


@cache
def field_meta(collector: str, name: str) -> Field | None:
    """The declared field (unit, direction, thresholds), or None for an unknown collector."""
    try:
        cls = registry.load(collector)
    except (KeyError, ImportError, AttributeError):
        return None
    return next((f for f in cls.fields if f.name == name), None)


class Thresholds:
    """Limit lookup with the config's overrides; results are cached per series."""

    def __init__(self, overrides: Mapping[str, Mapping[str, float]] | None = None) -> None:
        self.overrides = {k: _parse_override(k, v) for k, v in (overrides or {}).items()}
        self._cache: dict[tuple[str, str, str, int], Limit | None] = {}

    def limit(self, collector: str, instance: str, name: str, ncpu: int = 0) -> Limit | None:
        """The limit for one series, or None when nothing bounds it."""
        key = (collector, instance, name, ncpu)
        try:
            return self._cache[key]
        except KeyError:
            pass
        lim = self._lookup(collector, instance, name, ncpu)
        self._cache[key] = lim
        return lim

    def forget(self, series: set[tuple[str, str, str]]) -> None:
        """Drop the cached limits of (collector, instance, name) series that stopped reporting:
        a socket that reconnects on a new port is a new instance."""
        if series:
            for key in [k for k in self._cache if k[:3] in series]:
                del self._cache[key]

    def may_limit(self, collector: str, name: str) -> bool:
        """Whether any instance of this field can have a limit (to skip the rest cheaply)."""
        meta = field_meta(collector, name)
        if meta is not None and (meta.warn is not None or meta.crit is not None):
            return True
        if f"{collector}.{name}" in CORE_MULTIPLES:
            return True
        return any(
            k.startswith(f"{collector}.") and k.endswith(f".{name}")
            for k in (*self.overrides, *SEED_LIMITS)
        )

    def _lookup(self, collector: str, instance: str, name: str, ncpu: int) -> Limit | None:
        meta = field_meta(collector, name)
        hiw = meta.higher_is_worse if meta else True
        for k in (f"{collector}.{instance}.{name}", f"{collector}.{name}"):
            if k in self.overrides:
                warn, crit = self.overrides[k]
                return Limit(warn, crit, hiw, f"config [thresholds] {k!r}")
        for k in (f"{collector}.{instance}.{name}", f"{collector}.{name}"):
            if k in SEED_LIMITS:
                return SEED_LIMITS[k]
        mult = CORE_MULTIPLES.get(f"{collector}.{name}")
        if mult and ncpu:
            return Limit(mult[0] * ncpu, mult[1] * ncpu, True, f"seed 000: load vs {ncpu} CPUs")
        if meta and (meta.warn is not None or meta.crit is not None):
            return Limit(meta.warn, meta.crit, hiw, f"{collector}.{name} declared limit")
        return None


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
