"""`retrans`: each retransmission of a Data Guard socket as an event, told apart as TLP or RTO.

Why its own collector and not part of `tcp`: it needs root and tracefs, which many hosts do not
give, and it owns kernel state (a trace instance) that must be removed; as a collector of its own
it is skipped with its reason where it cannot run (``sgmon collectors`` shows the reason, and the
frame's ``retrans`` status says "unavailable") while `tcp` goes on reading its counters, and a DBA
can switch it off alone.  When it is off, retransmissions are what `tcp` shows: a per-second
``retransmits`` step per socket and the host's TCPTimeouts; its ``host`` row's ``source`` says
"tracefs" when the events are in use.

What it reads: the tracepoints ``tcp:tcp_retransmit_skb`` and ``tcp:tcp_cong_state_set`` in a
private trace instance (sgmon/readers/tracefs.py), filtered in the kernel on the Data Guard ports
(``dport`` on a primary, ``sport`` on a standby, either where the role is unknown, as the `tcp`
collector's ``direction``), so other traffic never reaches Python.  The instance's clock is
CLOCK_MONOTONIC, mapped to wall time by the offset between ``time.time()`` and
``time.clock_gettime(CLOCK_MONOTONIC)`` at each read.  Each tick polls every CPU's binary
``trace_pipe_raw`` at once (one syscall while no retransmission happens), reads those with
records without blocking, and decodes them by the offsets of each event's ``format`` file.
Tracepoints are host-wide: sockets of every network namespace (containers) with a DG port count.

The kernel's semantics (include/trace/events/tcp.h, net/ipv4/tcp_output.c, tcp_timer.c,
tcp_cong.c, 6.x):

* ``tcp_retransmit_skb`` fires in ``__tcp_retransmit_skb``, the one path of every data
  retransmission: the RTO timer (``tcp_retransmit_timer``), fast/SACK recovery
  (``tcp_xmit_retransmit_queue``) and the tail-loss probe (``tcp_send_loss_probe``, which calls
  ``__tcp_retransmit_skb`` directly to resend the last segment when no new data is queued).
  Since 6.x it also fires for attempts that failed (``err`` != 0, e.g. -EBUSY while the original
  is still in the host's queue); those are not retransmissions (tcpi_total_retrans does not
  count them) and are filtered out in the kernel where the record has ``err``.
* ``tcp_cong_state_set`` fires in ``tcp_set_ca_state`` on every call, before the state is
  stored.  An RTO expiry runs ``tcp_enter_loss`` (state -> Loss, 4) and then retransmits the
  head; fast recovery sets Recovery (3); a loss probe is only scheduled in Open or CWR and leaves
  the state alone (after a probe that repaired a real loss, CWR then Open follow).

CWR (2) is entered only from Open or Disorder (``tcp_enter_cwr`` checks ``ca_state <
TCP_CA_CWR``; ``tcp_process_tlp_ack`` runs in Open), and a retransmission in CWR counts as in
Open, so CWR records (one of the two a repaired probe leaves: CWR, then Open) are filtered out in
the kernel.

So a retransmission is classified by the socket's congestion state when it is sent: ``rto`` in
Loss (the timer expired: the expiry itself and the retransmits of its loss recovery),
``fast`` in Recovery, ``tlp`` otherwise (Open/CWR/Disorder, where the loss probe is the kernel's
retransmission; a socket first seen mid-recovery counts as Open until its next state record).
``rto_expiries`` counts entries into Loss (tcpi_total_rto on kernels >= 6.7).
With one redo write in flight (packets_out == 1) the probe timeout is 2 x SRTT + the route's
rto_min (the kernel's allowance for a delayed ACK), so on a LAN a TLP repair of a lone write
stalls ~rto_min + 2 RTT, as long as an RTO does: route ``rto_min`` shortens both.  At most one
probe is outstanding (``tlp_high_seq``), so a loss right after a probe-repaired one waits for the
RTO instead: measured here (tests/system/kernel/test_retrans.py, 3 % loss, one 1000-byte write
in flight) about one ~205 ms stall in ten was an RTO, the rest tail-loss probes.

Instances: one per socket, keyed as the `tcp` collector keys it (``LADDR:LPORT>PADDR:PPORT``),
shown for ``KEEP`` seconds after its last event; plus ``host`` (source, lost records).  At most
``MAX_EVENTS`` events per tick are emitted; the counts include them all.  Options: ``ports``,
``peers``, ``direction`` as for `tcp` (the config's Data Guard ports and peers by default) and
``buffer_kb`` (see BUFFER_KB).
"""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
import time
from collections.abc import Mapping
from typing import Any, ClassVar, NamedTuple

