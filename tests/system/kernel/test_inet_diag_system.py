"""The raw inet_diag client on real loopback sockets: bytecode filter against ss, decode against
pyroute2's full decode and getsockopt(TCP_INFO).  Ports 46130-46139 on a loopback address of
our own (127.46.1.1): the ports are inside the ephemeral range, so on 127.0.0.1 any client on the
host may hold them.  No root needed."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from kits.inet_diag import P1, P2, P3, P6

from sgmon.readers.inet_diag import InetDiag
from sgmon.readers.tcp_info import TCP_STATES


def _keys(socks) -> set[tuple[str, int, str, int]]:
    return {(s.src, s.sport, s.dst, s.dport) for s in socks}


def _ss(expr: str) -> set[tuple[str, int, str, int]]:
    out = subprocess.run(["ss", "-tnH", expr], capture_output=True, text=True, check=True).stdout
    found = set()
    for line in out.splitlines():
        local, peer = line.split()[3:5]
        (la, lp), (pa, pp) = (x.rsplit(":", 1) for x in (local, peer))
        unmap = lambda a: a.strip("[]").removeprefix("::ffff:")  # noqa: E731
        found.add((unmap(la), int(lp), unmap(pa), int(pp)))
    return found


def test_port_filter_matches_ss(sockets) -> None:
    if shutil.which("ss") is None:
        pytest.skip("needs ss (iproute2)")
    with InetDiag() as diag:
        got = diag.query([P1, P2])
    expr = f"( sport = :{P1} or dport = :{P1} or sport = :{P2} or dport = :{P2} )"
    assert _keys(got) == _ss(expr)
    assert len(got) == 8  # 2 connections x 2 ends x 2 ports, the listeners excluded
    assert all(TCP_STATES[s.state] == "ESTAB" for s in got)
    assert not {s.sport for s in got} & {P3} and not {s.dport for s in got} & {P3}


@pytest.mark.parametrize(("direction", "end"), [("out", "dport"), ("in", "sport")])
def test_direction_tests_one_end_as_ss_does(sockets, direction: str, end: str) -> None:
    """``out``: the ends that connected to the port (a primary's LNS); ``in``: the ends the
    listener accepted (a standby's RFS); with a peer condition and with both address families."""
    if shutil.which("ss") is None:
        pytest.skip("needs ss (iproute2)")
    with InetDiag() as diag:
        got = diag.query([P1, P2, P6], direction=direction)
        assert _keys(got) == _ss(f"( {end} = :{P1} or {end} = :{P2} or {end} = :{P6} )")
        assert len(got) == 5  # one end of each of the five connections
        assert all(getattr(s, end) in (P1, P2, P6) for s in got)
        assert len(diag.query([P1], peers=["127.0.0.0/8"], direction=direction)) == 2
