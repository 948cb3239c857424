"""Debian's real Chromium, headless and cut off from every network, for the report's tests and
bench.

As root each run is in a network namespace of its own (``unshare --net``: only a loopback that
is down), so a page that tried to load anything from outside could not; otherwise the proxy is
off and every host name resolves to nothing.  Each run has a fresh profile directory, is bounded
by a timeout, and its whole process group is killed when the timeout passes.
"""

from __future__ import annotations

import contextlib
import os
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
        with ``:CONSOLE``, whatever its level: the report writes none)."""
        return [ln for ln in self.stderr.splitlines() if ":CONSOLE" in ln]


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
