"""The remote side of a host reached over ssh without sgmon installed: a byte pump.

Sent over the ssh connection and run by the host's own ``python3`` (3.6 or later, the standard
library only: RHEL/OL 8's platform-python is 3.6), so nothing is installed and nothing is left
behind: the program is read from stdin by ``python3 -I -c`` (no file, no bytecode cache), and it
exits when its stdin closes (the ssh session ended) or its stdout is gone.  ``vermin
--target=3.6-`` checks it in the tests.

It parses nothing.  The consumer's first line on stdin is the request (JSON): the files the
collectors declare (``remote_files``), those to read every tick (of some, only the lines a
regular expression matches: ``keep``, from the collectors' ``lines``), those to read when TCP's
RetransSegs moved (/proc/net/netstat, whose counters move only with a retransmission, costs the
kernel 2.5 times /proc/net/snmp) and every ``slow_every`` seconds, globs of files to read every
``slow_every`` seconds (link speeds, partition flags, socket buffer sysctls; a glob is looked up
again only when its directory lists other names); sock_diag netlink requests to send (the tcp
collector's filter of the Data Guard sockets, built by the consumer, and when; see Sockets);
trace files to tail (directories and name patterns).
Each tick, on a wall-clock boundary of ``interval`` shifted by ``shift`` (so its ticks fall on the
consumer's boundaries), it reads them (descriptors kept open, one ``pread`` each, as sadc
does) and writes one message: a binary head (``HEAD``), each piece's length, then the pieces.
Not compressed: zlib cost the host about a third more CPU than the whole tick without it
(bench/README.md, "The pump on a remote host").  A tick does
as little Python as it can: a cold interpreter woken once a second pays for every line.

The consumer finds the first message after ``MAGIC`` (what a login banner printed before is
skipped).  Messages to the consumer: one kind byte, a 4-byte big-endian length, the payload.
``H`` hello (JSON), ``T`` a tick, ``P`` a pong (JSON), ``E`` a problem (text, once).  Lines from the
consumer after the request: ``ping T`` (answered with a pong carrying this host's clock) and
``shift S``.  Without a line for ``orphan_after`` seconds the pump ends (see ``orphaned``).
"""

import contextlib
import gc
import glob
import json
import os
import platform
import re
import select
import signal
import socket
import struct
import sys
import threading
import time

LOCK = threading.Lock()
HEAD = struct.Struct("<ddIBH")
"""A tick's head: wall clock, monotonic clock, number, flags, pieces; then, with EXTRA, a JSON
note (its length first); then each piece's length (-1: could not be read); then the pieces."""
RETRANS, DIAG, ROUTES, EXTRA, PROCS, TRACE = 1, 2, 4, 8, 16, 32
"""RETRANS: the on_retrans files (and on a slow tick the slow files) follow the tick's files;
then the followed processes' files (see Processes); DIAG: the sockets' netlink replies follow
them, ROUTES: then the routes toward their peers; EXTRA: a note names the slow files (a slow
tick), the processes' files (a walk) and the trace files whose tails end the pieces; PROCS: a
process's file moved (the consumer keeps such a tick even when it does not read it); TRACE: the
kernel trace records read this tick follow the routes (see Trace)."""
UNCHANGED = False
"""A piece the consumer already has as it is (size -2): a process that has not run since."""
STATE = {"shift": 0.0, "heard": time.monotonic()}
MAGIC = b"\0sgmon-pump\0"
"""Written once before the hello: where the pump's stream starts after a login banner."""
TAILS_MOST = 4 << 20
"""Bytes of trace tails one tick ships at most (the rest follows with the next ticks): a tick
stays far under the consumer's bound on a message."""


def kept(lines, data):
    """The lines of a file the consumer's collectors read (a compiled Collector.lines)."""
    return b"".join(lines.findall(b"\n" + data))


def pack(wall, mono, seq, flags, blobs, extra):
    """One tick's message (see HEAD); a piece that is None could not be read."""
    sizes = [-1 if b is None else -2 if b is UNCHANGED else len(b) for b in blobs]
    note = json.dumps(extra).encode() if extra else b""
    head = HEAD.pack(wall, mono, seq, flags | (EXTRA if note else 0), len(sizes))
    if note:
        head += struct.pack("<I", len(note)) + note
    return b"".join([head, struct.pack(f"<{len(sizes)}i", *sizes), *filter(None, blobs)])


