"""What the operating system does to a command: a full stdout or stderr, a reader that closes
the pipe, the signals a logout or a user sends.  One line or silence, never a traceback, never
a lost recording."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SGMON = [sys.executable, "-m", "sgmon"]


def _run(argv: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SGMON, *argv], cwd=cwd, text=True, timeout=120, **kw)


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("os") / "arch"
    r = _run(["record", "--simulate", "healthy", "--speed", "10", "--duration", "3s", "--dir",
              str(d), "--quiet"], d.parent, capture_output=True)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return d


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--from", "{arch}"],
        ["check", "--simulate", "healthy", "--format", "json"],
        ["replay", "{arch}", "--summary"],
        ["status"],
        ["config", "--check"],
        ["demo", "--list"],
    ],
    ids=["check-from", "check-json", "replay-summary", "status", "config-check", "demo-list"],
)
def test_a_full_stdout_is_one_line(tmp_path: Path, archive: Path, argv: list[str]) -> None:
    argv = [a.replace("{arch}", str(archive)) for a in argv]
    with open("/dev/full", "w") as full:
        r = _run(argv, tmp_path, stdout=full, stderr=subprocess.PIPE)
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert lines[-1] == "sgmon: cannot write the output: No space left on device", r.stderr
    assert r.returncode == 1


def test_a_reader_that_closes_the_pipe_is_no_error(tmp_path: Path) -> None:
    p = subprocess.Popen(
        [*SGMON, "check", "--simulate", "healthy", "--format", "json"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert p.stdout is not None and p.stderr is not None
    p.stdout.read(5)
    p.stdout.close()  # what `| head -c 5` does
    err = p.stderr.read()
    assert p.wait(timeout=120) == 0
    assert "Traceback" not in err and "Exception ignored" not in err, err


def test_record_with_a_full_stderr_records(tmp_path: Path) -> None:
    with open("/dev/full", "w") as full:
        r = _run(["record", "--simulate", "healthy", "--speed", "10", "--duration", "3s",
                  "--dir", "arch"], tmp_path, stderr=full)  # fmt: skip
    assert r.returncode == 0
    assert list((tmp_path / "arch" / "primary").glob("cpu_*.csv"))


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGPIPE])
def test_record_under_a_signal(tmp_path: Path, sig: signal.Signals) -> None:
    """SIGHUP (a logout) and SIGPIPE leave the recording going; SIGQUIT and SIGUSR1 end it as
    SIGTERM does, every tick on disk."""
    p = subprocess.Popen(
        [*SGMON, "record", "--simulate", "healthy", "--dir", "arch", "--duration", "6s"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        time.sleep(2.5)
        p.send_signal(sig)
        time.sleep(1.0)
        goes_on = p.poll() is None
        assert p.wait(timeout=30) == 0
    finally:
        p.kill()
    assert p.stderr is not None
    err = p.stderr.read()
    assert "Traceback" not in err, err
    assert goes_on == (sig in (signal.SIGHUP, signal.SIGPIPE)), err
    assert err.strip().splitlines()[-1].startswith("sgmon: stopped; "), err
    assert list((tmp_path / "arch" / "primary").glob("cpu_*.csv"))
