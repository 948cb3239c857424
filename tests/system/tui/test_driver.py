"""The dashboard's terminal driver in a real tmux: its input thread sleeps while no key comes,
and still gets every key, a lone Esc among them, and stops at once when the dashboard quits."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual import events
from tmuxkit import Tmux

from sgmon.tui.driver import WakingEvent, read_input

needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

PROBE = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    import sgmon.tui.app
    from sgmon.tui.app import SgmonApp

    out = Path(sys.argv[1])

    class Probe(SgmonApp):
        '''The dashboard with no host, saying its input thread and the keys it gets.'''

        CSS_PATH = Path(sgmon.tui.app.__file__).with_name("sgmon.tcss")

        def on_mount(self) -> None:
            self.set_timer(0.3, self._say_thread)

        def _say_thread(self) -> None:
            driver = self._driver
            thread = driver._key_thread
            (out / "driver").write_text(type(driver).__name__)
            (out / "thread").write_text(str(thread.native_id))

        def on_key(self, event) -> None:
            with (out / "keys").open("a") as f:
                f.write(event.key + chr(10))

    Probe().run()
    (out / "ended").write_text("yes")
    """
)


def switches(pid: int, tid: int) -> int:
    """Times the thread gave up the CPU to wait (each wake-up of a sleeping thread is one)."""
    status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
    return int(next(ln for ln in status.splitlines() if ln.startswith("voluntary_ctxt")).split()[1])


def wait_file(path: Path, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text():
            return path.read_text()
        time.sleep(0.05)
    pytest.fail(f"{path.name} was not written within {timeout:.0f} s")


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    t = Tmux("driver")
    try:
        yield t
    finally:
        t.kill()


@needs_tmux
def test_input_thread_sleeps_between_keys_and_stops_with_the_dashboard(
    tmux: Tmux, tmp_path: Path
) -> None:
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    tmux.start(f"{sys.executable} {script} {tmp_path}", 100, 30)
    tid = int(wait_file(tmp_path / "thread"))
    assert wait_file(tmp_path / "driver") == "QuietLinuxDriver"
    pid = int(tmux.run("list-panes", "-F", "#{pane_pid}").split()[0])

    time.sleep(1.5)  # past the moment after the start's terminal replies
    before = switches(pid, tid)
    time.sleep(2.0)
    idle = switches(pid, tid) - before
    assert idle <= 2, f"the input thread woke {idle} times in 2 s without a key (Textual's: 20)"

    tmux.keys("x")
    tmux.keys("Escape")  # alone: told from an escape sequence only once ESCDELAY has passed
    deadline = time.monotonic() + 5
    keys: list[str] = []
    while time.monotonic() < deadline and keys[-2:] != ["x", "escape"]:
        time.sleep(0.05)
        keys = (tmp_path / "keys").read_text().split() if (tmp_path / "keys").exists() else []
    assert keys[-2:] == ["x", "escape"]

    started = time.monotonic()
    tmux.keys("q")
    assert wait_file(tmp_path / "ended", timeout=5) == "yes"
    assert time.monotonic() - started < 5


def test_input_cut_inside_a_character_a_lone_escape_and_the_end_of_input() -> None:
    """Over a pipe: a character whose bytes arrive in two reads is one key, not the end of input;
    a lone Esc comes out once ESCDELAY has passed, with nothing more arriving; after the writer
    closes, the reader waits for its stop without spinning, and stops when told."""
    r, w = os.pipe()
    wake = WakingEvent()
    got: list[events.Event] = []
    reader = threading.Thread(target=read_input, args=(r, wake, got.append), daemon=True)
    reader.start()
    try:

        def keys() -> list[str]:
            return [e.key for e in got if isinstance(e, events.Key)]

        for part in (b"x", b"\xc3", b"\xa9", b"\x1b"):  # x, then é in two reads, then Esc
            os.write(w, part)
            time.sleep(0.2)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and len(keys()) < 3:
            time.sleep(0.02)
        assert keys() == ["x", "\xe9", "escape"]
        os.close(w)
        time.sleep(0.3)
        stat = Path(f"/proc/self/task/{reader.native_id}/stat")
        before = stat.read_text().rsplit(")", 1)[1].split()
        time.sleep(1.0)
        after = stat.read_text().rsplit(")", 1)[1].split()
        ticks = sum(int(after[i]) - int(before[i]) for i in (11, 12))
        assert ticks <= 5, f"the reader spun after the end of input: {ticks} ticks in 1 s"
        assert reader.is_alive()
    finally:
        wake.set()
        reader.join(2)
        os.close(r)
        wake.close()
    assert not reader.is_alive()
