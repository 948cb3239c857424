"""The inet_diag bytecode filter (INET_DIAG_REQ_BYTECODE): the program ``ss`` compiles from
``sport = :P or dport = :P ... and dst = ADDR``, so the kernel copies only the matching sockets
to user space while it walks its socket tables.

Ops from include/uapi/linux/inet_diag.h (enum inet_diag_bc_op, struct inet_diag_bc_op,
inet_diag_hostcond).
"""

from __future__ import annotations

import ipaddress
import socket
import struct
from collections.abc import Sequence

_BC_JMP, _BC_S_COND, _BC_D_COND, _BC_S_EQ, _BC_D_EQ = 1, 7, 8, 11, 12
_OP = struct.Struct("=BBH")  # inet_diag_bc_op

DIRECTIONS = {"both": (_BC_S_EQ, _BC_D_EQ), "in": (_BC_S_EQ,), "out": (_BC_D_EQ,)}
"""Which end's port a filter tests: the local one (``in``: connections this host accepted on
the port), the remote one (``out``: connections it opened to the port), or either."""


def _port_match(ports: Sequence[int], direction: str = "both") -> bytes:
    """``sport = :P or dport = :P or ...``, compiled as ss does: each test jumps 8 ahead on
    true and 12 (past its operand) on false; a JMP after each true test skips to the end."""
    if not ports:
        raise ValueError("at least one port is needed")
    ops = DIRECTIONS[direction]
    return _or([_OP.pack(op, 8, 12) + _OP.pack(0, 0, p) for p in ports for op in ops])


def _or(tests: list[bytes]) -> bytes:
    """OR-chain tests whose true branch falls through and false branch jumps past the end."""
    code = tests[-1]
    for t in reversed(tests[:-1]):
        code = t + _OP.pack(_BC_JMP, 4, len(code) + 4) + code
    return code


def _peer_match(peers: Sequence[str]) -> bytes:
    """``dst = ADDR[/LEN] or ...`` as D_COND tests (any port)."""
    tests = []
    for peer in peers:
        net = ipaddress.ip_network(peer, strict=False)
        fam = socket.AF_INET if net.version == 4 else socket.AF_INET6
        cond = struct.pack("=BBxxi", fam, net.prefixlen, -1) + net.network_address.packed
        tests.append(_OP.pack(_BC_D_COND, 4 + len(cond), 4 + len(cond) + 4) + cond)
    return _or(tests)


def _and(first: bytes, second: bytes) -> bytes:
    """``first and second``: first's reject jumps (to its end + 4) are moved past ``second``."""
    out = bytearray(first)
    pos = 0
    while pos < len(first):
        code, yes, no = _OP.unpack_from(first, pos)
        if pos + yes == len(first) + 4:
            yes += len(second)
        if pos + no == len(first) + 4:
            no += len(second)
        _OP.pack_into(out, pos, code, yes, no)
        pos += _op_len(first, pos)
    return bytes(out) + second


def _op_len(code: bytes, pos: int) -> int:
    """Length of the op at ``pos`` including its operand."""
    op = code[pos]
    if op in (_BC_S_EQ, _BC_D_EQ):
        return 8
    if op in (_BC_S_COND, _BC_D_COND):
        yes: int = _OP.unpack_from(code, pos)[1]  # true branch = next op
        return yes
    return 4


def bytecode(ports: Sequence[int], peers: Sequence[str] = (), direction: str = "both") -> bytes:
    """The INET_DIAG_REQ_BYTECODE program: local or remote port (see DIRECTIONS) in ``ports``
    [and peer in ``peers``, addresses or CIDR networks].  Raises ValueError on a bad address."""
    code = _port_match(ports, direction)
    return _and(code, _peer_match(peers)) if peers else code
