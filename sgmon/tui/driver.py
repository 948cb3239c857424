"""The terminal driver: Textual's Linux driver with an input thread that sleeps while no key comes.

Textual's input thread looks at the terminal ten times a second, whether or not anyone types, so
that it notices its own stop and the end of an escape sequence.  On this machine that is 0.13 %
of a core for an idle app and 0.15-0.17 % in the demo: a tenth of what the dashboard's drawing
costs, paid by every dashboard left open on a host.  Here the thread waits on the terminal and a
pipe that the driver's stop writes to, so it wakes for a key or a stop only; for a moment after
each key it looks ten times a second, as Textual does, so that a lone Esc is told from the start
of a longer sequence after ``ESCDELAY``.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import threading
import time
from codecs import getincrementaldecoder
from collections.abc import Callable

from textual import constants
from textual._xterm_parser import XTermParser
from textual.app import App
from textual.drivers.linux_driver import LinuxDriver
from textual.message import Message

LOOK_EVERY = 0.1
"""Seconds between two looks while a sequence may be pending (Textual's own pace)."""
LINGER = 1.0
"""Seconds after the last input during which the thread keeps looking, beyond ``ESCDELAY``."""


class WakingEvent(threading.Event):
    """An Event whose ``set`` also makes a pipe readable, so that a thread waiting in ``select``
    on that pipe returns at once."""

    def __init__(self) -> None:
        super().__init__()
        self.fileno, self._write = os.pipe()
        os.set_blocking(self.fileno, False)
        os.set_blocking(self._write, False)
        self._open = True

    def set(self) -> None:
        super().set()
        if self._open:  # once closed, its numbers may belong to another file
            with contextlib.suppress(BlockingIOError):  # full: it is readable anyway
                os.write(self._write, b"!")

    def drain(self) -> None:
        """Read what the last ``set`` calls wrote (before the thread looks at the flag)."""
        with contextlib.suppress(OSError):
            while os.read(self.fileno, 64):
                pass

    def close(self) -> None:
        """Release the pipe (Textual stops its driver's input once more after closing it)."""
        if self._open:
            self._open = False
            os.close(self.fileno)
            os.close(self._write)


class QuietLinuxDriver(LinuxDriver):
    """Textual's Linux driver; its input thread blocks until a key or a stop (see the module)."""

    def __init__(
        self,
        app: App,
        *,
        debug: bool = False,
        mouse: bool = True,
        size: tuple[int, int] | None = None,
    ) -> None:
        super().__init__(app, debug=debug, mouse=mouse, size=size)
        self.exit_event: WakingEvent = WakingEvent()

    def run_input_thread(self) -> None:
        """Read keys, mouse and terminal replies until the driver stops (``read_input``)."""
        read_input(self.fileno, self.exit_event, self.process_message, self._debug)

    def close(self) -> None:
        """Stop writing, then release the wake-up pipe."""
        super().close()
        self.exit_event.close()


def read_input(
    fileno: int, wake: WakingEvent, deliver: Callable[[Message], None], debug: bool = False
) -> None:
    """Parse what arrives on ``fileno`` as Textual's input thread does and ``deliver`` each
    event, until ``wake`` is set.  Blocks while nothing arrives, except for ``LINGER`` past
    ``ESCDELAY`` after each input, when it looks every ``LOOK_EVERY`` s for the parser's
    timeouts (a lone Esc)."""
    parser = XTermParser(debug)
    decode = getincrementaldecoder("utf-8")().decode
    linger = LINGER + constants.ESCAPE_DELAY
    last_input = float("-inf")
    with selectors.DefaultSelector() as selector:
        selector.register(fileno, selectors.EVENT_READ)
        selector.register(wake.fileno, selectors.EVENT_READ)
        wake.drain()
        try:
            while not wake.is_set():
                recent = time.monotonic() - last_input < linger
                for key, _ in selector.select(LOOK_EVERY if recent else None):
                    if key.fd == wake.fileno:
                        wake.drain()
                        continue
                    raw = os.read(fileno, 4096)
                    if not raw:  # end of input: wait for the stop alone
                        selector.unregister(fileno)
                        continue
                    last_input = time.monotonic()
                    data = decode(raw)
                    if data:  # not only the first bytes of a character
                        for event in parser.feed(data):
                            deliver(event)
                for event in parser.tick():
                    deliver(event)
        finally:
            with contextlib.suppress(Exception):  # the parser's end, as Textual's thread
                for _ in parser.feed(""):
                    pass
