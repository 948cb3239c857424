"""OS rows of the simulated hosts, consistent with the commit path of the same interval.

Each collector's declared fields (``collectors/*.py``) get frame values directly (rates per
second, iostat-style averages), derived from the interval's ``TickStats``: the primary's redo
device carries the LGWR writes, the standby's the RFS writes into the SRLs (and, in the IOPS-cap
scenario, the lost-write-protect reads queueing in front of them), both DG interfaces carry the
redo, and the DG socket shows the RTO and the retransmissions behind the remote-write outliers.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from sgmon.model import Rows, number
from sgmon.sim.interval import TickStats
from sgmon.sim.scenarios import Conditions

NCPU = 8
PRIMARY_ADDR, STANDBY_ADDR, NSS_PORT, DG_PORT = "10.0.1.1", "10.0.1.2", 40312, 1521
Link = tuple[str, int, TickStats]
"""One socket's far end and load: the sender's address and port (on a standby), what it shipped."""
Send = tuple[str, int, str]
"""A socket a host ships redo over that no commit waits for: (receiver's address, local port,
sending process), e.g. the primary's TT00 to an ASYNC standby."""
ProcSpec = tuple[int, float, bool, TickStats]
"""A process: its pid, the share of a CPU it runs at, whether it runs per write, and the
interval it works on."""
NSS_PID, RFS_PID = 4242, 5151
"""The processes at the two ends of the DG socket (its owner in ``tcp``, a row in ``procs``)."""


