"""The engine's watchdog timer: timerfd(2) on the monotonic clock, through libc."""

from __future__ import annotations

import ctypes
import os


class _Timespec(ctypes.Structure):
    _fields_ = (("sec", ctypes.c_long), ("nsec", ctypes.c_long))


class _Itimerspec(ctypes.Structure):
    _fields_ = (("interval", _Timespec), ("value", _Timespec))


_CLOCK_MONOTONIC, _TFD_TIMER_ABSTIME = 1, 1


class Alarm:
    """A one-shot timer file on the monotonic clock (timerfd(2), through libc: os.timerfd_*
    came in Python 3.13).  The ticker arms it before a batch and disarms it after, one system
    call each and no thread wake; the watchdog blocks reading it, so it wakes only for a batch
    that overran."""

    def __init__(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.timerfd_create(_CLOCK_MONOTONIC, os.O_CLOEXEC)
        if self.fd < 0:
            err = ctypes.get_errno()
            raise OSError(err, f"timerfd_create: {os.strerror(err)}")
        self._settime = libc.timerfd_settime
        self._spec = _Itimerspec()
        self._ref = ctypes.byref(self._spec)

    def arm(self, at: float | None) -> None:
        """Fire at time.monotonic() ``at`` (at once if it is past); None disarms."""
        value = self._spec.value
        if at is None:
            value.sec = value.nsec = 0  # an all-zero value disarms
        else:
            value.sec = int(at)
            value.nsec = int((at - value.sec) * 1e9)
        if self._settime(self.fd, _TFD_TIMER_ABSTIME, self._ref, None) < 0:
            err = ctypes.get_errno()  # a closed timer: without it no hang would be caught
            raise OSError(err, f"timerfd_settime: {os.strerror(err)}")

    def wait(self) -> None:
        """Block until the timer fires."""
        os.read(self.fd, 8)

    def close(self) -> None:
        """Release the timer file."""
        os.close(self.fd)
