"""Finding titles in a DBA's words, in every simulated scenario: no statistics (``r=1.00 n=33
lag -1``, where "lag" reads as transport lag), no internal document numbers or field names, no
"1 segments".  The numbers behind a correlation are in the evidence, in words."""

from __future__ import annotations

import re

import pytest
from paths import REPO

from sgmon.analysis import Analyzer
from sgmon.sim import SCENARIOS, SimPair

START = 1_800_000_000.0
RUNBOOKS = (REPO / "docs" / "findings.md").read_text()
"""The findings' runbooks: an anchor per rule, which the dashboard, the report and alert rules
link to (``docs/findings.md#rto_stall``)."""
INTERNALS = re.compile(
    r"\b(?:r|n|overlap)=|\blag [+-]\d|seed \d|\bTable \d|declared limit|see seed"
    r"|\b[a-z]+\.[a-z_]+ (?:declared|default)|\baqu_sz\b|\b[a-z]+_lag\b|\b1 segments\b"
)


DANGLING = re.compile(
    r"(?:\s|[,;:(\[-]|\b(?:and|or|the|a|an|of|to|in|on|at|by|with|but|still|hold|they|is|are))$"
)
"""How a text cut short ends: a blank, a comma, an open bracket, a word that needs another
("...Fast Sync already keeps these writes out of commits, they still hold ")."""


def whole(text: str) -> bool:
    """Whether an advice, a title or an evidence line renders whole: it does not end cut short,
    and its brackets and quotes close."""
    return (
        bool(text)
        and not DANGLING.search(text)
        and text.count("(") == text.count(")")
        and text.count("[") == text.count("]")
        and text.count('"') % 2 == 0
    )


def test_the_check_for_whole_text_catches_a_cut_advice() -> None:
    assert not whole("Fast Sync already keeps these writes out of commits, they still hold ")
    assert not whole("fix: give the standby (its SRLs")
    assert whole('the route\'s rto_min (as in "A story about Data Guard and network latency")')


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_titles_carry_no_internals(scenario: str) -> None:
    pair = SimPair(scenario, seed=3, start=START, onset=20.0)
    analyzer = Analyzer()
    titles: set[str] = set()
    evidence: set[str] = set()
    rules: set[str] = set()
    try:
        while pair.t < 75.0:
            for frame in pair.step():
                analyzer.feed(frame)
            for f in analyzer.state().findings:
                titles.add(f.title)
                evidence.update(f.evidence)
                rules.add(f.rule)
    finally:
        pair.close()
    bad = sorted(t for t in titles if INTERNALS.search(t))
    assert not bad, "\n".join(bad)
    cut = sorted(t for t in titles | evidence if not whole(t))
    assert not cut, "\n".join(cut)
    assert not any(re.search(r"\bseed \d|\b1 segments\b", e) for e in evidence), evidence
    missing = sorted(r for r in rules if f'<a id="{r}"></a>' not in RUNBOOKS)
    assert not missing, f"rules without a runbook in docs/findings.md: {missing}"


def test_every_rule_has_a_runbook() -> None:
    from sgmon.analysis.rules.base import RULES

    missing = sorted(r.name for r in RULES if f'<a id="{r.name}"></a>' not in RUNBOOKS)
    assert not missing, f"rules without a runbook in docs/findings.md: {missing}"
