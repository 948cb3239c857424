"""The pump's tick as the mirror reads it: what one side packs the other writes, file for file;
a damaged or invented tick is one ValueError and writes nothing outside what was asked for."""

from __future__ import annotations

import contextlib
import json
import os
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sgmon.hosts.build import shipped
from sgmon.readers.inet_diag import SOCK_DIAG_DUMP
from sgmon.readers.rtnl import ROUTES_DUMP
from sgmon.readers.tracefs import PumpedTrace
from sgmon.remote.mirror import Mirror
from sgmon.remote.pump import DIAG, HEAD, PROCS, RETRANS, TRACE, UNCHANGED, pack

TRACES = "/u01/app/oracle/diag/rdbms/boston/boston/trace"
SHIPPED = shipped()
EVERY_TICK, ON_RETRANS = SHIPPED.tick, SHIPPED.retrans


@pytest.fixture
def mirror() -> Iterator[Mirror]:
    m = Mirror("unit", SHIPPED, (TRACES,), processes=True)
    yield m
    m.close()


def _read(m: Mirror, path: str) -> bytes | None:
    local = Path(m.local(path))
    return local.read_bytes() if local.exists() else None


def _files(tag: bytes) -> list[bytes | None]:
    return [tag + b" " + p.encode() + b"\n" for p in EVERY_TICK]


def test_a_slow_tick_writes_every_piece_where_the_collectors_read_it(mirror: Mirror) -> None:
    slow = ["/sys/class/net/eth0/speed", "/proc/sys/net/core/rmem_max"]
    lgwr = f"{TRACES}/boston_lgwr_4242.trc"
    blobs = [*_files(b"one"), b"netstat", b"10000\n", b"4194304\n", b"\x01diag", b"redo 3\n"]
    body = pack(1.5, 2.5, 7, RETRANS | DIAG, blobs, {"slow": slow, "tails": [lgwr]})
    tick = mirror.apply(body)
    assert (tick.time, tick.monotonic, tick.seq) == (1.5, 2.5, 7)
    for path, data in zip(EVERY_TICK, _files(b"one"), strict=True):
        assert _read(mirror, path) == data
    assert _read(mirror, ON_RETRANS[0]) == b"netstat"
    assert _read(mirror, slow[0]) == b"10000\n"
    assert _read(mirror, "/" + SOCK_DIAG_DUMP) == b"\x01diag"
    assert _read(mirror, lgwr) == b"redo 3\n"
    second = [*_files(b"two"), b"redo 4\n"]
    second[EVERY_TICK.index("/proc/pressure/io")] = None  # unreadable there: gone here
    mirror.apply(pack(2.5, 3.5, 8, 0, second, {"tails": [lgwr]}))
    assert _read(mirror, "/proc/stat") == b"two /proc/stat\n"
    assert _read(mirror, "/proc/pressure/io") is None
    assert _read(mirror, lgwr) == b"redo 3\nredo 4\n"  # a tail is appended
    assert _read(mirror, slow[0]) == b"10000\n"  # a slow file stays until the next slow tick
    third = [*_files(b"3"), b"netstat", b"4194304\n"]
    mirror.apply(pack(3.5, 4.5, 9, RETRANS, third, {"slow": slow[1:]}))
    assert _read(mirror, slow[0]) is None  # the link went away


def test_a_followed_process_arrives_stays_while_it_sleeps_and_goes_empty(mirror: Mirror) -> None:
    """The files a walk names arrive; a piece the pump says is unchanged (the process did not
    run) leaves the file as it was; a process gone is emptied (a collector keeping the file
    open reads it so) and removed; the next walk's list replaces the last."""
    lgwr = ["/proc/42/comm", "/proc/42/stat", "/proc/42/task/42/schedstat"]
    files = _files(b"x")
    first = [b"ora_lgwr_PROD\n", b"42 (ora_lgwr_PROD) S 1", b"100 5 3\n"]
    mirror.apply(pack(1, 2, 3, PROCS, [*files, *first], {"procs": lgwr}))
    assert [_read(mirror, p) for p in lgwr] == first
    mirror.apply(pack(2, 3, 4, 0, [*files, UNCHANGED, UNCHANGED, b"200 5 4\n"], {}))
    assert [_read(mirror, p) for p in lgwr] == [*first[:2], b"200 5 4\n"]
    with open(mirror.local(lgwr[1]), "rb") as kept_open:
        mirror.apply(pack(3, 4, 5, PROCS, [*files, UNCHANGED, None, None], {}))
        assert _read(mirror, lgwr[1]) is None and kept_open.read() == b""
    mirror.apply(pack(4, 5, 6, PROCS, [*files, b"ora_nss2_PROD\n"], {"procs": ["/proc/43/comm"]}))
    assert _read(mirror, lgwr[0]) is None and _read(mirror, "/proc/43/comm") == b"ora_nss2_PROD\n"


def test_a_walks_socket_descriptors_are_links_as_on_the_host(mirror: Mirror) -> None:
    """The descriptors of the sockets a server process holds (RFS's) are symbolic links, as
    /proc has them, each walk's replacing the last's; a mirror that asked for no process refuses
    them."""
    links = {"/proc/77/fd/9": "socket:[54321]"}
    mirror.apply(pack(1, 2, 3, PROCS, _files(b"x"), {"procs": [], "links": links}))
    assert os.readlink(mirror.local("/proc/77/fd/9")) == "socket:[54321]"
    mirror.apply(pack(2, 3, 4, PROCS, _files(b"x"), {"procs": [], "links": {}}))
    assert not os.path.lexists(mirror.local("/proc/77/fd/9"))
    plain = Mirror("plain", SHIPPED)
    try:
        with pytest.raises(ValueError, match="not asked for"):
            plain.apply(pack(1, 2, 3, PROCS, _files(b"x"), {"procs": [], "links": links}))
    finally:
        plain.close()


