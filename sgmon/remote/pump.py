"""The remote side of a host reached over ssh without sgmon installed: a byte pump.

Sent over the ssh connection and run by the host's own ``python3`` (3.6 or later, the standard
library only: RHEL/OL 8's platform-python is 3.6), so nothing is installed and nothing is left
behind: the program is read from stdin by ``python3 -I -c`` (no file, no bytecode cache), and it
exits when its stdin closes (the ssh session ended) or its stdout is gone.  ``vermin
--target=3.6-`` checks it in the tests.

It parses nothing.  The consumer's first line on stdin is the request (JSON): the files to read
every tick, files to read when TCP's RetransSegs moved (/proc/net/netstat, whose counters move
only with a retransmission, costs the kernel 2.5 times /proc/net/snmp) and every ``slow_every``
seconds, globs of files to read every ``slow_every`` seconds (link speeds, partition flags,
socket buffer sysctls), sock_diag netlink requests to send every tick (the Data Guard port
filter, built by the consumer), trace files to tail (directories and name patterns).  Each
tick, on a wall-clock boundary of ``interval`` shifted by ``shift`` (so its ticks fall on the
consumer's boundaries), it reads
them (descriptors kept open, one ``pread`` each, as sadc does) and writes one message: a JSON
header naming each piece and its length, then the pieces, through one zlib stream flushed per
tick, so what did not change since the last tick costs next to nothing on the wire.

Messages to the consumer: one kind byte, a 4-byte big-endian length, the payload.  ``H`` hello
(JSON), ``T`` a tick (the next piece of the zlib stream), ``P`` a pong (JSON), ``E`` a problem
(text, once).  Lines from the consumer after the request: ``ping T`` (answered with a pong
carrying this host's clock) and ``shift S``.  Without a line for ``orphan_after`` seconds the
pump ends (see ``orphaned``).
"""

import contextlib
import glob
import json
import os
import platform
import re
import socket
import struct
import sys
import threading
import time
import zlib

LOCK = threading.Lock()
STATE = {"shift": 0.0, "heard": time.monotonic()}


def send(kind, payload):
    """One message, whole, under the lock; a closed stdout ends the pump."""
    data = kind + struct.pack(">I", len(payload)) + payload
    with LOCK:
        try:
            while data:
                data = data[os.write(1, data) :]
        except OSError:
            os._exit(0)


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
REDISCOVER = 10.0


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


def tcp_counter(snmp, *names):
    """The sum of these Tcp: counters of /proc/net/snmp, or None."""
    lines = [line.split() for line in snmp.split(b"\n") if line.startswith(b"Tcp:")]
    if len(lines) < 2:
        return None
    head, values = lines[0], lines[1]
    try:
        return sum(int(values[head.index(name)]) for name in names)
    except (IndexError, ValueError):
        return None


class Sockets:
    """The Data Guard sockets as the kernel reports them, found the way the tcp collector finds
    them locally (sgmon/readers/inet_diag.py): the consumer's filtered dump when a known socket
    is gone, or when a connection was opened since the last dump and none is known or
    REDISCOVER seconds have passed; else one exact lookup per known socket, which costs the
    same with 20 or 20,000 other sockets on the host."""

    def __init__(self, sock, requests):
        self.sock = sock
        self.requests = requests
        self.ext = requests[0][18] if requests else 0  # inet_diag_req_v2.idiag_ext
        self.lookups = b""
        self.peers = []
        self.known = 0
        self.next_dump = 0.0
        self.opens = None

    def read(self, now, opens):
        opened = opens is None or opens != self.opens
        if not self.known and not opened:
            return b""
        if self.known and not (opened and now >= self.next_dump):
            self.sock.send(self.lookups)
            try:
                data, found = replies(self.sock, self.known)
            except socket.timeout:  # noqa: UP041 (TimeoutError only from 3.10)
                found = [(0, 0)]  # a reply short: dump
            if all(kind == 20 and CONNECTED >> data[at + 17] & 1 for kind, at in found):
                return data
        out, ids = [], []
        for request in self.requests:
            self.sock.send(request)
            data, found = replies(self.sock, None)
            out.append(data)
            ids.extend(
                data[at + 16 : at + 17] + data[at + 20 : at + 68]
                for kind, at in found
                if kind == 20
            )
        self.peers = ids
        self.known = len(ids) if len(ids) <= 64 else 0  # many: dump each tick
        self.lookups = b"".join(
            struct.pack("=IHHII", 72, 20, 1, seq, 0)  # nlmsghdr, inet_diag_req_v2 naming one
            + struct.pack("=BBBBI", ident[0], 6, self.ext, 0, 0)
            + ident[1:]
            for seq, ident in enumerate(ids, 1)
        )
        self.next_dump = now + REDISCOVER
        self.opens = opens
        return b"".join(out)


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

    def find(self):
        found = []
        for directory, pattern in self.specs:
            try:
                names = os.listdir(directory)
            except OSError:
                continue
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

    def read(self):
        pieces = []
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
                        data = fh.read(st.st_size - pos)
                except OSError:
                    continue
            self.at[path] = (st.st_ino, pos + len(data))
            if data:
                pieces.append((path, data))
        return pieces


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
        except (IndexError, ValueError):
            continue
    os._exit(0)


