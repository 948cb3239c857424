"""Collector options are part of the one config schema: each built-in collector declares the
options of its [collectors.NAME] table with their rules, and `config --check` refuses an
unknown option, a bad zone and a value out of range in one line each (they used to pass and
switch the collector off, or be ignored)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sgmon import registry
from sgmon.config import COLLECTOR_OPTIONS, validate

INJECTED = {"host", "role", "pinned", "db", "root", "clock", "session", "connect"}
"""What a collector is given beside its table: the host's name, role, redo devices and login,
its root, and the test seams (clock, session, connect)."""
BUILT_IN = sorted(registry.names())


def _problems(table: dict) -> list[str]:
    config, problems = validate({"collectors": table})
    assert (config is None) == bool(problems)
    return problems


@pytest.mark.parametrize("name", BUILT_IN)
def test_every_option_a_collector_reads_is_declared(name: str) -> None:
    cls = registry.load(name)
    assert cls.option_rules is not None, f"{name} declares no options"
    import inspect

    source = inspect.getsource(inspect.getmodule(cls))  # type: ignore[arg-type]
    read = set(re.findall(r'options\.get\("(\w+)"', source))
    read |= set(re.findall(r'options\["(\w+)"\]', source))
    undeclared = read - set(cls.option_rules) - set(COLLECTOR_OPTIONS) - INJECTED
    assert not undeclared, (name, undeclared)


@pytest.mark.parametrize("name", BUILT_IN)
def test_an_unknown_option_is_one_line_naming_what_it_takes(name: str) -> None:
    (line,) = _problems({name: {"exclud": ["sda"]}})
    assert line.startswith(f"config: collectors.{name}.exclud: no such option; it takes: ")
    assert "enabled" in line and "\n" not in line


@pytest.mark.parametrize(
    ("name", "option", "value", "said"),
    [
        ("oracle_trace", "timezone", "+99:00", "names no zone"),
        ("oracle_trace", "timezone", "europe/paris", "names no zone"),
        ("oracle_trace", "timezone", "/etc/passwd", "names no zone"),
        ("oracle_trace", "threshold_ms", -3, "out of range"),
        ("oracle_trace", "threshold_ms", float("nan"), "should be a number"),
        ("oracle_trace", "rescan_s", "0s", "out of range"),
        ("oracle_trace", "from_start", "yes", "true or false"),
        ("oracle_trace", "lgwr", 7, "should be a string"),
        ("tcp", "rediscover", -5, "out of range"),
        ("tcp", "rediscover", "nan", "bad duration"),
        ("tcp", "direction", "sideways", "one of auto, out, in, both"),
        ("tcp", "ports", [0], "not a port number"),
        ("retrans", "buffer_kb", 2.5, "whole number"),
        ("retrans", "buffer_kb", 1 << 40, "out of range"),
        ("disk", "partitions", 1, "true or false"),
        ("disk", "include", "sdb", "list of strings"),
        ("netdev", "exclude", ["lo\x1b[31m"], "control or invisible character"),
        ("procs", "sid", ["PROD"], "should be a string"),
        ("biolat", "command", 3, "should be a string"),
    ],
)
def test_a_value_out_of_its_rule_is_one_line(name: str, option: str, value, said: str) -> None:
    (line,) = _problems({name: {option: value}})
    assert line.startswith(f"config: collectors.{name}.{option}: ") and said in line, line
    assert "\x1b" not in line


def test_the_documented_options_are_taken() -> None:
    """docs/configuration.md's options table, each row's options given valid values."""
    good = {
        "disk": {"include": ["sd*"], "exclude": ["loop*"], "partitions": True},
        "netdev": {"include": ["eth*"], "exclude": ["lo"]},
        "tcp": {"direction": "out", "rediscover": 10},
        "procs": {"sid": "PROD"},
        "biolat": {"devices": ["sdc"], "command": "biolatency"},
        "retrans": {"buffer_kb": 128},
        "oracle_trace": {"lgwr": "/u01/diag/trace", "timezone": "America/Chicago",
                         "threshold_ms": 50, "rescan_s": 30, "from_start": True},
    }  # fmt: skip
    assert _problems(good) == []
    doc = (Path(__file__).parents[2] / "docs" / "configuration.md").read_text()
    for name, opts in good.items():
        for option in opts:
            assert f"[collectors.{name}]" in doc and option in doc, (name, option)