class HostOS:
    """One simulated host's OS rows, tick by tick (load averages carry over)."""

    def __init__(
        self,
        role: str,
        rng: random.Random,
        addr: str | None = None,
        sid: str = "PROD",
        peer: str = STANDBY_ADDR,
        sender: str = "nss2",
        sends: Sequence[Send] = (),
    ) -> None:
        """``addr``: the host's DG address (RAC nodes each have their own); ``sid``: the
        primary instance's name, in its NSS process name; ``peer``: a primary's SYNC standby;
        ``sender``: the process shipping SYNC (``nss2``, 11.2's ``lns1``); ``sends``: its
        other outgoing DG sockets (ASYNC destinations, a cascading standby's onward one)."""
        self.peer = peer
        self.sender = sender
        self.sends = tuple(sends)
        self.role = role
        self.rng = rng
        self.sid = sid
        self.load = [2.6, 2.5, 2.4]
        self.primary = role == "primary"
        self.addr = addr or (PRIMARY_ADDR if self.primary else STANDBY_ADDR)
        self.procs_rng = random.Random(f"sgmon-sim/procs/{role}")
        """The process rows' own jitter, so adding them left every other series as it was."""

    def rows(
        self,
        st: TickStats,
        c: Conditions,
        dt: float,
        links: Sequence[Link] = (),
    ) -> dict[str, Rows]:
        """Frame rows of cpu, paging, disk, netdev and tcp for this interval; ``links``: a
        standby's senders (address, port, what each shipped), one socket each (RAC: one per
        instance), else one from the single primary."""
        return {
            "cpu": self._cpu(st, c, dt),
            "paging": self._paging(),
            "disk": self._disk(st, c, dt),
            "netdev": self._netdev(st, dt, c),
            "tcp": self._tcp(st, c, dt, links),
            "procs": self._procs(st, c, dt, links),
        }

    def _j(self, v: float, spread: float = 0.08) -> float:
        return v * (1 - spread + 2 * spread * self.rng.random())

    def _cpu(self, st: TickStats, c: Conditions, dt: float) -> Rows:
        busy = c.cpu_busy if self.primary else 0.12 + (0.1 if c.standby_cap else 0.0)
        runq = (c.runq_extra if self.primary else 0.0) + self._j(busy * NCPU * 0.3, 0.3)
        running = busy * NCPU + runq
        for i, span in enumerate((60.0, 300.0, 900.0)):
            k = math.exp(-dt / span)
            self.load[i] = self.load[i] * k + running * (1 - k)
        iowait = 0.5 if self.primary else (9.0 if c.standby_cap else 0.8)
        rows: Rows = {}
        for name in ["all", *(f"cpu{i}" for i in range(NCPU))]:
            b = min(99.9, self._j(busy * 100, 0.03 if name == "all" else 0.12))
            sys_ = b * 0.16
            usr = b - sys_ - 1.0
            idle = max(0.0, 100.0 - b - iowait)
            rows[name] = {
                "usr": round(usr, 2), "nice": 0.0, "sys": round(sys_, 2),
                "iowait": round(min(iowait, 100 - b), 2), "irq": 0.2, "soft": 0.8,
                "steal": 0.0, "guest": 0.0, "gnice": 0.0, "idle": round(idle, 2),
            }  # fmt: skip
        rows["all"].update(
            load1=round(self.load[0], 2),
            load5=round(self.load[1], 2),
            load15=round(self.load[2], 2),
            runq_sz=round(runq),
            plist_sz=1450 if self.primary else 820,
            blocked=round(self._j(4.0 if c.standby_cap and not self.primary else 0.4, 0.5)),
            cswch=round(self._j(18000 + st.commits * 12)),
            intr=round(self._j(9000 + st.writes * 3)),
        )
        return rows

    def _paging(self) -> Rows:
        return {
            "all": {
                "pgpgin": round(self._j(120.0, 0.5), 1), "pgpgout": round(self._j(900.0, 0.3), 1),
                "fault": round(self._j(5200.0)), "majflt": round(self._j(0.4, 1.0), 2),
                "pgfree": round(self._j(8000.0)), "pgscank": 0.0, "pgscand": 0.0, "pgsteal": 0.0,
                "pswpin": 0.0, "pswpout": 0.0, "memused": round(self._j(71.0, 0.01), 2),
                "swpused": 0.4, "psi_cpu_some": 0.0, "psi_mem_some": 0.0, "psi_mem_full": 0.0,
                "psi_io_some": 0.3, "psi_io_full": 0.1,
            }
        }  # fmt: skip

    def _disk(self, st: TickStats, c: Conditions, dt: float) -> Rows:
        writes = st.writes / dt
        kb = st.redo_bytes / 1024 / dt
        if self.primary:
            await_ = st.local_ms / st.writes if st.writes else 0.0
            redo = _dev(0.0, writes, 0.0, kb, 0.0, await_, svctm=await_ * 0.85)
            data_r = st.reads_cache / dt
            # the primary's volume serves its reads in parallel, far below its IOPS (seed 003:
            # the primary's storage had much more than the standbys'; no relevant load there)
            fast = min(1.0, 1000.0 / max(data_r, 1.0))  # many devices: %util stays low
            data = _dev(
                data_r,
                self._j(120.0),
                data_r * 8,
                self._j(3800.0),
                0.9 * max(fast, 0.28),
                1.4,
                0.35 * fast,
            )
        elif c.standby_cap and st.capped > 0.0:
            # recovery's reads keep the queue deep; the more of the second in a burst, deeper:
            # 41-82 over a second, a whole second in a burst among them (seed 003's ten-minute
            # rows at %util 100: aqu-sz 54-87)
            q = self._j(c.standby_queue * (0.75 + 0.35 * st.capped), 0.15)
            r = self._j(640.0, 0.15)
            total = r + writes
            svctm = min(1.55, 1000.0 / max(total, 1.0))  # the volume's cap: ~650-900 IOPS
            await_ = q / max(total, 1.0) * 1000.0
            redo = _dev(r, writes, r * 190, kb, await_, await_, svctm=svctm, aqu=q, util=100.0)
            data = _dev(self._j(40.0), self._j(60.0), 320.0, 1900.0, 1.1, 1.6, svctm=0.4)
        elif c.standby_cap:  # between two bursts of recovery's reads: a short queue
            r = self._j(160.0, 0.3)
            await_ = st.rfs_ms / st.writes if st.writes else 0.0
            redo = _dev(r, writes, r * 190, kb, 1.2, await_, svctm=0.9, aqu=self._j(0.8, 0.3))
            data = _dev(self._j(40.0), self._j(60.0), 320.0, 1900.0, 1.1, 1.6, svctm=0.4)
        else:
            await_ = st.rfs_ms / st.writes if st.writes else 0.0
            redo = _dev(self._j(6.0), writes, 48.0, kb, 0.6, await_, svctm=await_ * 0.85)
            chk = st.switches * 4000.0 / dt  # the standby checkpoint after a switch (seed 000)
            data = _dev(self._j(30.0), self._j(80.0) + chk, 240.0, 2500 + chk * 8, 0.9, 1.5, 0.4)
        sys_ = _dev(self._j(1.0, 0.5), self._j(6.0, 0.5), 12.0, 60.0, 0.4, 0.8, svctm=0.3)
        return {"sda": sys_, "sdb": redo, "sdc": data}

    def _procs(self, st: TickStats, c: Conditions, dt: float, links: Sequence[Link]) -> Rows:
        """The commit path's processes: a CPU-starved primary keeps LGWR and its workers
        runnable but waiting (run-queue delay), a capped standby keeps RFS in D on its writes.
        A standby has one RFS per sender (RAC: one per primary instance, each receiving its own
        thread over its own socket), with that sender's writes."""
        queued = self._queued(c)
        return {
            name: self._proc(name, spec, st.unacked, c, dt, queued)
            for name, spec in self._proc_table(st, links).items()
        }

    def _queued(self, c: Conditions) -> float:
        """Runnable processes per CPU beyond one."""
        if self.primary:
            busy, extra = c.cpu_busy, c.runq_extra
        else:
            busy, extra = 0.12 + (0.1 if c.standby_cap else 0.0), 0.0
        return max(0.0, (busy * NCPU + extra - NCPU) / NCPU)

    def _proc_table(self, st: TickStats, links: Sequence[Link]) -> dict[str, ProcSpec]:
        """The processes of this host, each with what it works on: a standby's RFS each its
        sender's interval, the others the host's."""
        if self.primary:
            return {name: (*spec, st) for name, spec in PRIMARY_PROCS.items()}
        table: dict[str, ProcSpec] = {}
        for i, (_addr, _port, ls) in enumerate(links or (("", 0, st),)):
            table[f"RFS[{RFS_PID + i}]"] = (RFS_PID + i, RFS_SHARE, True, ls)
        table.update({name: (*spec, st) for name, spec in STANDBY_PROCS.items()})
        return table

    def _proc(
        self, name: str, spec: ProcSpec, unacked: int, c: Conditions, dt: float, queued: float
    ) -> dict:
        """One process's row."""
        j = self.procs_rng
        pid, share, per_write, own = spec
        writes = own.writes / dt
        demand = share * (0.5 + writes / 800.0 if per_write else 1.0)
        runq = 1000.0 * demand * queued + j.uniform(0.02, 0.4)
        state, wchan, io_ms = self._proc_state(name, own, unacked, c, dt, queued)
        return {
            "pid": pid,
            "cpu": round(min(100.0, 100.0 * demand * (1 + j.uniform(-0.1, 0.1))), 2),
            "runq": round(runq, 2),
            "io_delay": round(io_ms, 1),
            "state": state,
            "wchan": wchan,
            "vcsw": round(writes if per_write else 5.0 + j.uniform(0, 2), 1),
            "nvcsw": round(runq / 4.0 + j.uniform(0, 1), 1),
            "read_kb": 0.0,
            "write_kb": round(own.redo_bytes / 1024 / dt, 1) if name == "LGWR" else 0.0,
        }

    def _proc_state(
        self, name: str, own: TickStats, unacked: int, c: Conditions, dt: float, queued: float
    ) -> tuple[str, str | None, float]:
        """A process's state, what it waits in, and its time in I/O (ms a second): runnable
        half the time on a starved CPU, NSS asleep on its socket while a write waits for the
        standby's ack, RFS in its SRL writes."""
        io_ms = 0.0
        state = "R" if queued > 1 and self.procs_rng.random() < 0.5 else "S"
        wchan = None
        if name.startswith("NSS") and unacked:
            state = "S"  # asleep on its socket, waiting for the standby's ack
        if name.startswith("RFS"):
            io_ms = min(1000.0, own.rfs_ms / dt)  # time in its SRL writes
            if c.standby_cap and io_ms > 500:
                state, wchan = "D", "blk_mq_get_tag"  # queued for a tag of the capped device
        return state, wchan, io_ms

    def _netdev(self, st: TickStats, dt: float, c: Conditions) -> Rows:
        kb = st.redo_bytes / 1024 / dt
        pkts = st.redo_bytes / 1448 / dt + st.writes / dt
        out, inn = (kb * 1.02, st.writes / dt * 0.1) if self.primary else (st.writes / dt * 0.1, kb)
        tx_pkt, rx_pkt = (pkts, st.writes / dt) if self.primary else (st.writes / dt, pkts)
        speed = round(c.link_mbit)  # the host's NICs alike
        dg = _nic(inn, out, rx_pkt, tx_pkt, speed)
        pub = _nic(self._j(2400.0), self._j(5100.0), self._j(9000.0), self._j(8700.0), speed)
        return {"eth0": pub, "eth1": dg}

    def _tcp(self, st: TickStats, c: Conditions, dt: float, links: Sequence[Link]) -> Rows:
        """The DG sockets (a primary's NSS, a standby's RFS per sender), the sockets shipping
        redo no commit waits for, and the host's retransmission counters."""
        out: Rows = {}
        losses = 0
        for i, link in enumerate(self._dg_links(st, c, links)):
            if self.primary:
                inst, out[inst], lost = self._nss_socket(link, c, dt)
                losses += lost
            else:
                inst, out[inst] = self._rfs_socket(i, link, c, dt)
        for i, (peer_addr, port, proc) in enumerate(self.sends):
            inst = f"{self.addr}:{port}>{peer_addr}:{DG_PORT}"
            rate = st.redo_bytes / dt  # the same redo, shipped without a commit waiting
            out[inst] = self._socket(
                inst, c, self._j(c.rtt_ms, 0.2), rate, 0.0, NSS_PID + 1 + i, proc
            )
        losses += st.losses if self.primary else 0
        out["host"] = {
            "retrans_segs": round(losses / dt + self._j(0.2, 1.0), 2),
            "timeouts": round(losses / dt, 2),
            "lost_retransmit": 0.0,
        }
        return out

    def _dg_links(self, st: TickStats, c: Conditions, links: Sequence[Link]) -> Sequence[Link]:
        """The DG sockets' far ends: a primary's SYNC standby (none once LGWR gave up on a
        silent link at NET_TIMEOUT: NSS closed its socket), a standby's senders."""
        if self.primary:
            return () if c.link_down and not st.silent_s else ((self.peer, DG_PORT, st),)
        return links or ((PRIMARY_ADDR, NSS_PORT, st),)

    def _nss_socket(self, link: Link, c: Conditions, dt: float) -> tuple[str, dict, int]:
        """A primary's NSS socket to its standby: its instance, its row, and the segments the
        kernel resent on it this interval while the standby was silent."""
        peer_addr, port, ls = link
        rtt = self._j(c.rtt_ms, 0.2)
        inst = f"{self.addr}:{NSS_PORT}>{peer_addr}:{port}"
        proc = f"ora_{self.sender}_{self.sid}"
        row = self._socket(inst, c, rtt, ls.redo_bytes / dt, ls.writes * 64 / dt, NSS_PID, proc)
        row.update(unacked=ls.unacked, retrans=1 if ls.losses else 0, retransmits=ls.losses)
        if not ls.silent_s:
            return inst, row, 0
        silent = _backoff(number(row["rto"]) or 0.0, ls.silent_s, dt, ls.unacked)
        row.update(silent)
        return inst, row, silent["retransmits"]

    def _rfs_socket(self, i: int, link: Link, c: Conditions, dt: float) -> tuple[str, dict]:
        """A standby's RFS socket to its ``i``-th sender: nothing crosses a link that is down."""
        peer_addr, port, ls = link
        rtt = self._j(c.rtt_ms, 0.2)
        inst = f"{self.addr}:{DG_PORT}>{peer_addr}:{port}"
        acked, received = ls.writes * 64 / dt, ls.redo_bytes / dt
        if c.link_down:  # nothing reaches it, nothing it sends arrives
            acked = received = 0.0
        return inst, self._socket(inst, c, rtt, acked, received, RFS_PID + i, "oraclePRODSTBY")

    @staticmethod
    def _socket(
        inst: str, c: Conditions, rtt: float, acked: float, received: float, pid: int, proc: str
    ) -> dict:
        """One established DG socket's ss row, nothing lost or in flight."""
        local, peer = inst.split(">")
        return {
            "state": "ESTAB", "local": local, "peer": peer,
            "rto": round(c.rto_min_ms + rtt + (4 if c.rto_min_ms >= 200 else 1)),
            "rtt": round(rtt, 3), "rttvar": round(rtt / 2, 3), "cwnd": 10, "ssthresh": None,
            "unacked": 0, "lost": 0, "retrans": 0, "retransmits": 0, "bytes_acked": round(acked),
            "bytes_received": round(received), "send_q": 0, "recv_q": 0,
            "sndbuf": 4194304, "rcvbuf": 6291456,
            "delivery_rate": round(max(acked, received) * 1.6),
            "pid": pid, "process": proc, "rto_min": c.rto_min_ms if c.rto_min_ms != 200.0 else None,
        }  # fmt: skip


