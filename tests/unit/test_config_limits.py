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


def test_more_pumped_hosts_than_a_tick_keeps_is_one_line() -> None:
    """Hosts without sgmon installed have their collectors run here: past what one core keeps
    every tick of, one line that says what to do; hosts with the agent, or a longer tick, none."""
    from sgmon.config import Config, HostConfig
    from sgmon.headless import PUMPED_PER_SECOND, pace_warning

    def config(n: int, sgmon_path: str = "") -> Config:
        hosts = (HostConfig(name=f"h{i}", ssh=f"h{i}", sgmon_path=sgmon_path) for i in range(n))
        return Config(hosts=tuple(hosts))

    assert pace_warning(config(PUMPED_PER_SECOND), 1.0) is None
    line = pace_warning(config(PUMPED_PER_SECOND + 1), 1.0)
    assert line is not None and "\n" not in line
    assert f"{PUMPED_PER_SECOND + 1} hosts without sgmon installed" in line
    assert "--interval 2s" in line
    assert pace_warning(config(PUMPED_PER_SECOND + 1), 2.0) is None
    assert pace_warning(config(300, sgmon_path="sgmon"), 1.0) is None
