"""How many hosts one configuration takes: up to the limit every one is kept, past it one line
(never a recording started that falls behind, nor 1,000 hosts' threads that cannot start)."""

from __future__ import annotations

from sgmon.config import validate
from sgmon.config.reader import MAX_HOSTS


def _hosts(n: int) -> dict:
    return {"host": [{"name": f"h{i}", "root": "/"} for i in range(n)]}


def test_the_limit_is_kept_whole() -> None:
    config, problems = validate(_hosts(MAX_HOSTS))
    assert problems == [] and config is not None and len(config.hosts) == MAX_HOSTS


def test_past_the_limit_is_one_line() -> None:
    config, problems = validate(_hosts(MAX_HOSTS + 1))
    assert config is None and len(problems) == 1
    (line,) = problems
    assert f"{MAX_HOSTS + 1} hosts: one configuration takes at most {MAX_HOSTS}" in line