PRIMARY_PROCS = {  # name: (pid, share of a CPU it runs at, runs per write?)
    "LGWR": (4101, 0.04, True), "LG00": (4102, 0.015, True), "LG01": (4103, 0.015, True),
    "NSS2": (NSS_PID, 0.02, True), "TT00": (4105, 0.002, False), "ARC0": (4106, 0.003, False),
    "CKPT": (4107, 0.002, False), "DBW0": (4108, 0.01, False),
}  # fmt: skip
RFS_SHARE = 0.02
"""Share of a CPU an RFS process runs at (each sender's; named ``RFS[<pid>]`` as V$PROCESS)."""
STANDBY_PROCS = {
    "MRP0": (5201, 0.03, False),
    "PR00": (5202, 0.02, False), "PR01": (5203, 0.02, False), "ARC0": (5204, 0.003, False),
}  # fmt: skip


def _backoff(rto: float, silent: float, dt: float, unacked: int) -> dict:
    """A socket whose peer went silent ``silent`` seconds ago, at the interval's end: its RTO
    doubles at each expiry (the kernel's exponential backoff, up to 120 s), each expiry resends
    the first unacknowledged segment, and nothing is acknowledged."""
    expiries, at, now = [], rto / 1000.0, rto
    while at <= silent:
        expiries.append(at)
        now = min(now * 2, 120000.0)
        at += now / 1000.0
    return {
        "rto": round(now),
        "retransmits": sum(1 for t in expiries if t > silent - dt),
        "retrans": 1 if expiries else 0,
        "lost": unacked if expiries else 0,
        "bytes_acked": 0,
        "delivery_rate": 0,
    }