from collectors.dgsockets import dg_selection, endpoint
from sgmon.collector import Collector, ConfigError, RawRows, Unavailable
from sgmon.config import rules
from sgmon.config.rules import Rule
from sgmon.contract import RowKind
from sgmon.model import Event, Field, Kind, Rows, Value
from sgmon.readers.tcp_info import TCP_STATES
from sgmon.readers.tracefs import PUMPED, TRACEFS, PumpedTrace, TraceInstance, TraceUnavailable

G, D, T = Kind.GAUGE, Kind.DELTA, Kind.TEXT

RETRANSMIT, CONG_STATE = "tcp/tcp_retransmit_skb", "tcp/tcp_cong_state_set"
CWR, RECOVERY, LOSS = 2, 3, 4
CA_STATES = ("Open", "Disorder", "CWR", "Recovery", "Loss")
"""enum tcp_ca_state, by number."""
KINDS = {"tlp": "tail-loss probe", "rto": "RTO", "fast": "fast retransmit"}
KEEP = 600.0
"""Seconds a socket's row stays after its last event (the analysis cites its last one)."""
MAX_EVENTS = 100
"""Events emitted per tick at most; a storm beyond it is counted, not listed."""
BUFFER_KB = 128
"""Per-CPU ring buffer of the instance by default (option ``buffer_kb``): ~1,700 records, far
more than a tick's worth; when it fills, the oldest are overwritten and counted in ``dropped``."""

BYTE_ORDER = sys.byteorder
"""Ring-buffer records are in the CPU's own byte order (s390x is big-endian)."""
ADDRESSES = ("sport", "dport", "family", "saddr", "daddr", "saddr_v6", "daddr_v6")
"""The socket's fields both events record, one after the other (TP_STORE_ADDRS)."""


class Layout(NamedTuple):
    """Where one event's record keeps what we read (byte offsets, from its format file)."""

    ident: int  # common_type
    start: int  # the ADDRESSES block: record[start:end] names the socket
    end: int
    at: dict[str, int]  # ADDRESSES field -> offset within the block
    value: slice  # cong_state (1 byte) or state (an int)
    err: int | None  # tcp_retransmit_skb's err (kernel >= 6.x), None where absent


def layout(ident: int, fields: Mapping[str, tuple[int, int]], value: str) -> Layout:
    """An event's Layout; KeyError names a field this kernel's record lacks."""
    start = fields["sport"][0]
    end = fields["daddr_v6"][0] + fields["daddr_v6"][1]
    at = {name: fields[name][0] - start for name in ADDRESSES}
    err = fields["err"][0] if "err" in fields else None
    offset, size = fields[value]
    return Layout(ident, start, end, at, slice(offset, offset + size), err)


FIELDS = (
    Field("retransmits", "count", D, "segments retransmitted in the interval (trace events)"),
    Field("tlp", "count", D, "of them tail-loss probes (congestion state not Loss/Recovery)"),
    Field("rto", "count", D, "of them sent in Loss: after an RTO expiry"),
    Field("fast", "count", D, "of them fast retransmits (Recovery)"),
    Field("rto_expiries", "count", D, "RTO expiries: entries into the Loss state", warn=1),
    Field("ca_state", "", T, "congestion state last seen (Open, CWR, Recovery, Loss)"),
    Field("last_at", "s", G, "wall time of the socket's last retransmission (epoch seconds)"),
    Field("last_kind", "", T, "what the last retransmission was: tlp, rto or fast"),
    Field("state", "", T, "TCP state at the last retransmission (ESTAB, ...)"),
    Field("source", "", T, "where the events come from (the trace instance)"),
    Field("dropped", "count", D, "trace records the ring buffer lost in the interval"),
)
_COUNTS = ("retransmits", "tlp", "rto", "fast", "rto_expiries")


def _ca_name(ca: int) -> str:
    return CA_STATES[ca] if ca < len(CA_STATES) else str(ca)


def _failed(rec: bytes, lay: Layout) -> bool:
    """A tcp_retransmit_skb record of an attempt that failed (``err`` set, e.g. -EBUSY while
    the original is still in the host's queue): not a retransmission."""
    return lay.err is not None and rec[lay.err : lay.err + 4] != b"\0\0\0\0"


def socket_label(block: bytes, at: Mapping[str, int]) -> str:
    """``LADDR:LPORT>PADDR:PPORT`` from a record's ADDRESSES block, IPv4-mapped IPv6 shown as
    IPv4, as the `tcp` collector keys its rows."""

    def u16(name: str) -> int:
        return int.from_bytes(block[at[name] : at[name] + 2], BYTE_ORDER)

    if u16("family") == socket.AF_INET6:
        ends = [ipaddress.IPv6Address(block[at[n] : at[n] + 16]) for n in ("saddr_v6", "daddr_v6")]
        src, dst = (str(a.ipv4_mapped or a) for a in ends)
    else:
        src, dst = (
            str(ipaddress.IPv4Address(block[at[n] : at[n] + 4])) for n in ("saddr", "daddr")
        )
    return f"{endpoint(src, u16('sport'))}>{endpoint(dst, u16('dport'))}"