def send(kind, payload):
    """One message, whole, under the lock; a closed stdout ends the pump."""
    data = kind + struct.pack(">I", len(payload)) + payload
    with LOCK:
        try:
            while data:
                data = data[os.write(1, data) :]
        except OSError:
            end()


def end(*_):
    """End the pump, the trace instance it made removed first (see Trace)."""
    clean_up()
    os._exit(0)


def clean_up():
    """Run what ENDING holds, once: by one thread while the others that end wait (the first
    to exit ends them all); again by the same thread is harmless."""
    with ENDED:
        while ENDING:
            with contextlib.suppress(Exception):
                ENDING.pop()()


ENDING: list = []
"""What ``clean_up`` runs before the pump exits."""
ENDED = threading.RLock()


def once(path):
    """A small file read without keeping it open (read once in a while: a process's name)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)


def whole(path):
    """A file read to its end (b"" when it cannot be): a /proc table whose reads return whole
    lines only, so a short read is not its end."""
    out = []
    with contextlib.suppress(OSError), open(path, "rb", buffering=0) as fh:
        for chunk in iter(lambda: fh.read(1 << 16), b""):
            out.append(chunk)
    return b"".join(out)


class Files:
    """Files kept open and re-read from offset 0 each time."""

    def __init__(self):
        self.fds = {}
        self.sizes = {}

    def read(self, path):
        fd = self.fds.get(path)
        if fd is None:
            try:
                fd = self.fds[path] = os.open(path, os.O_RDONLY)
            except OSError:
                return None
            self.sizes[path] = 4096
        size = self.sizes[path]
        try:
            data = os.pread(fd, size, 0)
            while len(data) >= size:
                size = self.sizes[path] = size * 4
                data = os.pread(fd, size, 0)
        except OSError:
            os.close(fd)
            del self.fds[path]
            return None
        return data

    def forget(self, paths):
        for path in paths:
            fd = self.fds.pop(path, None)
            if fd is not None:
                os.close(fd)


CONNECTED = sum(1 << s for s in (1, 2, 4, 5, 8, 9, 11))  # ss's default states
WAIT = struct.pack("@ll", 1, 0)
"""A reply that never comes must not stop the ticks: a second at most, as the kernel's receive
timeout (a Python socket timeout would poll before every receive)."""
BY_FAMILY = struct.pack("=H", 20)  # SOCK_DIAG_BY_FAMILY, a socket's reply (else NLMSG_ERROR)


def replies(sock, expected):
    """Netlink messages until NLMSG_DONE (``expected`` None) or ``expected`` replies, each as
    (type, offset) in the returned bytes."""
    out, found = [], []
    size = 0
    while True:
        data = sock.recv(65536)
        pos = 0
        while pos + 16 <= len(data):
            length, kind = struct.unpack_from("=IH", data, pos)
            if length < 16:
                break
            found.append((kind, size + pos))
            pos += (length + 3) & ~3
            if expected is None and kind in (2, 3):  # NLMSG_ERROR, NLMSG_DONE
                return b"".join([*out, data]), found
        out.append(data)
        size += len(data)
        if expected is not None and len(found) >= expected:
            return b"".join(out), found


class TcpCounters:
    """RetransSegs and ActiveOpens, PassiveOpens from /proc/net/snmp's Tcp: value line, as the
    bytes they are (only whether they moved matters here), the columns found once in its name
    line (which does not change while the kernel runs)."""

    NAMES = (b"RetransSegs", b"ActiveOpens", b"PassiveOpens")

    def __init__(self):
        self.cols = None

    def read(self, snmp):
        """(retransmitted segments, connections opened), or (None, None)."""
        parts = snmp.split(b"\nTcp: ", 2)
        if len(parts) < 3:
            return None, None
        if self.cols is None:
            names = parts[1].split(b"\n", 1)[0].split()
            if not all(n in names for n in self.NAMES):
                return None, None
            self.cols = [names.index(n) for n in self.NAMES]
        values = parts[2].split(b"\n", 1)[0].split()
        try:
            return values[self.cols[0]], (values[self.cols[1]], values[self.cols[2]])
        except IndexError:
            return None, None


class Sockets:
    """The Data Guard sockets, found as the tcp collector finds them locally (collectors/tcp.py):
    the consumer's filtered dump (both families in one walk of the kernel's socket hash, ~1 ms
    per 262,144 buckets whatever the count) when a known socket is gone, or when a connection of
    a kind that could be one (``prompt``, indexes in ``opens``: opened for a primary's, accepted
    for a standby's) came since the last dump and the next is due: ``rediscover`` s after the
    last (0: every tick), spaced 1, 2, 4, 8 s up to it while dumps find none.  Else one exact
    lookup per known socket, as cheap beside 20,000 others; more than 64 are dumped every tick.
    After a switchover the consumer sends the other end's request (``aim``).  With ``rtnl``,
    the routes toward their peers too."""

    def __init__(self, sock, spec):
        self.sock = sock
        self.rtnl = None
        self.peers = []
        self.routed = None  # the peers whose routes were last shipped
        self.aim(spec)

    def aim(self, spec):
        """Take a request (the first, or the one for the other end after a switchover): the
        known sockets are forgotten and the next tick dumps."""
        self.request = bytes.fromhex(spec["diag"][0])
        self.ext = self.request[19]  # inet_diag_req's ext
        self.rediscover = float(spec.get("rediscover", 10.0))
        self.prompt = set(spec.get("prompt", (0, 1)))
        self.lookups = b""
        self.known = 0
        self.many = False  # more than 64: dumped every tick
        self.empty = 0  # dumps in a row that found none: they space out
        self.next_dump = 0.0
        self.opens = None  # ActiveOpens, PassiveOpens at the last dump

    def ship(self, blobs, now, opens, slow_tick):
        """Append the sockets' replies, and the routes when the peers changed or on a slow
        tick, to a tick's pieces; the flags saying which."""
        blobs.append(self.read(now, opens))
        if self.rtnl is None or not (slow_tick or self.peers != self.routed):
            return DIAG
        self.routed = self.peers
        try:
            blobs.append(routes(self.rtnl, self.peers))
        except OSError:
            blobs.append(b"")  # no route answer: rto_min unknown this round
        return DIAG | ROUTES

    def due(self, now, opens):
        """Whether a dump looks for new sockets this tick (see the class)."""
        if now < self.next_dump:
            return False
        if not self.rediscover or opens is None or self.opens is None:
            return True
        return any(opens[i] != self.opens[i] for i in self.prompt)

    def read(self, now, opens):
        """The sockets' replies: the known ones looked up, or a dump (see the class)."""
        aimed = STATE.pop("sockets", None)
        if aimed is not None:
            self.aim(aimed)
        due = self.many or self.due(now, opens)
        if not self.known and not due:
            return b""
        if self.known and not due:
            self.sock.send(self.lookups)
            recv = self.sock.recv
            try:  # one datagram per lookup, under a page: no 64 kB buffer each
                got = [recv(4096) for _ in range(self.known)]
            except BlockingIOError:  # SO_RCVTIMEO passed
                got = [b""]  # a reply short: dump
            if all(d[4:6] == BY_FAMILY and CONNECTED >> d[17] & 1 for d in got):
                return b"".join(got)
        return self.dump(now, opens)

    def dump(self, now, opens):
        """The dump's replies; the sockets they name become the known ones."""
        self.sock.send(self.request)
        data, found = replies(self.sock, None)
        ids = [data[at + 16 : at + 17] + data[at + 20 : at + 68] for k, at in found if k == 18]
        self.peers = ids
        self.many = len(ids) > 64
        self.known = 0 if self.many else len(ids)
        self.empty = 0 if ids else self.empty + 1
        self.lookups = b"".join(
            struct.pack("=IHHII", 72, 20, 1, seq, 0)  # nlmsghdr, inet_diag_req_v2 naming one
            + struct.pack("=BBBBI", ident[0], 6, self.ext, 0, 0)
            + ident[1:]
            for seq, ident in enumerate(ids, 1)
        )
        spaced = float(1 << min(self.empty - 1, 16)) if self.empty else self.rediscover
        self.next_dump = now + min(self.rediscover, spaced)  # as collectors/tcp.py idle_wait
        self.opens = opens
        return data


def netlink(spec):
    """The sockets' netlink (sock_diag, and rtnetlink for the routes), or None without a
    request (the consumer's dump: TCPDIAG_GETSOCK, both families) or netlink (said once)."""
    if not spec.get("diag"):
        return None
    sockets = None
    try:
        sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 4)  # NETLINK_SOCK_DIAG
        sock.bind((0, 0))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, WAIT)
        sockets = Sockets(sock, spec)
        rtnl = sockets.rtnl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)  # ROUTE
        rtnl.bind((0, 0))
        rtnl.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, WAIT)
    except (OSError, AttributeError) as e:
        send(b"E", f"no netlink: {e}".encode())
    return sockets


