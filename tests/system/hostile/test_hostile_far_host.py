"""The far side of an ssh host is untrusted input.  ``record`` of two hosts, this one and a far
one reached through a stand-in for ssh (far_side.py: the real pump, gone wrong as each case
says): a clock or a pong from another century, a login banner, random bytes, endless lines, a
flood of valid ticks, a child that ignores SIGTERM.  Each case: no traceback, the clear line
(once, repeats counted), no raw escape sequence on stderr, the local host keeps every tick, the
process stays within 50 MB of its size with a sane far side, and no process is left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from sgmon.archive import parse_time
from sgmon.config import HostConfig
from sgmon.hosts.remote import RemoteSource

pytestmark = pytest.mark.timeout(240)

FAR = Path(__file__).with_name("far_side.py")
MB = 1024  # kB
SECONDS = 6


@dataclass
class Run:
    rc: int
    err: str
    peak_kb: int
    here: list[float]
    far: list[float]

    def lines(self, text: str) -> list[str]:
        return [line for line in self.err.splitlines() if text in line]


def _times(arch: Path, host: str) -> list[float]:
    """The distinct tick times of a host's cpu table."""
    cells = {
        line.split(",", 1)[0]
        for p in arch.glob(f"{host}/cpu_*.csv")
        for line in p.read_text().splitlines()[1:]
    }
    return sorted(map(parse_time, cells))


def _record(tmp: Path, mode: str, seconds: int = SECONDS, agent: bool = False) -> Run:
    """Record this host and the far one for ``seconds``; the peak resident size (VmHWM, the
    kernel's high-water mark, read every 0.1 s until the process ends)."""
    ssh = [sys.executable, str(FAR), mode, f"sgmon-stubborn-{tmp.name}"]
    far = f'[[host]]\nname = "far"\nrole = "standby"\nssh = "far"\nssh_command = {ssh!r}\n'
    far += 'sgmon_path = "sgmon"\n' if agent else ""
    cfg = tmp / "sgmon.toml"
    here = '[[host]]\nname = "here"\nrole = "primary"\n'
    cfg.write_text(f'interval = "1s"\n{here}{far}'.replace("'", '"'))
    with (tmp / "err").open("w+") as err:
        p = subprocess.Popen(
            [sys.executable, "-m", "sgmon", "record", "--config", str(cfg), "--dir",
             str(tmp / "arch"), "--duration", f"{seconds}s"],
            stdout=subprocess.DEVNULL, stderr=err, cwd=tmp,
        )  # fmt: skip
        peak, end = 0, time.monotonic() + seconds + 60
        try:
            while p.poll() is None and time.monotonic() < end:
                peak = max(peak, _rss(p.pid))
                time.sleep(0.1)
            rc = p.wait(timeout=max(1.0, end - time.monotonic()))
        finally:
            p.kill()
            p.wait()
        err.seek(0)
        text = err.read()
    return Run(rc, text, peak, _times(tmp / "arch", "here"), _times(tmp / "arch", "far"))


