"""The ``tcp`` collector's ``host`` row: the host-wide TCP counters of /proc/net/snmp and
/proc/net/netstat (sar -n TCP/ETCP's), and the caps on socket buffers (sysctls), read from the
host's tree under the collector's ``root`` with the files kept open.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping

from sgmon.model import Value
from sgmon.readers.procfile import ProcFile, counter_table

SETTINGS_REFRESH = 10.0
"""Seconds a peer's route rto_min and the buffer sysctls are cached (an `ip route change` or a
`sysctl -w` shows within this)."""

SNMP = (
    "/proc/net/snmp",
    {
        "Tcp:": (
            ("active_opens", "ActiveOpens"),
            ("passive_opens", "PassiveOpens"),
            ("retrans_segs", "RetransSegs"),
        )
    },
)
NETSTAT = (
    "/proc/net/netstat",
    {"TcpExt:": (("timeouts", "TCPTimeouts"), ("lost_retransmit", "TCPLostRetransmit"))},
)
"""The host row's counters: (file, {line prefix: ((field, counter name), ...)}).  /proc/net/netstat
costs the kernel 2.5 times /proc/net/snmp to print (42 against 17 us here), and both of its
counters only move with a retransmission (an RTO expiry or a lost retransmit is followed by one),
so it is read when RetransSegs has moved since its last read, and every SETTINGS_REFRESH seconds;
a count that moved otherwise shows at that read, never lost."""
SYSCTLS = {
    "rmem_max": "/proc/sys/net/core/rmem_max",
    "wmem_max": "/proc/sys/net/core/wmem_max",
    "tcp_rmem_max": "/proc/sys/net/ipv4/tcp_rmem",
    "tcp_wmem_max": "/proc/sys/net/ipv4/tcp_wmem",
}
"""The caps on socket buffers, each file's last number: net.core.{r,w}mem_max bound what
SO_RCVBUF/SO_SNDBUF (Oracle Net's RECV_BUF_SIZE/SEND_BUF_SIZE) may ask for, the third value
of net.ipv4.tcp_{r,w}mem how far the kernel's autotuning grows a buffer no one set; a socket
buffer of 3 x BDP (seed 000) needs the one in force above it."""
FILES: Mapping[str, str] = {
    SNMP[0]: "tick",
    NETSTAT[0]: "retrans",  # as it is read here (see NETSTAT)
    **dict.fromkeys(SYSCTLS.values(), "slow"),
}
"""What a remote pump ships for the host row (``Collector.remote_files``)."""


class HostCounters:
    """The host row's files, kept open, and what was last read of the slower ones."""

    def __init__(self) -> None:
        self._sysctls: dict[str, Value] = {}
        self._sysctls_at = -SETTINGS_REFRESH
        self._counters: dict[str, ProcFile] = {}  # path -> file
        self._netstat: dict[str, int] = {}  # its counters at the last read
        self._netstat_at: tuple[float, Value] = (-SETTINGS_REFRESH, None)  # when, RetransSegs
        self._sysctl_files: dict[str, ProcFile] = {}  # field name -> file

    def open(self, path: Callable[[str], str]) -> bool:
        """Open the files (``path``: where a host path is, the collector's); those that cannot
        be read are left out.  Whether /proc/net/snmp, the row's core, could be."""
        for name, _ in (SNMP, NETSTAT):
            if name not in self._counters:
                with contextlib.suppress(OSError):
                    self._counters[name] = ProcFile(path(name))
        for field, name in SYSCTLS.items():
            if field not in self._sysctl_files:
                with contextlib.suppress(OSError):
                    self._sysctl_files[field] = ProcFile(path(name))
        return SNMP[0] in self._counters

    def read(self, now: float) -> dict[str, Value]:
        """The host row: /proc/net/snmp's counters, /proc/net/netstat's as of its last read (see
        NETSTAT), and the sysctls (settings, not counters) read every SETTINGS_REFRESH seconds."""
        if now - self._sysctls_at >= SETTINGS_REFRESH:
            self._sysctls, self._sysctls_at = {}, now
            for name, f in self._sysctl_files.items():
                with contextlib.suppress(OSError, ValueError, IndexError):
                    self._sysctls[name] = int(f.read().split()[-1])
        row: dict[str, Value] = dict(self._sysctls)
        row.update(self._counter_file(*SNMP))
        retrans = row.get("retrans_segs")
        when, seen = self._netstat_at
        if retrans is None or retrans != seen or now - when >= SETTINGS_REFRESH:
            self._netstat = self._counter_file(*NETSTAT)
            self._netstat_at = (now, retrans)
        row.update(self._netstat)
        return row

    def _counter_file(
        self, path: str, wanted: Mapping[str, tuple[tuple[str, str], ...]]
    ) -> dict[str, int]:
        """field -> value of the wanted counters of a "Prefix: names" / "Prefix: values" file;
        {} when it cannot be read."""
        f = self._counters.get(path)
        try:
            return counter_table(f.read(), wanted) if f is not None else {}
        except OSError:
            return {}

    def close(self) -> None:
        """Close the files (idempotent)."""
        for f in (*self._counters.values(), *self._sysctl_files.values()):
            f.close()
        self._counters.clear()
        self._sysctl_files.clear()
