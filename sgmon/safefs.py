"""Files in a directory that someone else may have planted names in (the archive, the runtime
directory of `sgmon status`).

Every name is opened relative to a directory descriptor (``Dir``), never through a symlink
(``O_NOFOLLOW``), never blocking (``O_NONBLOCK``: a FIFO nobody writes to would stall the writer
for ever), and only when it is what sgmon writes there: a regular file with no other name (a hard
link to a file elsewhere would receive the rows, or lose a name to retention), or a directory.
Anything else is ``Refused`` with what was found, for the caller's one ``sgmon:`` line.  New files
are created exclusively (``O_EXCL``), temporary ones under an unpredictable name, so a name planted
in advance is never written through.

A plain string module (no pathlib): `sgmon status` reads its state files through it and counts
its milliseconds.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat

from sgmon.readers.regular import what_is

_FILE = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_TRIES = 100
"""Random temporary names tried before giving up (each is 96 bits: a clash is someone's doing)."""


class Refused(OSError):
    """A name holding something sgmon does not write there; ``strerror`` says what was found
    (``a symlink``, ``a FIFO``), ``filename`` where."""

    def __init__(self, found: str, path: str) -> None:
        super().__init__(errno.EPERM, found, path)

    def __str__(self) -> str:
        return f"{self.filename} is {self.strerror}"


def unexpected(st: os.stat_result, want_dir: bool = False, single: bool = True) -> str | None:
    """What a stat (never following) found when it is not what sgmon expects, None when it is:
    a directory for ``want_dir``, else a regular file, with no other name when ``single`` (a
    file written or deleted by sgmon)."""
    mode = st.st_mode
    if stat.S_ISLNK(mode):
        return "a symlink"
    if want_dir:
        return None if stat.S_ISDIR(mode) else what_is(mode) or "a file"
    kind = what_is(mode)
    if kind is None and single and st.st_nlink > 1:
        return f"a hard link (one of {st.st_nlink} names of a file)"
    return kind


class Dir:
    """A directory held by descriptor: a name in it is what it is in this directory, whatever
    is renamed or symlinked above it since it was opened."""

    def __init__(self, fd: int, path: str) -> None:
        self.fd = fd
        self.path = path
        """Where it was found, for messages."""
        self.changed = False
        """Entries created, renamed or removed since the last ``sync``."""

    @classmethod
    def at(cls, path: str) -> Dir:
        """The directory a user named (symlinks on the way followed: the path is theirs)."""
        return cls(os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC), path)

    def __enter__(self) -> Dir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def join(self, name: str) -> str:
        """The path of a name in it, for messages."""
        return os.path.join(self.path, name)

    def lstat(self, name: str) -> os.stat_result | None:
        """What is at ``name`` (never followed), None when nothing is."""
        try:
            return os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def refusal(self, name: str, want_dir: bool = False, single: bool = True) -> Refused | None:
        """The ``Refused`` for what is at ``name`` now, None when it is what sgmon expects (or
        nothing)."""
        st = self.lstat(name)
        found = None if st is None else unexpected(st, want_dir, single)
        return None if found is None else Refused(found, self.join(name))

    def _check(self, fd: int, name: str, want_dir: bool, single: bool) -> None:
        """Close ``fd`` and raise ``Refused`` when it is not what sgmon expects at ``name``."""
        found = unexpected(os.fstat(fd), want_dir, single)
        if found is not None:
            os.close(fd)
            raise Refused(found, self.join(name))

    def _open(self, name: str, flags: int, mode: int, want_dir: bool, single: bool) -> int:
        """``os.open`` relative to this directory; a symlink or a kind the flags refuse
        (``O_DIRECTORY`` on a file, a write on a directory) raises ``Refused``."""
        try:
            return os.open(name, flags, mode, dir_fd=self.fd)
        except OSError as e:
            if e.errno in (errno.ELOOP, errno.ENOTDIR, errno.EISDIR, errno.ENXIO):
                refused = self.refusal(name, want_dir, single)
                if refused is not None:
                    raise refused from None
            raise

    def sub(self, name: str, create: bool = False) -> Dir | None:
        """The directory ``name`` in this one (made when ``create``), None when there is none;
        ``Refused`` for a symlink or anything but a directory."""
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, dir_fd=self.fd)
                self.changed = True
        try:
            fd = self._open(name, _DIR, 0, want_dir=True, single=False)
        except FileNotFoundError:
            if create:
                raise
            return None
        self._check(fd, name, want_dir=True, single=False)
        return Dir(fd, self.join(name))

    def open_file(self, name: str, flags: int, single: bool = True) -> int:
        """A descriptor on the existing regular file ``name`` (``Refused`` for anything else,
        never opening a FIFO or a device: it is looked at first, and checked again once
        open)."""
        refused = self.refusal(name, single=single)
        if refused is not None:
            raise refused
        fd = self._open(name, flags | _FILE, 0, want_dir=False, single=single)
        self._check(fd, name, want_dir=False, single=single)
        os.set_blocking(fd, True)
        return fd

    def create(self, name: str, flags: int, mode: int = 0o644) -> int:
        """A descriptor on a new file ``name``, made by this call (FileExistsError when anything,
        even a dangling symlink, is there)."""
        fd = os.open(name, flags | os.O_CREAT | os.O_EXCL | _FILE, mode, dir_fd=self.fd)
        self.changed = True
        os.set_blocking(fd, True)
        return fd

    def open_append(self, name: str) -> int:
        """A descriptor for appending to ``name``: made exclusively, or the regular file with
        one name that is there (``Refused`` otherwise)."""
        flags = os.O_RDWR | os.O_APPEND
        while True:
            try:
                return self.create(name, flags)
            except FileExistsError:
                pass
            try:
                return self.open_file(name, flags)
            except FileNotFoundError:
                continue  # removed between the two: make it

    def temp(self, stem: str, mode: int = 0o644) -> tuple[str, int]:
        """``(name, descriptor)`` of a new hidden file ``.<stem>.<random>.tmp`` for writing,
        made exclusively under a name nobody could plant in advance."""
        for _ in range(_TRIES):
            name = f".{stem}.{os.urandom(12).hex()}.tmp"
            try:
                return name, self.create(name, os.O_WRONLY, mode)
            except FileExistsError:
                continue
        raise FileExistsError(errno.EEXIST, "no free temporary name", self.join(stem))

    def write_replace(self, name: str, data: bytes, sync: bool) -> None:
        """Replace ``name`` with ``data`` atomically (a temporary file renamed over it), on
        disk before this returns when ``sync``; whatever was at ``name`` (a symlink too) is
        replaced, never written through."""
        tmp, fd = self.temp(name)
        try:
            try:
                write_all(fd, data)
                if sync:
                    os.fsync(fd)
            finally:
                os.close(fd)
            self.replace(tmp, name)
        except OSError:
            self.unlink_quietly(tmp)
            raise
        if sync:
            self.sync()

    def read(self, name: str, limit: int, mine: bool = False) -> bytes:
        """The content of the regular file ``name`` (other names allowed: it is only read);
        OSError for a longer one than ``limit`` bytes, or one another user owns when ``mine``."""
        fd = self.open_file(name, os.O_RDONLY, single=False)
        with os.fdopen(fd, "rb") as f:
            if mine and os.fstat(fd).st_uid != os.getuid():
                raise Refused("another user's file", self.join(name))
            data = f.read(limit + 1)
        if len(data) > limit:
            raise OSError(errno.EFBIG, f"larger than {limit} bytes", self.join(name))
        return data

    def replace(self, src: str, dst: str) -> None:
        """Rename ``src`` over ``dst``, both in this directory."""
        os.replace(src, dst, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        self.changed = True

    def unlink(self, name: str) -> None:
        """Remove the name (never what a symlink points to)."""
        os.unlink(name, dir_fd=self.fd)
        self.changed = True

    def unlink_quietly(self, name: str) -> None:
        """Remove the name if it can be (a temporary file after a failure)."""
        with contextlib.suppress(OSError):
            self.unlink(name)

    def listdir(self) -> list[str]:
        """The names in it."""
        return os.listdir(self.fd)

    def identity(self) -> tuple[int, int]:
        """``(device, inode)``: another directory at its path is not this one."""
        st = os.fstat(self.fd)
        return st.st_dev, st.st_ino

    def sync(self) -> None:
        """Its entries on disk (a file made or renamed survives a power cut) when they
        changed."""
        if self.changed:
            self.changed = False
            os.fsync(self.fd)

    def close(self) -> None:
        """Release the descriptor (idempotent)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` (a short write is retried with the rest; none at all is a full
    disk)."""
    view = memoryview(data)
    while view:
        done = os.write(fd, view)
        if done <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[done:]


def private_dir(path: str, create: bool = False) -> Dir:
    """The directory ``path`` when only this user may plant names in it: a directory (not a
    symlink to one), owned by this user, of mode 0700 (made so when ``create``).
    FileNotFoundError when it is missing; ``Refused`` otherwise."""
    if create:
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, 0o700)
    try:
        fd = os.open(path, _DIR)
    except OSError as e:
        if e.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        st = os.stat(path, follow_symlinks=False)
        raise Refused(unexpected(st, want_dir=True) or "not a directory", path) from None
    st = os.fstat(fd)
    found = None
    if not stat.S_ISDIR(st.st_mode):
        found = what_is(st.st_mode) or "a file"
    elif st.st_uid != os.getuid():
        found = f"owned by uid {st.st_uid}"
    elif st.st_mode & 0o077:
        found = f"open to others (mode {stat.S_IMODE(st.st_mode):04o})"
    if found is not None:
        os.close(fd)
        raise Refused(found, path)
    return Dir(fd, path)
