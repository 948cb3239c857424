"""oswnetstat's reports: ``netstat -a -i -n`` and ``netstat -s`` (or, in OSWatcher's AHF
releases, ``ip -s link``), cumulative counters that become rates between snapshots (see the
package docstring)."""

from __future__ import annotations

import re

from sgmon.importers.osw.files import Block
from sgmon.importers.osw.reports import num

NETSTAT_I = {
    "RX-OK": "rx_pkt",
    "TX-OK": "tx_pkt",
    "RX-ERR": "rx_err",
    "TX-ERR": "tx_err",
    "RX-DRP": "rx_drop",
    "TX-DRP": "tx_drop",
    "RX-OVR": "rx_fifo",
    "TX-OVR": "tx_fifo",
}
IP_LINK = re.compile(r"^\d+:\s+([^:@\s]+)(?:@\S+)?:\s+<")
"""An ``ip -s link`` interface line: ``3: eth0: <BROADCAST,...> mtu 1500 ...`` (``veth0@if2``)."""
IP_S = {
    ("RX:", "bytes"): "rx_kb",
    ("RX:", "packets"): "rx_pkt",
    ("RX:", "errors"): "rx_err",
    ("RX:", "dropped"): "rx_drop",
    ("RX:", "overrun"): "rx_overrun",
    ("TX:", "bytes"): "tx_kb",
    ("TX:", "packets"): "tx_pkt",
    ("TX:", "errors"): "tx_err",
    ("TX:", "dropped"): "tx_drop",
}
"""``ip -s link``'s RX:/TX: columns (by header name: iproute2 prints ``overrun`` or, since
5.x, ``missed`` there) -> netdev fields; bytes are stored as kB, as the live collector's."""
NETSTAT_S = (  # (section, line pattern) -> tcp host field; old and new netstat wordings
    ("Tcp:", re.compile(r"^(\d+) active connection"), "active_opens"),
    ("Tcp:", re.compile(r"^(\d+) passive connection"), "passive_opens"),
    ("Tcp:", re.compile(r"^(\d+) segments retransmit"), "retrans_segs"),
    ("TcpExt:", re.compile(r"^(?:TCPTimeouts: (\d+)|(\d+) other TCP timeouts)"), "timeouts"),
    ("TcpExt:", re.compile(r"^TCPLostRetransmit: (\d+)"), "lost_retransmit"),
)


def _ip_link(lines: list[str]) -> dict[str, dict[str, float]]:
    """``ip -s link``'s counters per interface (OSWatcher's AHF releases collect it)."""
    out: dict[str, dict[str, float]] = {}
    name, cols = "", [""]
    for ln in lines:
        m = IP_LINK.match(ln)
        parts = ln.split()
        if m:
            name = m.group(1)
            out[name] = {}
        elif name and parts[:1] in (["RX:"], ["TX:"]):
            cols = parts
        elif name and cols[0] and parts and all(p.isdigit() for p in parts):
            for k, v in zip(cols[1:], parts, strict=False):
                field = IP_S.get((cols[0], k))
                if field:
                    out[name][field] = float(v) / 1024 if field.endswith("_kb") else float(v)
            cols = [""]
        else:
            cols = [""]
    return out


def netstat(lines: list[str], step: float | None = None) -> list[Block]:
    """netstat -i's table (or ip -s link's) and netstat -s's TCP counters, cumulative (rates
    come later).  A block needs one of the interface tables or netstat -s to be read."""
    counters: dict[str, dict[str, float]] = _ip_link(lines)
    counters.update(_netstat_i(lines))
    tcp = _netstat_s(lines)
    if tcp:
        counters["host"] = tcp
    if not counters or (tcp and "active_opens" not in tcp):
        return []  # nothing readable, or netstat -s cut short
    return [Block(0.0, "netstat", counters=counters)]


def _netstat_i(lines: list[str]) -> dict[str, dict[str, float]]:
    """``netstat -i``'s counters per interface, by the column names."""
    counters: dict[str, dict[str, float]] = {}
    heads = [i for i, ln in enumerate(lines) if ln.startswith("Iface")]
    if not heads:
        return counters
    cols = lines[heads[0]].split()
    for ln in lines[heads[0] + 1 :]:
        parts = ln.split()
        if not parts or parts[0].endswith(":"):
            break
        d = dict(zip(cols, parts, strict=False))
        counters[parts[0]] = {
            f: v for k, f in NETSTAT_I.items() if (v := num(d.get(k, ""))) is not None
        }
    return counters


def _netstat_s(lines: list[str]) -> dict[str, float]:
    """``netstat -s``'s TCP counters, in the old wordings and the new."""
    section, tcp = "", {}
    for ln in lines:
        if ln and not ln[0].isspace():
            section = ln.strip()
            continue
        for sect, pattern, name in NETSTAT_S:
            m = pattern.match(ln.strip()) if sect == section else None
            if m:
                tcp[name] = float(next(g for g in m.groups() if g is not None))
    return tcp