def routes(sock, idents):
    """The kernel's route toward each socket's peer (``ip route get``), as it replies: where a
    route's rto_min is (seed 001's fix), read by the consumer's route reader."""
    out, seen = [], set()
    for ident in idents:
        family, dst = ident[0], ident[21:37]  # the sockid's destination address
        if family == socket.AF_INET6 and dst[:12] == b"\0" * 10 + b"\xff\xff":
            family, dst = socket.AF_INET, dst[12:]  # an IPv4 peer on a dual-stack socket
        elif family == socket.AF_INET:
            dst = dst[:4]
        if (family, dst) in seen:
            continue
        seen.add((family, dst))
        body = struct.pack("=BBBBBBBBI", family, 8 * len(dst), 0, 0, 0, 0, 0, 0, 0)
        body += struct.pack("=HH", 4 + len(dst), 1) + dst  # RTA_DST
        sock.send(struct.pack("=IHHII", 16 + len(body), 26, 1, len(seen), 0) + body)
        data, _ = replies(sock, 1)  # RTM_NEWROUTE, or NLMSG_ERROR without a route
        out.append(data)
    return b"".join(out)


def listing(directory, cache):
    """A directory's names, listed again only when its mtime moved (kept only when that was
    over a second before: a file made in the same clock tick as the listing would not move it
    again)."""
    try:
        stamp = os.stat(directory).st_mtime_ns
        if cache.get(directory, (None,))[0] != stamp:
            names = os.listdir(directory)
            cache[directory] = (stamp if time.time() - stamp / 1e9 > 1.0 else None, names)
    except OSError:
        cache.pop(directory, None)
        return ()
    return cache[directory][1]


