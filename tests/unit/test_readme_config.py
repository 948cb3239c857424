"""The README's example config, as a DBA pastes it on a jump host: both hosts over ssh, their
redo devices named as they are on the database hosts, none of which exist here."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from paths import REPO

from sgmon.config import parse_config
from sgmon.hosts.build import sources_from_config
from sgmon.hosts.remote import PumpSource


def readme_config() -> dict:
    """The first TOML block of README.md, parsed."""
    block = re.search(r"```toml\n(.*?)```", (REPO / "README.md").read_text(), re.S)
    assert block, "README.md has no TOML example"
    return tomllib.loads(block.group(1))


def test_the_readme_config_builds_from_a_host_without_its_devices(monkeypatch) -> None:
    monkeypatch.setenv("SGMON_PW", "not-used")
    data = readme_config()
    devices = {d for h in data["host"] for d in h.get("devices", ())}
    stats = Path("/proc/diskstats").read_text().splitlines()
    here = {line.split()[2] for line in stats if len(line.split()) > 2}
    assert devices and not devices & here, "the test needs devices this machine lacks"
    config = parse_config(data)
    sources = sources_from_config(config)  # checked the hosts' devices here: ConfigError
    try:
        assert [type(s) for s in sources] == [PumpSource, PumpSource]
        assert [h.name for s in sources for h in s.hosts] == ["prim1", "stby1"]
    finally:
        for s in sources:
            s.close()