def orphaned(after):
    """End the pump when the consumer has been silent for ``after`` seconds: a cut link leaves
    sshd and this process waiting on a connection nobody reads (its pings come every few
    seconds), and a write blocked on a full pipe would never notice."""
    while True:
        time.sleep(after / 4)
        if time.monotonic() - STATE["heard"] > after:
            os._exit(0)


def main():
    stdin = sys.stdin.buffer
    spec = json.loads(stdin.readline().decode())
    interval = float(spec.get("interval", 1.0))
    every = list(spec.get("files", ()))
    on_retrans = list(spec.get("on_retrans", ()))
    slow = list(spec.get("slow", ()))
    slow_every = float(spec.get("slow_every", 10.0))
    requests = [bytes.fromhex(r) for r in spec.get("diag", ())]
    tails = Tails(list(spec.get("tails", ())), int(spec.get("tail_max", 1 << 20)))
    hello = {
        "pump": 1,
        "python": platform.python_version(),
        "hostname": socket.gethostname(),
        "time": time.time(),
    }
    send(b"H", json.dumps(hello).encode())
    sockets = rtnl = None
    if requests:
        try:
            sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 4)  # NETLINK_SOCK_DIAG
            sock.bind((0, 0))
            sock.settimeout(1.0)  # a reply that never comes must not stop the ticks
            sockets = Sockets(sock, requests)
            rtnl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)  # NETLINK_ROUTE
            rtnl.bind((0, 0))
            rtnl.settimeout(1.0)
        except (OSError, AttributeError) as e:
            send(b"E", f"no netlink: {e}".encode())
    peers = None
    for target, args in ((listen, (stdin,)), (orphaned, (float(spec.get("orphan_after", 60)),))):
        thread = threading.Thread(target=target, args=args)
        thread.daemon = True
        thread.start()
    files = Files()
    packer = zlib.compressobj(6)
    slow_paths = []
    slow_at = -slow_every
    retrans = None
    seq = 0
    while True:
        shift = STATE["shift"]
        now = time.time()
        target = (int((now - shift) / interval + 1e-9) + 1) * interval + shift
        time.sleep(max(0.0, target - now))
        seq += 1
        mono = time.monotonic()
        header = {"t": time.time(), "m": mono, "seq": seq, "f": []}
        blobs = []
        if mono - slow_at >= slow_every:
            slow_at = mono
            found = sorted({p for g in slow for p in glob.glob(g)})
            files.forget(set(slow_paths) - set(found))
            header["slow"] = slow_paths = found
            tails.find()
        snmp = files.read("/proc/net/snmp") or b""
        now_retrans = tcp_counter(snmp, b"RetransSegs")
        wanted = every
        if "slow" in header or now_retrans is None or now_retrans != retrans:
            wanted = every + on_retrans + (slow_paths if "slow" in header else [])
            retrans = now_retrans
        for path in wanted:
            data = snmp if path == "/proc/net/snmp" else files.read(path)
            if data is not None:
                header["f"].append([path, len(data)])
                blobs.append(data)
        if sockets is not None:
            try:
                data = sockets.read(mono, tcp_counter(snmp, b"ActiveOpens", b"PassiveOpens"))
            except OSError as e:
                send(b"E", f"sock_diag: {e}".encode())
                sockets.sock.close()
                sockets = None
            else:
                header["diag"] = len(data)
                blobs.append(data)
            if (
                rtnl is not None
                and sockets is not None
                and ("slow" in header or sockets.peers != peers)
            ):
                peers = sockets.peers
                try:
                    data = routes(rtnl, peers)
                except OSError:
                    data = b""  # no route answer: rto_min unknown this round
                header["routes"] = len(data)
                blobs.append(data)
        for path, data in tails.read():
            header.setdefault("tails", []).append([path, len(data)])
            blobs.append(data)
        body = json.dumps(header).encode() + b"\n" + b"".join(blobs)
        send(b"T", packer.compress(body) + packer.flush(zlib.Z_SYNC_FLUSH))


if __name__ == "__main__":
    main()