def expand(patterns, cache):
    """The paths the globs match, found again (glob looks up every entry's file) only when the
    directory above the first wildcard lists other names: sysfs directories keep their mtime
    when a device comes or goes, so only a listing tells."""
    out = []
    for pattern in patterns:
        if "*" not in pattern:
            out.append(pattern)  # read, or known missing, like any file
            continue
        try:
            names = os.listdir(os.path.dirname(pattern.partition("*")[0]))
        except OSError:
            names = None
        if cache.get(pattern, (None,))[0] != names or names is None:
            cache[pattern] = (names, glob.glob(pattern))
        out += cache[pattern][1]
    return sorted(set(out))


class Tails:
    """The bytes appended to the trace files since the last tick.  The files are those of each
    (directory, name pattern) of the request, listed again every ``slow_every`` seconds (an
    instance restart or a respawned process starts a new file); a file there at the start is
    followed from its end, one that appears later from its start; from 0 again when it was
    truncated or replaced; at most ``most`` bytes a tick, the newest."""

    def __init__(self, specs, most):
        self.specs = [(d, re.compile(p)) for d, p in specs]
        self.most = most
        self.at = {}
        self.paths = []
        self.started = None
        self.listed = {}
        """Directory -> its listing (an Oracle trace directory can hold tens of thousands of
        files, and the three followed processes often share one)."""

    def find(self):
        found = []
        for directory, pattern in self.specs:
            names = listing(directory, self.listed)
            found += [os.path.join(directory, n) for n in names if pattern.fullmatch(n)]
        if self.started is None:
            self.started = time.time()
        else:
            for path in set(found) - set(self.paths):
                with contextlib.suppress(OSError):
                    st = os.stat(path)
                    if st.st_mtime >= self.started:
                        self.at[path] = (st.st_ino, 0)
        self.paths = found

    def ship(self, blobs, extra):
        """Append what each file gained to a tick's pieces, and its path to the tick's note."""
        room = TAILS_MOST
        for path in self.paths:
            try:
                st = os.stat(path)
            except OSError:
                self.at.pop(path, None)
                continue
            ino, pos = self.at.get(path, (st.st_ino, st.st_size))
            if ino != st.st_ino or st.st_size < pos:
                pos = 0  # rotated or truncated: the new file from its start
            pos = max(pos, st.st_size - self.most)  # far behind: the newest bytes only
            data = b""
            if st.st_size > pos:
                try:
                    with open(path, "rb") as fh:
                        fh.seek(pos)
                        data = fh.read(min(st.st_size - pos, room))
                except OSError:
                    continue
            room -= len(data)
            self.at[path] = (st.st_ino, pos + len(data))
            if data:
                extra.setdefault("tails", []).append(path)
                blobs.append(data)