def _dev(
    r: float,
    w: float,
    rkb: float,
    wkb: float,
    r_await: float,
    w_await: float,
    svctm: float,
    aqu: float | None = None,
    util: float | None = None,
) -> dict:
    iops = r + w
    if aqu is None:
        aqu = (r * r_await + w * w_await) / 1000.0
    if util is None:
        util = min(100.0, iops * svctm / 10.0)
    return {
        "r_s": round(r, 2), "w_s": round(w, 2), "rkb_s": round(rkb, 1), "wkb_s": round(wkb, 1),
        "rrqm_s": 0.0, "wrqm_s": round(w * 0.02, 2), "r_await": round(r_await, 3),
        "w_await": round(w_await, 3), "aqu_sz": round(aqu, 2),
        "rareq_sz": round(rkb / r, 2) if r else 0.0, "wareq_sz": round(wkb / w, 2) if w else 0.0,
        "util": round(util, 2), "svctm": round(svctm, 3),
    }  # fmt: skip


def _nic(rx_kb: float, tx_kb: float, rx_pkt: float, tx_pkt: float, speed: int) -> dict:
    util = max(rx_kb, tx_kb) * 8 / 1000 / speed * 100
    return {
        "rx_kb": round(rx_kb, 1), "tx_kb": round(tx_kb, 1), "rx_pkt": round(rx_pkt, 1),
        "tx_pkt": round(tx_pkt, 1), "rx_err": 0.0, "tx_err": 0.0, "rx_drop": 0.0, "tx_drop": 0.0,
        "rx_overrun": 0.0, "rx_fifo": 0.0, "tx_fifo": 0.0, "carrier_changes": 0,
        "speed": speed, "util": round(util, 3), "operstate": "up",
    }  # fmt: skip
