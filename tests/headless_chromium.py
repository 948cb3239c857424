"""Debian's real Chromium, headless and cut off from every network, for the report's tests and
bench.

As root each run is in a network namespace of its own (``unshare --net``: only a loopback that
is down), so a page that tried to load anything from outside could not; otherwise the proxy is
off and every host name resolves to nothing.  Each run has a fresh profile directory, is bounded
by a timeout, and its whole process group is killed when the timeout passes.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ISOLATED = os.geteuid() == 0 and shutil.which("unshare") is not None
"""Whether runs get a network namespace of their own (root), not only the flags below."""


@dataclass(frozen=True, slots=True)
class Run:
    """One Chromium run: what it printed, its stderr log, and its wall-clock time."""

    stdout: str
    stderr: str
    seconds: float

    def console(self) -> list[str]:
        """The page's console messages (``--enable-logging=stderr`` writes each as one line
        with ``:CONSOLE``, whatever its level: the report writes none).  Chromium's own pages
        (``chrome://``, seen: its compose box's "Slow network is detected" on a loaded machine)
        are not the report's."""
        return [
            ln
            for ln in self.stderr.splitlines()
            if ":CONSOLE" in ln and "source: chrome://" not in ln
        ]


def run(page: Path, *flags: str, fragment: str = "", timeout: float = 60.0) -> Run:
    """Open ``page`` (``#fragment``) in headless Chromium with ``flags`` (``--dump-dom``,
    ``--screenshot=...``)."""
    if CHROMIUM is None:
        raise FileNotFoundError("chromium is not installed (Debian package chromium)")
    with tempfile.TemporaryDirectory(prefix="sgmon-chromium-") as profile:
        cmd = [
            CHROMIUM,
            "--headless=new",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-proxy-server",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--enable-logging=stderr",
            "--v=0",
            f"--user-data-dir={profile}",
            *flags,
            page.resolve().as_uri() + (f"#{fragment}" if fragment else ""),
        ]
        if os.geteuid() == 0:
            cmd.insert(1, "--no-sandbox")  # Chromium refuses to run its sandbox as root
        if ISOLATED:
            cmd = ["unshare", "--net", *cmd]
        t0 = time.monotonic()
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(timeout=timeout)
        finally:  # on a timeout, and any helper process left behind: the group we started
            _kill_group(proc)
        return Run(out, err, time.monotonic() - t0)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()


def _high(fd: int) -> int:
    """``fd`` moved to 10 or above, so that putting the pipes on 3 and 4 overwrites neither."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


class DevTools:
    """A page driven through the DevTools protocol over ``--remote-debugging-pipe`` (file
    descriptors 3 and 4, NUL-separated JSON): real mouse events and script evaluation with no
    port opened, so it works inside the run's empty network namespace."""

    def __init__(self, width: int = 1400, height: int = 1000, timeout: float = 60.0) -> None:
        if CHROMIUM is None:
            raise FileNotFoundError("chromium is not installed (Debian package chromium)")
        self.timeout = timeout
        self._profile = tempfile.TemporaryDirectory(prefix="sgmon-chromium-")
        to_child, self._write = os.pipe()
        self._read, from_child = os.pipe()
        to_child, from_child = (_high(fd) for fd in (to_child, from_child))
        cmd = [CHROMIUM, "--headless=new", "--disable-gpu", "--no-first-run",
               "--no-default-browser-check", "--disable-extensions", "--no-proxy-server",
               "--host-resolver-rules=MAP * ~NOTFOUND", "--remote-debugging-pipe",
               f"--window-size={width},{height}", f"--user-data-dir={self._profile.name}",
               "about:blank"]  # fmt: skip
        if os.geteuid() == 0:
            cmd.insert(1, "--no-sandbox")
        # Chromium reads commands on its fd 3 and answers on fd 4: bash (dash takes no fd above
        # 9) puts the pipes there
        cmd = ["bash", "-c", f'exec "$0" "$@" 3<&{to_child} 4>&{from_child}', *cmd]
        if ISOLATED:
            cmd = ["unshare", "--net", *cmd]
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            pass_fds=(to_child, from_child),
        )
        os.close(to_child)
        os.close(from_child)
        self._buf = b""
        self._id = 0
        self.session = ""
        try:
            target = self.call("Target.createTarget", url="about:blank")["targetId"]
            self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
                "sessionId"
            ]
        except BaseException:
            self.close()
            raise

    def call(self, method: str, **params: object) -> dict:
        """Send one command (to the attached page once there is one) and return its result."""
        self._id += 1
        msg: dict[str, object] = {"id": self._id, "method": method, "params": params}
        if self.session:
            msg["sessionId"] = self.session
        os.write(self._write, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            while b"\0" not in self._buf:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self._read], [], [], left)[0]:
                    raise TimeoutError(f"no answer to {method} in {self.timeout:g} s")
                chunk = os.read(self._read, 1 << 16)
                if not chunk:
                    raise ConnectionError("chromium closed its DevTools pipe")
                self._buf += chunk
            raw, self._buf = self._buf.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self._id:  # events and other replies are not waited for
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def evaluate(self, expression: str) -> object:
        """The value of a script expression in the page (awaited when it is a promise)."""
        r = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression!r}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def open(self, page: Path, until: str) -> None:
        """Navigate to ``page`` and wait until the expression ``until`` is true."""
        url = page.resolve().as_uri()
        self.call("Page.navigate", url=url)
        ready = f"(() => {{ try {{ return location.href.split('#')[0] === {json.dumps(url)}"
        ready += f" && !!({until}); }}"
        ready += " catch (e) { return false; } })()"
        deadline = time.monotonic() + self.timeout
        while not self.evaluate(ready):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{until} not true in {self.timeout:g} s")
            time.sleep(0.05)

    def mouse(self, kind: str, x: float, y: float, buttons: int = 0, clicks: int = 1) -> None:
        """One real mouse event (mouseMoved, mousePressed, mouseReleased) at viewport pixels;
        ``clicks`` 2 on a press and release is a double click."""
        press = kind in ("mousePressed", "mouseReleased")
        self.call(
            "Input.dispatchMouseEvent", type=kind, x=x, y=y, buttons=buttons,
            button="left" if press or buttons else "none", clickCount=clicks if press else 0,
        )  # fmt: skip

    def close(self) -> None:
        """End the browser (its whole process group) and remove the profile."""
        for fd in (self._write, self._read):
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self._profile.cleanup()