def _rss(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    rss = [line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")]
    return int(rss[0]) if rss else 0


def _left(marker: str) -> list[int]:
    """The processes whose command line names ``marker``."""
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if marker.encode() in (d / "cmdline").read_bytes():
                    found.append(int(d.name))
            except OSError:
                continue
    return found


def _sound(run: Run) -> None:
    """What every case holds: no traceback, nothing raw from the far side on the terminal, the
    recording went on (exit 0, or 3: the far host never gave a tick), and this host kept
    every tick of the run."""
    assert "Traceback" not in run.err and "disabled" not in run.err, run.err
    assert not set(run.err) & {"\x1b", "\x07", "\x9b"}, run.err
    assert run.rc in (0, 3), run.err
    assert len(run.here) >= SECONDS - 1, (run.here, run.err)
    gaps = [b - a for a, b in zip(run.here, run.here[1:], strict=False)]
    assert max(gaps) < 1.5, gaps  # no tick of this host lost


@pytest.fixture(scope="module")
def normal(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The same recording with a far side that behaves: the size the others are held to."""
    run = _record(tmp_path_factory.mktemp("normal"), "ok")
    _sound(run)
    assert run.rc == 0 and len(run.far) >= SECONDS - 2, run.err
    return run


@pytest.mark.parametrize(
    "clock", ["nan", "inf", "-inf", "1e300", "-1e300", "253402300799", "-1", "0"]
)
def test_a_far_clock_gone_wrong_costs_that_host_alone(tmp_path: Path, clock: str) -> None:
    run = _record(tmp_path, f"clock={clock}")
    _sound(run)
    assert run.far == [] and run.rc == 3, run.err  # no tick of it placed, and said so
    said = run.lines("far: a tick stamped")
    assert len(said) == 1 and "over a day from this machine's clock" in said[0], run.err
    assert len(run.lines("far: ")) <= 3, run.err  # the note, its count, nothing per tick
    _ends_saying_the_clock(run)


def _ends_saying_the_clock(run: Run) -> None:
    """A host whose every tick was refused ends with the reason, not as never reached."""
    assert not run.lines("never reached"), run.err
    (end,) = run.lines("sgmon: nothing of far was recorded: ")
    assert "over a day from this machine's clock" in end and "NTP" in end, end


@pytest.mark.parametrize("pong", ["1e300", "nan", "-inf"])
def test_a_far_pong_gone_wrong_is_refused(tmp_path: Path, pong: str) -> None:
    run = _record(tmp_path, f"pong={pong}")
    _sound(run)
    assert run.rc == 0 and len(run.far) >= SECONDS - 2, run.err
    assert len(run.lines("far: a clock reading stamped")) == 1, run.err


@pytest.mark.parametrize("clock", ["now", "nan", "1e300", "-1"])
def test_an_agent_frame_stamped_wrong_is_refused(tmp_path: Path, clock: str) -> None:
    """An installed agent's frames: stamped by its own clock they are recorded (the stand-in
    works); stamped outside a day of ours, refused with one line."""
    run = _record(tmp_path, f"agent-clock={clock}", agent=True)
    _sound(run)
    if clock == "now":
        assert run.rc == 0 and len(run.far) >= SECONDS - 2, run.err
        assert not run.lines("far: "), run.err
        return
    assert run.far == [] and run.rc == 3, run.err
    assert len(run.lines("far: a frame stamped")) == 1, run.err
    _ends_saying_the_clock(run)


@pytest.mark.parametrize("usr", ["nan", "inf", "-inf"])
def test_an_agent_value_that_is_not_a_number_is_dropped_with_one_note(
    tmp_path: Path, usr: str
) -> None:
    """An agent frame whose row holds NaN or an infinity: the frame is kept, that value is
    unknown in the archive (never the text nan or inf), its neighbour is there, and one note
    says so (its repeats counted, not said)."""
    run = _record(tmp_path, f"agent-usr={usr}", agent=True)
    _sound(run)
    assert run.rc == 0 and len(run.far) >= SECONDS - 2, run.err
    said = run.lines("far: a value from the far side that is not a number")
    assert len(said) <= 2 and "(NaN, inf, a table) dropped" in said[0], run.err
    rows = [
        line.split(",")
        for p in (tmp_path / "arch" / "far").glob("cpu_*.csv")
        for line in p.read_text().splitlines()[1:]
    ]
    assert rows and all(r[3] == "" and r[4] == "50" for r in rows), rows[:3]
    assert "nan" not in str(rows).lower() and "inf" not in str(rows).lower()


def test_a_flood_of_far_errors_is_a_few_lines(tmp_path: Path) -> None:
    """20,000 distinct problems the pump reports: the first few, then their number."""
    run = _record(tmp_path, "error-flood")
    _sound(run)
    assert run.rc == 0 and len(run.far) >= SECONDS - 2, run.err
    said = run.lines("far: ")
    assert len(said) <= 9 and "more distinct line(s) from the far side not shown" in said[-1], said
    assert "sock_diag: \\x1b[2Jerror 0" in said[0], said


@pytest.mark.parametrize("lines", [1, 12])
def test_a_login_banner_is_skipped_once(tmp_path: Path, lines: int) -> None:
    run = _record(tmp_path, f"banner={lines}")
    _sound(run)
    assert run.rc == 0 and len(run.far) >= SECONDS - 2, run.err
    (said,) = run.lines("far: skipped")
    assert f"skipped {lines} line(s)" in said and "Welcome to prod1" in said, run.err
    assert "\\x1b[5m" in said  # the banner's escape, shown escaped


@pytest.mark.parametrize(
    "mode",
    ["random", "hello-random", "endless-stderr", "endless-stdout", "flood", "stderr-flood"],
)
def test_a_broken_far_side_costs_no_memory(tmp_path: Path, normal: Run, mode: str) -> None:
    run = _record(tmp_path, mode)
    _sound(run)
    grew = (run.peak_kb - normal.peak_kb) / MB
    print(f"{mode}: peak {run.peak_kb / MB:.1f} MB, {grew:+.1f} MB over a sane far side")
    assert run.peak_kb < normal.peak_kb + 50 * MB, (run.peak_kb, normal.peak_kb)
    assert len(run.lines("far: ")) <= 6, run.err  # a few lines, whatever the far side sends


def test_a_flood_of_ticks_is_read_once_an_interval(tmp_path: Path, normal: Run) -> None:
    run = _record(tmp_path, "flood")
    _sound(run)
    assert len(normal.far) - 2 <= len(run.far) <= len(normal.far) + 2, (run.far, normal.far)
    (count,) = run.lines("ticks faster than the interval not read (repeated ")
    assert int(count.split("(repeated ")[1].split()[0].replace(",", "")) > 1000, count


def test_random_bytes_are_one_line_each_attempt(tmp_path: Path) -> None:
    run = _record(tmp_path, "random")
    said = run.lines("far: the far side sent 64 KiB on stdout without sgmon's program starting")
    assert 1 <= len(said) <= 3, run.err  # each attempt backs off: 1 s, 2 s, 4 s


def test_an_endless_agent_line_costs_no_memory(tmp_path: Path, normal: Run) -> None:
    run = _record(tmp_path, "agent-endless", agent=True)
    _sound(run)
    print(f"agent-endless: peak {run.peak_kb / MB:.1f} MB, normal {normal.peak_kb / MB:.1f} MB")
    assert run.peak_kb < normal.peak_kb + 50 * MB, (run.peak_kb, normal.peak_kb)
    assert len(run.lines("line over 4 MiB from the agent skipped")) == 1, run.err


@pytest.mark.parametrize("mode", ["stubborn", "stubborn-setsid", "orphan", "leaves"])
def test_a_child_that_ignores_sigterm_is_not_left(tmp_path: Path, mode: str) -> None:
    """A child of the ssh command that ignores SIGTERM, in its process group or gone out of
    it (and out of its session) with setsid, or whose parent ended first (a double fork; the
    ssh command that exits at once, its setsid child talking on): it ends with sgmon."""
    marker = f"sgmon-stubborn-{tmp_path.name}"
    try:
        run = _record(tmp_path, mode)
        _sound(run)
        end = time.monotonic() + 5
        while _left(marker) and time.monotonic() < end:
            time.sleep(0.1)
        assert _left(marker) == [], "the ssh command's child outlived sgmon"
    finally:
        for pid in _left(marker):
            os.kill(pid, signal.SIGKILL)


def _zombies() -> set[int]:
    """This process's children that ended and were not waited for."""
    me, found = str(os.getpid()), set()
    for d in Path("/proc").iterdir():
        try:
            state, ppid = (d / "stat").read_text().rsplit(")", 1)[1].split()[:2]
        except (OSError, ValueError):
            continue
        if state == "Z" and ppid == me:
            found.add(int(d.name))
    return found


def test_an_orphan_of_an_ssh_command_that_exited_is_ended_and_reaped(tmp_path: Path) -> None:
    """The ssh command leaves a child that ignores SIGTERM (a double fork: its parent ended
    first) and exits with status 7, in this process (the real session code): the child is
    ended and reaped (no zombie left), and the status said is the command's own."""
    marker = f"sgmon-stubborn-{tmp_path.name}"
    ssh = (sys.executable, str(FAR), "orphan-exit=7", marker)
    host = HostConfig("far", "standby", ssh="far", sgmon_path="sgmon", ssh_command=ssh)
    said: list[str] = []
    stop = threading.Event()

    def warn(line: str) -> None:
        said.append(line)
        stop.set()  # one session

    before = _zombies()
    src = RemoteSource(host, warn=warn)
    session = threading.Thread(target=src.run, args=(lambda f: None, stop), daemon=True)
    try:
        session.start()
        session.join(30)
        assert not session.is_alive(), said
        src.close()
        assert _left(marker) == [], "the orphan outlived its session"
        assert _zombies() <= before, "an orphan ended was not reaped"
        assert said == ["far: ssh exited with status 7; retrying"], said
    finally:
        stop.set()
        for pid in _left(marker):
            os.kill(pid, signal.SIGKILL)
