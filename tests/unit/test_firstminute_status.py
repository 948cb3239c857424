"""`sgmon status` shows one configuration of the calling user: with several sgmon running it
says so and `--name` picks one, instead of merging their hosts into one line."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from sgmon.readers.procfile import start_time
from sgmon.status import fast_args, render, state_text


def _hosts(tag: str, lfs: str) -> dict[str, dict]:
    now = time.time()
    return {
        f"{tag}-host": {
            "role": "primary", "tag": "P", "time": now, "written": now,
            "interval": 1.0, "failing": [], "items": [("lfs", lfs, "ok")],
        }
    }  # fmt: skip


def _publish(directory: Path, file: str, pid: int, name: str, lfs: str) -> Path:
    path = directory / f"state-{file}.txt"
    path.write_text(state_text(pid, start_time(pid) or "?", _hosts(name, lfs), name))
    return path


def test_several_configurations_are_not_merged(tmp_path: Path) -> None:
    older, newer = 1, os.getpid()  # init started first (a parent may start in the same tick)
    _publish(tmp_path, "a", older, "PROD", "18.8/64ms")
    _publish(tmp_path, "b", newer, "TEST", "1.1/2ms")
    line = render("plain", directory=tmp_path)
    assert line == "P lfs 1.1/2ms | TEST; also running: PROD (--name)"
    assert render("plain", directory=tmp_path, name="PROD") == (
        "P lfs 18.8/64ms | PROD; also running: TEST (--name)"
    )
    assert render("plain", directory=tmp_path, name="QA") == "sgmon: no sgmon running for QA"


def test_one_configuration_says_nothing_more(tmp_path: Path) -> None:
    _publish(tmp_path, "a", os.getpid(), "PROD", "1.1/2ms")
    assert render("plain", directory=tmp_path) == "P lfs 1.1/2ms"


@pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")
def test_another_users_state_is_not_read(tmp_path: Path) -> None:
    mine = _publish(tmp_path, "a", os.getpid(), "PROD", "1.1/2ms")
    theirs = _publish(tmp_path, "b", os.getpid(), "PROD", "18.8/64ms")
    os.chown(theirs, 65534, 65534)
    os.utime(mine, (0, 0))
    assert render("plain", directory=tmp_path) == "P lfs 1.1/2ms"


def test_name_takes_the_short_way() -> None:
    assert fast_args(["--name", "PROD", "--format=tmux"]) == ("tmux", None, "PROD")
