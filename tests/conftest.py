"""What every test shares: the status state files go to the session's own directory, and each
test starts with the session's umask.

Every running sgmon (recorder, dashboard, demo, agent, exporter) publishes its state for
`sgmon status`; without this, the demos and recorders the tests start would write into the
user's runtime directory and a developer's tmux status line would show the tests' hosts.  Tests
that read the state set SGMON_RUNTIME_DIR to a directory of their own, as before.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

# fixtures that the unit and the system tests of one area share (tests/kits/)
pytest_plugins = [
    "kits.core_engine",
    "kits.inet_diag",
    "kits.report",
    "kits.topology",
    "kits.trace_files",
]


@pytest.fixture(autouse=True, scope="session")
def _private_runtime_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    before = os.environ.get("SGMON_RUNTIME_DIR")
    os.environ["SGMON_RUNTIME_DIR"] = str(tmp_path_factory.mktemp("sgmon-run"))
    yield
    if before is None:
        del os.environ["SGMON_RUNTIME_DIR"]
    else:
        os.environ["SGMON_RUNTIME_DIR"] = before


@pytest.fixture(autouse=True)
def _umask_kept() -> Iterator[None]:
    """A test that runs ``sgmon.cli.main`` in-process leaves its umask (077: sgmon's files are
    the user's alone) on the test process: the files a later test makes for another user (a
    database host's /proc/diskstats, read by its ssh login) came out unreadable."""
    mask = os.umask(0o022)
    os.umask(mask)
    yield
    os.umask(mask)
