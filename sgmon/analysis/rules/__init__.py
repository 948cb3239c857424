"""Advice rules: each names its seed, the evidence it saw, and what to do.

Cause rules (a specific mechanism that the seeds describe) outrank advice rules (a setting worth
changing), which outrank the generic commit-path chain; the chain is only reported when no cause
rule explains a degraded commit path.  When the commit path is degraded on the primary, a cause
whose series line up with it (r >= ``R_MIN``, see correlate.py) names the chain,
``<commit-path series> <- <cause> (<where>, r=..): <conclusion>``, and takes the symptom's
severity (a p99 in the 128-256 ms stalls of seed 001 is ``crit``).

One module per family of causes; ``base`` holds what they share and the registry.
"""

from __future__ import annotations

from sgmon.analysis.context import Context
from sgmon.analysis.findings import AT_ONCE, Persist
from sgmon.analysis.liveness import RULE as SILENT
from sgmon.analysis.rules import (  # noqa: F401 - importing a family registers its rules
    adaptive_sync,
    commit,
    exposure,
    host,
    lgwr,
    logs,
    logspace,
    rac,
    silent,
    standby,
    transport,
)
from sgmon.analysis.rules.base import R_MIN, RULES, HostClaims, host_claims
from sgmon.analysis.rules.commit import commit_chain
from sgmon.verdicts import SYMPTOM_RULE, Finding

__all__ = ["RULES", "R_MIN", "evaluate", "host_claims", "persistence"]


def persistence() -> dict[str, Persist]:
    """How long each rule's findings must hold before they open: the rules' own, and at once
    for a silent host and the generic chain, which have their own timing (a silence's timeout,
    the commit symptom's ``moved``)."""
    return {r.name: r.persist for r in RULES} | {SILENT: AT_ONCE, SYMPTOM_RULE: AT_ONCE}


def evaluate(ctx: Context, hosts: HostClaims) -> list[Finding]:
    """All rules (the per-host ones' claims made once a tick, ``hosts``); the generic chain
    only when no cause explains a degraded commit path, now or within the hold."""
    out = [f for r in RULES for f in r.findings(ctx, hosts)]
    if not (ctx.explained or ctx.held):
        out += list(commit_chain(ctx, [f for f in out if f.drawn]))
    return out
