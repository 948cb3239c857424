"""Headless recipes that show the fault: --onset everywhere, check before the onset says so,
replay --from and a one-screen --summary, and --interval checked alike by every command.

Each runs the real command line as a subprocess, the way a user or a cron job does.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from sgmon.hosts.replay import ReplaySource


def sgmon(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sgmon", *args], capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.parametrize("command", ["record", "check", "serve", "agent", "demo"])
def test_every_simulating_command_takes_onset_with_its_default_stated(command: str) -> None:
    out = sgmon(command, "--help")
    assert out.returncode == 0
    text = " ".join(out.stdout.split())
    assert "--onset" in text and "(default 30s)" in text


def test_check_that_ends_before_the_onset_says_so() -> None:
    early = sgmon("check", "--simulate", "rto-stall", "--seconds", "20")
    assert "before rto-stall's fault starts at --onset 30 s" in early.stderr
    assert early.returncode == 0
    late = sgmon("check", "--simulate", "rto-stall", "--seconds", "40", "--onset", "5s")
    assert "before" not in late.stderr and late.returncode == 2  # the 200 ms stalls: critical
    assert "rto_min" in late.stdout


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """30 s of rto-stall with the fault from 5 s on, recorded at 20x."""
    d = tmp_path_factory.mktemp("rec") / "a"
    out = sgmon(
        "record", "--simulate", "rto-stall", "--onset", "5s", "--speed", "20",
        "--duration", "30s", "--dir", str(d),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    return d


def test_summary_is_one_row_per_event_within_a_screen(recording: Path) -> None:
    out = sgmon("replay", str(recording), "--summary")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) <= 24
    rows = [ln for ln in lines if ln.startswith("  ") and not ln.startswith("  ...")]
    assert len(rows) == len(set(rows))  # an outlier episode is one row, not one per tick
    assert any("rto_min" in ln and "CRIT" in ln for ln in rows)
    assert any("retransmits" in ln for ln in rows)
    # the idle sockets' rto 204 is not an episode: only the resending one
    assert not any("standby tcp" in ln and "rto_ms" in ln for ln in rows)


def test_replay_from_plays_earlier_ticks_at_once(recording: Path) -> None:
    src = ReplaySource(recording, speed=1.0)
    frames = sorted(f.time for h in src.hosts for f in src.frames(h.name))
    src.start = frames[-1] - 2.0  # the last three ticks are paced, everything before is not

    class Counting(threading.Event):
        waits = 0

        def wait(self, timeout: float | None = None) -> bool:
            Counting.waits += 1
            return False

    emitted: list[float] = []
    src.run(lambda f: emitted.append(f.time), Counting())
    assert sorted(emitted) == frames
    paced = {t for t in frames if t >= src.start}
    assert len(paced) == 3
    assert Counting.waits == len(paced)  # one pause per paced tick, none for the 27 s before


@pytest.mark.parametrize("bad", ["99:00", "tomorrow", "+5x"])
def test_replay_from_a_bad_time_is_one_line(recording: Path, bad: str) -> None:
    out = sgmon("replay", str(recording), "--from", bad, "--summary")
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("sgmon: --from")


def test_replay_from_past_the_end_says_where_it_ends(recording: Path) -> None:
    out = sgmon("replay", str(recording), "--from", "+2h", "--summary")
    assert out.returncode == 2 and "after the recording's last tick" in out.stderr


@pytest.mark.parametrize("command", ["record", "serve", "agent"])
def test_interval_zero_is_refused_by_every_command(command: str, tmp_path: Path) -> None:
    extra = ["--dir", str(tmp_path / "r")] if command == "record" else []
    out = sgmon(command, "--simulate", "healthy", "--interval", "0", "--duration", "2s", *extra)
    assert out.returncode == 2
    assert out.stderr.startswith("sgmon: --interval 0") and out.stderr.count("\n") == 1