class Processes:
    """The processes a consumer's collector follows by their names (the procs collector's
    ``remote_processes``: LGWR, NSS, RFS ...), found by a walk of /proc's ``comm`` names every
    ``every`` seconds and when one is gone (the names of the pids the last walk saw are taken
    from it, all read again every fourth walk: a name set after the walk read it, or a pid
    reused, is seen within four); each tick only their small files are read: their
    tasks' schedstat first, and the rest only when one of them ran since the last tick or the
    process was runnable or in D (else each piece is UNCHANGED), as the collector reads them
    locally (sgmon/readers/procs.py).  The paths are named in the tick's note at each walk.
    With ``holders``, the server processes of those names that hold a socket the lines of
    /proc/net/tcp and tcp6 that ``connections`` keeps name (an established one on a Data Guard
    port: RFS) are followed too; those lines and those descriptors are shipped at the walk, so
    the consumer's collector finds the same processes by the same test."""

    TABLES = ("/proc/net/tcp", "/proc/net/tcp6")

    def __init__(self, spec, files):
        self.names = re.compile(spec["names"].encode())
        self.holders = re.compile(spec["holders"].encode()) if spec.get("holders") else None
        self.connections = re.compile(spec.get("connections", "(?!)").encode())
        self.tables = []  # the socket tables' kept lines at the last walk
        self.comms = {}  # /proc/PID (or its task's) -> its name at the last walk
        self.known = {}
        self.walks = -1
        self.threaded = re.compile(spec.get("threaded", "(?!)").encode())
        self.status = re.compile(spec["status"].encode()) if spec.get("status") else None
        self.every = float(spec.get("every", 15.0))
        self.files = files
        self.walked = -self.every
        self.followed = []  # (base, its comm, its tasks' schedstat and status paths)
        self.last = {}  # base -> (its tasks' schedstat texts, its state) at the last full read
        self.gone = False

    def walk(self, mono, extra):
        """Find the processes again; name their files in the tick's note."""
        self.walked, self.gone = mono, False
        found, servers = [], []
        self.walks += 1
        self.known, self.comms = (self.comms if self.walks % 4 else {}), {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            base = "/proc/" + name
            comm = self.comm(base)
            if comm is None:
                continue
            if self.names.match(comm.rstrip(b"\n")):
                found.append(self.tasks(base, comm, base + "/task/"))
            elif self.threaded.match(comm.rstrip(b"\n")):
                found += self.threads(base, comm)
            elif self.holders is not None and self.holders.match(comm):
                servers.append((base, comm))
        links = self.holding(servers, found) if self.holders is not None else None
        paths = [path for f in found for path in self.paths(f)]
        self.files.forget({p for f in self.followed for p in self.paths(f)} - set(paths))
        self.followed = found
        self.last = {}
        extra["procs"] = (list(self.TABLES) if links is not None else []) + paths
        if links is not None:
            extra["links"] = links

    def holding(self, servers, found):
        """Follow the servers that hold a socket the tables' kept lines name; their
        descriptors of those sockets (path -> target).  The tables are read only when there
        is a server (with thousands of sockets, one costs the kernel milliseconds)."""
        tables = self.TABLES if servers else ()
        self.tables = [kept(self.connections, whole(t)) for t in tables]
        self.tables += [b""] * (len(self.TABLES) - len(self.tables))
        rows = [line.split() for t in self.tables for line in t.split(b"\n")]
        sockets = {b"socket:[" + row[9] + b"]" for row in rows if len(row) > 9}  # its inode
        links = {}
        for base, comm in servers if sockets else ():
            try:
                fds = os.listdir(base + "/fd")
            except OSError:
                continue
            held = {}
            for fd in fds:
                with contextlib.suppress(OSError):
                    target = os.readlink(base + "/fd/" + fd)
                    if target.encode() in sockets:
                        held[base + "/fd/" + fd] = target
            if held:
                links.update(held)
                found.append(self.tasks(base, comm, base + "/task/"))
        return links

    def tasks(self, base, comm, task):
        """A process followed whole: its threads' schedstat and status (listed at the walk)."""
        try:
            tids = sorted(os.listdir(task))
        except OSError:
            tids = []
        scheds = [task + t + "/schedstat" for t in tids]
        return (base, comm, scheds, [task + t + "/status" for t in tids])

    def comm(self, base):
        """A process's or thread's name: the last walk's (see the class), else read."""
        comm = self.known[base] if base in self.known else once(base + "/comm")
        if comm is not None:
            self.comms[base] = comm
        return comm

    def threads(self, base, comm):
        """The threads of a threaded_execution process that bear a followed name, each followed
        alone, under its process (whose name the consumer's walk reads too)."""
        out = [(base, comm, [], [])]
        try:
            tids = sorted(os.listdir(base + "/task"))
        except OSError:
            return []
        for tid in tids:
            at = base + "/task/" + tid
            name = self.comm(at)
            if name is not None and self.names.match(name.rstrip(b"\n")):
                out.append((at, name, [at + "/schedstat"], [at + "/status"]))
        return out if len(out) > 1 else []

    @staticmethod
    def paths(followed):
        base, _, scheds, statuses = followed
        if not scheds:
            return [base + "/comm"]
        return [base + "/comm", base + "/stat", base + "/io", base + "/wchan", *scheds, *statuses]

    def ship(self, blobs, mono, extra):
        """Append the followed processes' pieces (after a walk when due); PROCS when one
        moved."""
        walked = False
        if self.gone or mono - self.walked >= self.every:
            self.walk(mono, extra)
            walked = True
        moved = 0
        if self.holders is not None:
            blobs += self.tables if walked else [UNCHANGED] * len(self.TABLES)
        for followed in self.followed:
            base, comm, scheds, statuses = followed
            blobs.append(comm if walked else UNCHANGED)
            if scheds:
                moved |= self.process(blobs, base, scheds, statuses, walked)
        return PROCS if moved or walked else 0

    def process(self, blobs, base, scheds, statuses, walked):
        """One process's stat, io, wchan, schedstat and status pieces; whether they moved."""
        read = self.files.read
        now = [read(p) for p in scheds]
        was = self.last.get(base)
        if not walked and was is not None and was[0] == now and was[1] not in b"RD":
            blobs += [UNCHANGED] * (3 + 2 * len(scheds))
            return False
        stat = read(base + "/stat")
        if stat is None or None in now:
            self.gone = True  # gone, or a thread ended: found again at the next tick
            blobs += [None] * (3 + 2 * len(scheds))
            return True
        state = stat[stat.rfind(b")") + 2 :][:1]
        self.last[base] = (now, state)
        keep = self.status
        blobs += [stat, read(base + "/io"), read(base + "/wchan") if state == b"D" else UNCHANGED]
        blobs += now
        for path in statuses:
            data = read(path)
            blobs.append(kept(keep, data) if keep is not None and data is not None else data)
        return True


TRACEFS = "/sys/kernel/tracing"
STALE = re.compile(r"sgmon-(\d+)-(\d+)-\d+$")


def started(pid):
    """A process's start time (/proc/PID/stat field 22), None when it is gone."""
    try:
        return once(f"/proc/{pid}/stat").rsplit(b")", 1)[1].split()[19].decode()
    except (AttributeError, IndexError):
        return None


class Trace:
    """The consumer's retrans collector's tracepoints (``trace``: events and their filters, the
    first the kernel accepts, and the buffer size) in a private ftrace instance made here, named
    as sgmon names its own (``sgmon-<pid>-<start>-0``: an sgmon on this host, or the next pump,
    removes it if this process was killed), removed when the pump ends.  Each tick the CPUs
    whose raw pipes one poll finds readable are read, page by page, and the pages shipped as
    they are (each after its length), after the tick's wall clock minus its monotonic one (the
    trace clock): the consumer decodes them with its own reader (sgmon/readers/tracefs.py)."""

    def __init__(self, spec):
        self.events = dict(spec["events"])
        self.buffer_kb = int(spec.get("buffer_kb", 128))
        self.path = None
        self.pipes = []
        self.poll = select.poll()
        self.page = 4096
        self.shipped = False
        """Whether a piece went: the first tick ships one, even empty, to say the far side
        traces."""

    def open(self):
        """Make and enable the instance; False (said once) when this host cannot trace."""
        try:
            self.remove_stale()
            me = os.getpid()
            path = f"{TRACEFS}/instances/sgmon-{me}-{started(me)}-0"
            os.mkdir(path)
            self.path = path
            ENDING.append(self.close)
            self.write("buffer_size_kb", str(self.buffer_kb))
            self.write("trace_clock", "mono")
            with contextlib.suppress(OSError):
                self.write("buffer_percent", "0")
            for event, exprs in self.events.items():
                if not any(self.write(f"events/{event}/filter", e, False) for e in exprs):
                    raise OSError(f"{event} rejects the filter {exprs[-1]!r}")
                self.write(f"events/{event}/enable", "1")
            with contextlib.suppress(TypeError, ValueError):  # older kernels: the page size
                self.page = int(once(path + "/buffer_subbuf_size_kb")) * 1024
            for cpu in sorted(os.listdir(path + "/per_cpu")):
                fd = os.open(f"{path}/per_cpu/{cpu}/trace_pipe_raw", os.O_RDONLY | os.O_NONBLOCK)
                self.pipes.append(fd)
                self.poll.register(fd, select.POLLIN)
        except OSError as e:
            self.close()
            send(
                b"E",
                f"no kernel tracing here (root and tracefs at {TRACEFS}): {e}".encode(),
            )
            return False
        return True

    def write(self, name, text, must=True):
        try:
            with open(self.path + "/" + name, "w") as fh:
                fh.write(text)
        except OSError:
            if must:
                raise
            return False
        return True

    @staticmethod
    def remove_stale():
        """Remove the instances of sgmon processes gone from this host (rmdir fails while one
        is in use: another sgmon's, seen from another pid namespace, stays)."""
        for name in os.listdir(TRACEFS + "/instances"):
            m = STALE.match(name)
            if m is not None and started(m.group(1)) != m.group(2):
                with contextlib.suppress(OSError):
                    os.rmdir(TRACEFS + "/instances/" + name)

    def ship(self, blobs, wall, mono):
        """Append the records read since the last tick; TRACE (else nothing is appended)."""
        pages = []
        for fd, _ in self.poll.poll(0):
            while True:
                try:
                    page = os.read(fd, self.page)
                except BlockingIOError:
                    break
                if not page:
                    break
                pages += [struct.pack("<I", len(page)), page]
        if not pages and self.shipped:
            return 0
        self.shipped = True
        blobs.append(b"".join([struct.pack("<d", wall - mono), *pages]))
        return TRACE

    def close(self):
        for fd in self.pipes:
            os.close(fd)
        self.pipes = []
        if self.path is not None:
            for event in self.events:
                self.write(f"events/{event}/enable", "0", False)
                self.write(f"events/{event}/filter", "0", False)
            with contextlib.suppress(OSError):
                os.rmdir(self.path)
            self.path = None


def listen(stdin):
    """Answer pings and take shifts until stdin closes, then end the pump."""
    for raw in stdin:
        STATE["heard"] = time.monotonic()
        words = raw.split()
        try:
            if words[:1] == [b"ping"]:
                reply = {"pong": float(words[1]), "time": time.time()}
                send(b"P", json.dumps(reply).encode())
            elif words[:1] == [b"shift"]:
                STATE["shift"] = float(words[1])
            elif words[:1] == [b"sockets"]:  # the other end's request, after a switchover
                aimed = json.loads(words[1].decode())
                if len(bytes.fromhex(aimed["diag"][0])) > 19:  # else not a request: not taken
                    STATE["sockets"] = aimed
        except (IndexError, KeyError, TypeError, ValueError):
            continue
    end()


def orphaned(after):
    """End the pump when the consumer has been silent for ``after`` seconds: a cut link leaves
    sshd and this process waiting on a connection nobody reads (its pings come every few
    seconds), and a write blocked on a full pipe would never notice."""
    while True:
        time.sleep(after / 4)
        if time.monotonic() - STATE["heard"] > after:
            end()


class Ticks:
    """The request's files and trace tails, read on each tick's boundary and shipped as one
    message (see HEAD)."""

    def __init__(self, spec):
        self.interval = float(spec.get("interval", 1.0))
        self.every = list(spec.get("files", ()))
        self.on_retrans = list(spec.get("on_retrans", ()))
        self.slow = list(spec.get("slow", ()))
        self.slow_every = float(spec.get("slow_every", 10.0))
        self.tails = Tails(list(spec.get("tails", ())), int(spec.get("tail_max", 1 << 20)))
        self.keep = {
            path: re.compile(rx.encode()) for path, rx in dict(spec.get("keep", {})).items()
        }
        self.procs = spec.get("procs")
        self.trace = Trace(spec["trace"]) if spec.get("trace") else None

    def run(self, sockets):
        """Tick until the pump ends; ``sockets``: the DG sockets' netlink, or None."""
        interval, every, on_retrans, slow = self.interval, self.every, self.on_retrans, self.slow
        slow_every, tails, keep = self.slow_every, self.tails, self.keep
        files = Files()
        procs = Processes(self.procs, files) if self.procs else None
        trace = self.trace if self.trace is not None and self.trace.open() else None
        counters = TcpCounters()
        slow_paths, listed = [], {}
        slow_at = -slow_every
        retrans = None
        seq = 0
        if hasattr(gc, "freeze"):  # 3.7+
            gc.freeze()  # novermin (what the set-up made is never garbage: collections skip it)
        while True:
            shift = STATE["shift"]
            now = time.time()
            target = (int((now - shift) / interval + 1e-9) + 1) * interval + shift
            time.sleep(max(0.0, target - now))
            seq += 1
            mono = time.monotonic()
            wall = time.time()
            flags, extra = 0, {}
            slow_tick = mono - slow_at >= slow_every
            if slow_tick:
                slow_at = mono
                found = expand(slow, listed)
                files.forget(set(slow_paths) - set(found))
                extra["slow"] = slow_paths = found
                tails.find()
            snmp = files.read("/proc/net/snmp")
            now_retrans, opens = counters.read(snmp or b"")
            wanted = every
            if slow_tick or now_retrans is None or now_retrans != retrans:
                flags |= RETRANS
                wanted = every + on_retrans + (slow_paths if slow_tick else [])
                retrans = now_retrans
            blobs = []
            for path in wanted:
                data = snmp if path == "/proc/net/snmp" else files.read(path)
                lines = keep.get(path)
                blobs.append(kept(lines, data) if lines is not None and data is not None else data)
            if procs is not None:
                flags |= procs.ship(blobs, mono, extra)
            if sockets is not None:
                try:
                    flags |= sockets.ship(blobs, mono, opens, slow_tick)
                except OSError as e:
                    send(b"E", f"sock_diag: {e}".encode())
                    sockets.sock.close()
                    sockets = None
            if trace is not None:
                flags |= trace.ship(blobs, wall, mono)
            tails.ship(blobs, extra)
            send(b"T", pack(wall, mono, seq, flags, blobs, extra))


def main():
    stdin = sys.stdin.buffer
    spec = json.loads(stdin.readline().decode())
    ticks = Ticks(spec)
    hello = {
        "pump": 1,
        "python": platform.python_version(),
        "hostname": socket.gethostname(),
        "time": time.time(),
    }
    try:
        os.write(1, MAGIC)
    except OSError:
        os._exit(0)
    send(b"H", json.dumps(hello).encode())
    sockets = netlink(spec)
    for target, args in ((listen, (stdin,)), (orphaned, (float(spec.get("orphan_after", 60)),))):
        thread = threading.Thread(target=target, args=args)
        thread.daemon = True
        thread.start()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, end)
    try:
        ticks.run(sockets)
    finally:
        clean_up()


if __name__ == "__main__":
    main()
