"""Text that reaches a user outside docs/ names a source by its public title: docs/references.md
defines the short names ("the retransmission case") for the pages that link to it, but an alert,
`demo --list` or `--help` has no such page beside it."""

from __future__ import annotations

import contextlib
import re

import pytest
import yaml
from paths import REPO

from sgmon.cli import COMMANDS, main
from sgmon.sim import SCENARIOS

LABELS = re.compile(
    r"\b(?:RTO|retransmission|cloud migration|capped standby|migration) case\b"
    r"|\bissue \d+\b|\bseed \d{3}\b|\bseed incidents?\b|\bMAA SYNC paper\b",
    re.IGNORECASE,
)


def _alert_texts() -> dict[str, str]:
    """Every annotation of every shipped alert, by alert and annotation name."""
    rules = yaml.safe_load((REPO / "deploy" / "prometheus_alerts.yaml").read_text())
    return {
        f"{rule['alert']}.{key}": text
        for group in rules["groups"]
        for rule in group["rules"]
        for key, text in rule.get("annotations", {}).items()
    }


def test_the_check_catches_a_label() -> None:
    assert LABELS.search("the 200 ms RTO case")
    assert not LABELS.search('as in "A story about Data Guard and network latency"')


@pytest.mark.parametrize("where", sorted(_alert_texts()))
def test_alert_annotations(where: str) -> None:
    text = _alert_texts()[where]
    assert not LABELS.search(text), text


def test_scenario_descriptions() -> None:
    bad = [f"{name}: {text}" for name, text in SCENARIOS.items() if LABELS.search(text)]
    assert not bad, bad


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_help(command: str, capsys) -> None:
    with contextlib.suppress(SystemExit):
        main([command, "--help"] if command else ["--help"])
    out = capsys.readouterr().out
    assert "usage" in out
    assert not LABELS.search(out), LABELS.findall(out)