class RetransCollector(Collector):
    """Retransmission and congestion-state tracepoints of the DG sockets, from a private
    trace instance."""

    name = "retrans"
    rows = (RowKind("host", fixed="host"), RowKind("socket", label="item"))
    description = "DG socket retransmissions as kernel events, TLP vs RTO (tracefs, root)"
    option_rules: ClassVar[Mapping[str, Rule]] = {
        "ports": rules.ports,
        "peers": rules.peers,
        "direction": rules.one_of("auto", "out", "in", "both"),
        "buffer_kb": rules.number_in(4, 65536, whole=True),
    }
    fields = FIELDS
    sparse = True
    remote_files: ClassVar[Mapping[str, str]] = {
        f"{TRACEFS}/events/{event}/{name}": "slow"
        for event in (RETRANSMIT, CONG_STATE)
        for name in ("id", "format")
    }
    """The events' record layouts on a host reached over ssh (its pump traces there)."""

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        self.ports, self.peers, self.direction = dg_selection(self.options)
        kb = self.options.get("buffer_kb", BUFFER_KB)
        if isinstance(kb, bool) or not isinstance(kb, int) or not 4 <= kb <= 65536:
            raise ConfigError(f"retrans buffer_kb: {kb!r}; use a number of KB from 4 to 65536")
        self.buffer_kb = kb
        self._nets = [ipaddress.ip_network(p, strict=False) for p in self.peers]
        self._trace: TraceInstance | PumpedTrace | None = None
        self._layouts: tuple[Layout, Layout]
        self._labels: dict[bytes, str | None] = {}  # a record's addresses -> socket
        self._ca: dict[str, int] = {}  # socket -> congestion state last seen
        self._rows: dict[str, dict[str, Value]] = {}  # socket -> its row as of its last event
        self._seen: dict[str, float] = {}  # socket -> monotonic time of its last event
        self._host: dict[str, Value] = {}

    def filter(self) -> str:
        """The kernel-side filter on the DG ports, in the chosen direction."""
        sides = {"out": ("dport",), "in": ("sport",)}.get(self.direction, ("sport", "dport"))
        return " || ".join(f"{side} == {p}" for p in self.ports for side in sides)

    def events(self) -> dict[str, tuple[str, ...]]:
        """The tracepoints and their kernel-side filters, the first the kernel accepts (a
        kernel before 6.x records no ``err``)."""
        ports = self.filter()
        return {
            RETRANSMIT: (f"({ports}) && err == 0", ports),
            CONG_STATE: (f"({ports}) && cong_state != {CWR}", ports),
        }

    def remote_trace(self) -> dict[str, Any]:
        """What a pump traces on a host reached over ssh for this collector (its instance is
        made there: sgmon/remote/pump.py, ``Trace``)."""
        return {
            "events": {k: list(v) for k, v in self.events().items()},
            "buffer_kb": self.buffer_kb,
        }

    def open(self) -> None:
        """Make the trace instance (Unavailable with the reason and the fallback); under a
        pump's mirror, read the one the pump made on the far side."""
        pumped = os.path.isdir(os.path.join(self.root, PUMPED))
        if self.root != "/" and not pumped:
            raise Unavailable(
                f"root = {self.root}: tracepoints are this machine's kernel only (on a host "
                "reached over ssh, its own: the ssh user there needs root, and tracefs)"
            )
        trace = PumpedTrace(self.root) if pumped else TraceInstance(self.events(), self.buffer_kb)
        try:
            trace.open()
        except TraceUnavailable as e:
            raise Unavailable(
                f"{e}; retransmissions come from the tcp collector's counters instead"
            ) from None
        try:
            self._layouts = (
                layout(*trace.format(RETRANSMIT), "state"),
                layout(*trace.format(CONG_STATE), "cong_state"),
            )
        except (OSError, KeyError, ValueError) as e:
            trace.close()
            raise Unavailable(
                f"unknown tcp tracepoint record layout ({e}); retransmissions come from the tcp "
                "collector's counters instead"
            ) from None
        self._trace = trace
        self._host = {"source": f"tracefs {trace.path.rsplit('/', 1)[-1]}", "dropped": 0}
        for name in trace.stale:
            self.emit_event(
                Event(time.time(), self.name, "cleanup", "host", f"removed stale trace {name}")
            )

    def sample(self) -> RawRows:
        """This interval's events, counted per socket; quiet sockets keep their row object."""
        if self._trace is None:
            return {}
        records, lost = self._trace.read()
        now = time.monotonic()
        for label in [k for k, t in self._seen.items() if now - t > KEEP]:
            del self._seen[label]
            self._rows.pop(label, None)
            self._ca.pop(label, None)
        if lost or self._host["dropped"]:
            self._host = {**self._host, "dropped": lost}
        active = self._parse(records, now) if records else set()
        rows: dict[str, Any] = {
            k: row if k in active else self._quiet(k) for k, row in self._rows.items()
        }
        rows["host"] = self._host
        return rows

    def _quiet(self, label: str) -> dict[str, Value]:
        """A socket's row for a tick without events: counts 0, the rest as last seen."""
        row = self._rows[label]
        if any(row[c] for c in _COUNTS):
            row = self._rows[label] = {**row, **dict.fromkeys(_COUNTS, 0)}
        return row

    def _parse(self, records: list[tuple[int, bytes]], now: float) -> set[str]:
        """Count and emit the records of one read; returns the sockets that had any."""
        offset = self._trace.clock_offset() if self._trace is not None else 0.0
        active: set[str] = set()
        emitted = 0
        cong_state = self._layouts[1]
        for ts, rec in records:
            found = self._socket(rec)
            if found is None:
                continue
            lay, label = found
            self._seen[label] = now
            if lay is cong_state:
                self._cong_state(label, rec, lay, active)
            elif not _failed(rec, lay):
                at = ts / 1e9 + offset
                emitted += self._retransmit(label, rec, lay, at, active, emitted < MAX_EVENTS)
        return active

    def _socket(self, rec: bytes) -> tuple[Layout, str] | None:
        """Which event a record is and which socket it names; None for a record of neither
        event, or of a peer outside ``peers``."""
        ident = int.from_bytes(rec[:2], BYTE_ORDER)
        retransmit, cong_state = self._layouts
        lay = retransmit if ident == retransmit.ident else cong_state
        if lay is cong_state and ident != cong_state.ident:
            return None
        block = rec[lay.start : lay.end]
        label = self._labels.get(block, "")
        if label == "":
            label = self._labels[block] = self._label(block, lay)
        return None if label is None else (lay, label)

    def _row(self, label: str, active: set[str]) -> dict[str, Value]:
        """The socket's row for this read: at its first record of the read, its last one with
        the counts at 0."""
        if label in active:
            return self._rows[label]
        was = self._rows.get(label) or {"ca_state": _ca_name(self._ca.get(label, 0))}
        row = self._rows[label] = {**was, **dict.fromkeys(_COUNTS, 0)}
        active.add(label)
        return row

    def _cong_state(self, label: str, rec: bytes, lay: Layout, active: set[str]) -> None:
        """A congestion state change: kept for the next retransmissions, and counted as an
        RTO expiry when it enters Loss (which alone makes a row for a socket without one)."""
        ca = self._ca[label] = int.from_bytes(rec[lay.value], BYTE_ORDER)
        if ca != LOSS and label not in self._rows:
            return
        row = self._row(label, active)
        row["ca_state"] = _ca_name(ca)
        if ca == LOSS:
            row["rto_expiries"] += 1  # type: ignore[operator]

    def _retransmit(
        self, label: str, rec: bytes, lay: Layout, at: float, active: set[str], emit: bool
    ) -> int:
        """A retransmission, told apart by the congestion state it was sent in: counted, and
        with ``emit`` an event; the number of events emitted (0 or 1)."""
        row = self._row(label, active)
        ca = self._ca.get(label, 0)
        kind = "rto" if ca == LOSS else "fast" if ca == RECOVERY else "tlp"
        state = int.from_bytes(rec[lay.value], BYTE_ORDER)
        tcp_state = TCP_STATES[state] if state < len(TCP_STATES) else str(state)
        row["retransmits"] += 1  # type: ignore[operator]
        row[kind] += 1  # type: ignore[operator]
        row["last_at"], row["last_kind"], row["state"] = at, kind, tcp_state
        if not emit:
            return 0
        text = f"retransmit {label}: {KINDS[kind]} ({tcp_state}, congestion {_ca_name(ca)})"
        self._events.append(Event(at, self.name, "retransmit", label, text))
        return 1

    def _label(self, block: bytes, lay: Layout) -> str | None:
        """The socket a record names, None for a peer outside ``peers``."""
        label = socket_label(block, lay.at)
        peer = label.rsplit(">", 1)[1].rsplit(":", 1)[0].strip("[]")
        if self._nets and not any(ipaddress.ip_address(peer) in n for n in self._nets):
            return None
        if len(self._labels) > 4096:  # many short-lived sockets: start the cache afresh
            self._labels.clear()
        return label

    def derive(self, prev: RawRows | None, cur: RawRows, dt: float) -> Rows:
        """The raw rows already hold the interval's counts: copied as they are."""
        return {k: dict(row) for k, row in cur.items()}

    def close(self) -> None:
        """Remove the trace instance and every setting made (idempotent)."""
        if self._trace is not None:
            self._trace.close()
            self._trace = None
