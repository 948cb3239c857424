"""Opening a file that a user or a process names, without trusting what it is.

A path may name a FIFO (``open`` blocks until a writer comes, which may be never), a directory,
a device or a symlink loop.  ``open_regular`` opens without blocking, then refuses anything but a
regular file with an ``OSError`` whose ``strerror`` says what the path is, so the caller's one
note reads "... is a FIFO, not a file" instead of hanging.
"""

from __future__ import annotations

import errno
import os
import stat

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def what_is(mode: int) -> str | None:
    """What a non-regular file is (``a FIFO``), None for a regular file."""
    return next(
        (name for test, name in _KINDS if test(mode)), None if stat.S_ISREG(mode) else "not a file"
    )


def open_regular(path: str | os.PathLike[str], follow: bool = True) -> int:
    """A read-only descriptor on a regular file; OSError for anything else, never a hang.
    ``follow=False``: a symlink is refused too (a file sgmon wrote is never one)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if e.errno != errno.ELOOP or follow:
            raise
        raise OSError(errno.ELOOP, "is a symlink, not a regular file", os.fspath(path)) from None
    kind = what_is(os.fstat(fd).st_mode)
    if kind is not None:
        os.close(fd)
        raise OSError(errno.EINVAL, f"is {kind}, not a regular file", os.fspath(path))
    os.set_blocking(fd, True)
    return fd


def read_regular(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """The whole content of a regular file (``open_regular``'s refusals included); a file
    longer than ``limit`` bytes is refused (EFBIG) rather than read."""
    fd = open_regular(path)
    with os.fdopen(fd, "rb") as f:
        data = f.read() if limit is None else f.read(limit + 1)
    if limit is not None and len(data) > limit:
        raise OSError(errno.EFBIG, f"larger than {limit} bytes", os.fspath(path))
    return data