def _page(stamp: int, record: bytes, delta: int) -> bytes:
    """A ring-buffer sub-buffer as trace_pipe_raw hands it out, with one short record."""
    body = struct.pack("=I", delta << 5 | len(record) // 4) + record
    return struct.pack("=QQ", stamp, len(body)) + body + b"\0" * 64


def test_a_far_sides_trace_records_are_read_once_by_its_trace_reader() -> None:
    """The pages of a tick that carried any land as one file, read (and removed) by the
    retrans collector's reader of a pumped host with the far side's clock; a mirror that did
    not ask for them refuses the tick."""
    pages = [_page(1000, b"ABCDEFGH", 5), _page(2000, b"IJKL", 7)]
    piece = struct.pack("<d", 1.7e9) + b"".join(struct.pack("<I", len(p)) + p for p in pages)
    body = pack(1, 2, 3, TRACE, [*_files(b"x"), piece], {})
    untraced = Mirror("untraced", SHIPPED)
    traced = Mirror("traced", SHIPPED, traced=True)
    try:
        with pytest.raises(ValueError, match="not asked for"):
            untraced.apply(body)
        traced.apply(body)
        reader = PumpedTrace(traced.root)
        reader.open()
        assert reader.read() == ([(1005, b"ABCDEFGH"), (2007, b"IJKL")], 0)
        assert reader.clock_offset() == 1.7e9
        assert reader.read() == ([], 0)  # consumed
    finally:
        untraced.close()
        traced.close()


def _valid() -> bytes:
    return pack(
        1.0, 2.0, 3, DIAG, [*_files(b"x"), b"diag", b"tail"], {"tails": [f"{TRACES}/a.trc"]}
    )


def test_the_valid_tick_of_the_corpus_is_valid(mirror: Mirror) -> None:
    """The damaged ticks below are damaged copies of this one."""
    assert mirror.apply(_valid()).seq == 3
    assert _read(mirror, f"{TRACES}/a.trc") == b"tail"


def _damaged() -> Iterator[tuple[str, bytes]]:
    good = _valid()
    for cut in (0, 5, HEAD.size, HEAD.size + 3, len(good) // 2, len(good) - 1):
        yield f"cut at {cut}", good[:cut]
    yield "a byte too many", good + b"x"
    wall, mono, seq, flags, count = HEAD.unpack_from(good)
    yield "a piece too many", HEAD.pack(wall, mono, seq, flags, count + 1) + good[HEAD.size :]
    yield "65535 pieces", HEAD.pack(wall, mono, seq, 0, 65535) + b"\0" * 4 * 65535
    yield "sizes past the end", pack(1, 2, 3, 0, [b"a" * 10] * len(EVERY_TICK), {})[:-5]
    for note in (b"[1, 2]", b"{", b"\xff\xfe", b'{"slow": [7]}', b'{"tails": {"a": 1}}'):
        yield f"note {note!r}", HEAD.pack(1, 2, 3, 8, 0) + struct.pack("<I", len(note)) + note
    invented = [
        {"slow": ["/etc/passwd"]},
        {"slow": ["/sys/class/net/../../../etc/shadow"]},
        {"tails": ["/etc/passwd"]},
        {"tails": [f"{TRACES}/../../../../../../../etc/passwd"]},
        {"procs": ["/etc/passwd"]},
        {"procs": ["/proc/1/../../etc/shadow"]},
        {"procs": ["/proc/1/environ"]},
        {"procs": [], "links": {"/proc/1/fd/3": "/etc/passwd"}},
        {"procs": [], "links": {"/proc/1/../../etc/x": "socket:[1]"}},
        {"procs": [], "links": ["/proc/1/fd/3"]},
    ]
    for note in invented:
        extra = sum(len(note.get(k, ())) for k in ("slow", "tails", "procs"))
        flags = RETRANS if "slow" in note else 0
        blobs = [*_files(b"x"), *([b"n"] if flags else []), *[b"evil"] * extra]
        yield f"invented {json.dumps(note)}", pack(1, 2, 3, flags, blobs, note)


@pytest.mark.parametrize(
    ("why", "body"), list(_damaged()), ids=lambda v: v if isinstance(v, str) else ""
)
def test_a_damaged_tick_is_one_value_error_and_writes_nothing(
    mirror: Mirror, why: str, body: bytes
) -> None:
    with pytest.raises(ValueError, match="corrupt tick"):
        mirror.apply(body)
    written = [os.path.join(d, f) for d, _, files in os.walk(mirror.root) for f in files]
    assert written == [], why


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400), st.integers(0, 200))
def test_random_bytes_in_a_tick_are_a_value_error_or_a_tick(noise: bytes, at: int) -> None:
    m = Mirror("fuzz", SHIPPED, (TRACES,))
    try:
        good = _valid()
        body = good[:at] + noise + good[at + len(noise) :]
        with contextlib.suppress(ValueError):
            m.apply(body)
        outside = [
            os.path.join(d, f)
            for d, _, files in os.walk(m.root)
            for f in files
            if not os.path.join(d, f).startswith(
                (m.local("/proc"), m.local("/sys"), m.local(TRACES))
            )
            and f not in (SOCK_DIAG_DUMP, ROUTES_DUMP)  # the netlink replies' files
        ]
        assert outside == []
    finally:
        m.close()
