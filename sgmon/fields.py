"""Typed references to the built-in collectors' fields and row kinds, generated from
their declarations by ``python -m sgmon.contract`` (do not edit: a unit test fails when
this file differs from what the declarations make).  See ``sgmon/contract.py``."""

from __future__ import annotations

from typing import ClassVar, Final

from sgmon.contract import Hist, Num, RowKind, Text


class CPU:
    """``cpu``: CPU utilisation per CPU (mpstat -P ALL) and run queue (sar -q)"""

    name: ClassVar[str] = "cpu"
    usr: Final = Num("cpu", "usr")
    nice: Final = Num("cpu", "nice")
    sys: Final = Num("cpu", "sys")
    iowait: Final = Num("cpu", "iowait")
    irq: Final = Num("cpu", "irq")
    soft: Final = Num("cpu", "soft")
    steal: Final = Num("cpu", "steal")
    guest: Final = Num("cpu", "guest")
    gnice: Final = Num("cpu", "gnice")
    idle: Final = Num("cpu", "idle")
    load1: Final = Num("cpu", "load1")
    load5: Final = Num("cpu", "load5")
    load15: Final = Num("cpu", "load15")
    runq_sz: Final = Num("cpu", "runq_sz")
    plist_sz: Final = Num("cpu", "plist_sz")
    blocked: Final = Num("cpu", "blocked")
    cswch: Final = Num("cpu", "cswch")
    intr: Final = Num("cpu", "intr")

    class Rows:
        """The kinds of ``cpu``'s rows."""

        all: Final = RowKind("all", fixed="all")
        cpu: Final = RowKind("cpu", label="cpu", on_request=True, others=("all",))


class PAGING:
    """``paging``: paging and swapping (sar -B, sar -W), memory used, PSI"""

    name: ClassVar[str] = "paging"
    pgpgin: Final = Num("paging", "pgpgin")
    pgpgout: Final = Num("paging", "pgpgout")
    fault: Final = Num("paging", "fault")
    majflt: Final = Num("paging", "majflt")
    pgfree: Final = Num("paging", "pgfree")
    pgscank: Final = Num("paging", "pgscank")
    pgscand: Final = Num("paging", "pgscand")
    pgsteal: Final = Num("paging", "pgsteal")
    pswpin: Final = Num("paging", "pswpin")
    pswpout: Final = Num("paging", "pswpout")
    memused: Final = Num("paging", "memused")
    swpused: Final = Num("paging", "swpused")
    psi_cpu_some: Final = Num("paging", "psi_cpu_some")
    psi_mem_some: Final = Num("paging", "psi_mem_some")
    psi_mem_full: Final = Num("paging", "psi_mem_full")
    psi_io_some: Final = Num("paging", "psi_io_some")
    psi_io_full: Final = Num("paging", "psi_io_full")

    class Rows:
        """The kinds of ``paging``'s rows."""

        all: Final = RowKind("all", fixed="all")


class DISK:
    """``disk``: block device latency, queue and utilisation (iostat -x)"""

    name: ClassVar[str] = "disk"
    r_s: Final = Num("disk", "r_s")
    w_s: Final = Num("disk", "w_s")
    rkb_s: Final = Num("disk", "rkb_s")
    wkb_s: Final = Num("disk", "wkb_s")
    rrqm_s: Final = Num("disk", "rrqm_s")
    wrqm_s: Final = Num("disk", "wrqm_s")
    r_await: Final = Num("disk", "r_await")
    w_await: Final = Num("disk", "w_await")
    aqu_sz: Final = Num("disk", "aqu_sz")
    rareq_sz: Final = Num("disk", "rareq_sz")
    wareq_sz: Final = Num("disk", "wareq_sz")
    util: Final = Num("disk", "util")
    svctm: Final = Num("disk", "svctm")

    class Rows:
        """The kinds of ``disk``'s rows."""

        device: Final = RowKind("device", label="device")


class NETDEV:
    """``netdev``: interface throughput, errors, drops, overruns (ip -s link, sar -n DEV/EDEV)"""

    name: ClassVar[str] = "netdev"
    rx_kb: Final = Num("netdev", "rx_kb")
    tx_kb: Final = Num("netdev", "tx_kb")
    rx_pkt: Final = Num("netdev", "rx_pkt")
    tx_pkt: Final = Num("netdev", "tx_pkt")
    rx_err: Final = Num("netdev", "rx_err")
    tx_err: Final = Num("netdev", "tx_err")
    rx_drop: Final = Num("netdev", "rx_drop")
    tx_drop: Final = Num("netdev", "tx_drop")
    rx_overrun: Final = Num("netdev", "rx_overrun")
    rx_fifo: Final = Num("netdev", "rx_fifo")
    tx_fifo: Final = Num("netdev", "tx_fifo")
    carrier_changes: Final = Num("netdev", "carrier_changes")
    speed: Final = Num("netdev", "speed")
    util: Final = Num("netdev", "util")
    operstate: Final = Text("netdev", "operstate")

    class Rows:
        """The kinds of ``netdev``'s rows."""

        interface: Final = RowKind("interface", label="device")


class TCP:
    """``tcp``: Data Guard TCP sockets: rto, rtt, retransmits, buffers (ss -tinmp)"""

    name: ClassVar[str] = "tcp"
    state: Final = Text("tcp", "state")
    local: Final = Text("tcp", "local")
    peer: Final = Text("tcp", "peer")
    rto: Final = Num("tcp", "rto")
    rtt: Final = Num("tcp", "rtt")
    rttvar: Final = Num("tcp", "rttvar")
    cwnd: Final = Num("tcp", "cwnd")
    ssthresh: Final = Num("tcp", "ssthresh")
    unacked: Final = Num("tcp", "unacked")
    lost: Final = Num("tcp", "lost")
    retrans: Final = Num("tcp", "retrans")
    retransmits: Final = Num("tcp", "retransmits")
    bytes_acked: Final = Num("tcp", "bytes_acked")
    bytes_received: Final = Num("tcp", "bytes_received")
    send_q: Final = Num("tcp", "send_q")
    recv_q: Final = Num("tcp", "recv_q")
    sndbuf: Final = Num("tcp", "sndbuf")
    rcvbuf: Final = Num("tcp", "rcvbuf")
    delivery_rate: Final = Num("tcp", "delivery_rate")
    pid: Final = Num("tcp", "pid")
    process: Final = Text("tcp", "process")
    rto_min: Final = Num("tcp", "rto_min")
    active_opens: Final = Num("tcp", "active_opens")
    passive_opens: Final = Num("tcp", "passive_opens")
    retrans_segs: Final = Num("tcp", "retrans_segs")
    timeouts: Final = Num("tcp", "timeouts")
    lost_retransmit: Final = Num("tcp", "lost_retransmit")
    rmem_max: Final = Num("tcp", "rmem_max")
    wmem_max: Final = Num("tcp", "wmem_max")
    tcp_rmem_max: Final = Num("tcp", "tcp_rmem_max")
    tcp_wmem_max: Final = Num("tcp", "tcp_wmem_max")

    class Rows:
        """The kinds of ``tcp``'s rows."""

        host: Final = RowKind("host", fixed="host")
        socket: Final = RowKind("socket", label="socket", others=("host",))


class PROCS:
    """``procs``: Oracle commit-path processes: CPU, run-queue delay, I/O wait, state"""

    name: ClassVar[str] = "procs"
    pid: Final = Num("procs", "pid")
    cpu: Final = Num("procs", "cpu")
    runq: Final = Num("procs", "runq")
    io_delay: Final = Num("procs", "io_delay")
    state: Final = Text("procs", "state")
    wchan: Final = Text("procs", "wchan")
    vcsw: Final = Num("procs", "vcsw")
    nvcsw: Final = Num("procs", "nvcsw")
    read_kb: Final = Num("procs", "read_kb")
    write_kb: Final = Num("procs", "write_kb")

    class Rows:
        """The kinds of ``procs``'s rows."""

        process: Final = RowKind("process", label="process")


class BIOLAT:
    """``biolat``: redo devices' I/O latency histogram, p50/p99/max (libbpf-tools biolatency)"""

    name: ClassVar[str] = "biolat"
    lat: Final = Hist("biolat", "lat")
    ios: Final = Num("biolat", "ios")
    intervals: Final = Num("biolat", "intervals")
    p50: Final = Num("biolat", "p50")
    p99: Final = Num("biolat", "p99")
    max: Final = Num("biolat", "max")

    class Rows:
        """The kinds of ``biolat``'s rows."""

        device: Final = RowKind("device", label="item")


class RETRANS:
    """``retrans``: DG socket retransmissions as kernel events, TLP vs RTO (tracefs, root)"""

    name: ClassVar[str] = "retrans"
    retransmits: Final = Num("retrans", "retransmits")
    tlp: Final = Num("retrans", "tlp")
    rto: Final = Num("retrans", "rto")
    fast: Final = Num("retrans", "fast")
    rto_expiries: Final = Num("retrans", "rto_expiries")
    ca_state: Final = Text("retrans", "ca_state")
    last_at: Final = Num("retrans", "last_at")
    last_kind: Final = Text("retrans", "last_kind")
    state: Final = Text("retrans", "state")
    source: Final = Text("retrans", "source")
    dropped: Final = Num("retrans", "dropped")

    class Rows:
        """The kinds of ``retrans``'s rows."""

        host: Final = RowKind("host", fixed="host")
        socket: Final = RowKind("socket", label="item", others=("host",))


class ORACLE_WAITS:
    """``oracle_waits``: Oracle wait events of the SYNC commit path, with interval histograms"""

    name: ClassVar[str] = "oracle_waits"
    waits: Final = Num("oracle_waits", "waits")
    time_waited: Final = Num("oracle_waits", "time_waited")
    avg: Final = Num("oracle_waits", "avg")
    hist: Final = Hist("oracle_waits", "hist")
    p50: Final = Num("oracle_waits", "p50")
    p90: Final = Num("oracle_waits", "p90")
    p99: Final = Num("oracle_waits", "p99")
    max_bucket: Final = Num("oracle_waits", "max_bucket")

    class Rows:
        """The kinds of ``oracle_waits``'s rows."""

        event: Final = RowKind("event", label="event")


class ORACLE_REDO:
    """``oracle_redo``: Oracle redo and commit statistics per second (V$SYSSTAT)"""

    name: ClassVar[str] = "oracle_redo"
    redo_size: Final = Num("oracle_redo", "redo_size")
    redo_writes: Final = Num("oracle_redo", "redo_writes")
    redo_write_size: Final = Num("oracle_redo", "redo_write_size")
    redo_write_time: Final = Num("oracle_redo", "redo_write_time")
    redo_synch_writes: Final = Num("oracle_redo", "redo_synch_writes")
    redo_synch_time: Final = Num("oracle_redo", "redo_synch_time")
    user_commits: Final = Num("oracle_redo", "user_commits")
    user_rollbacks: Final = Num("oracle_redo", "user_rollbacks")
    redo_size_lwd: Final = Num("oracle_redo", "redo_size_lwd")
    phys_reads_cache: Final = Num("oracle_redo", "phys_reads_cache")
    redo_synch_polls: Final = Num("oracle_redo", "redo_synch_polls")
    redo_synch_poll_writes: Final = Num("oracle_redo", "redo_synch_poll_writes")
    redo_synch_overhead: Final = Num("oracle_redo", "redo_synch_overhead")
    redo_bcast_ack: Final = Num("oracle_redo", "redo_bcast_ack")

    class Rows:
        """The kinds of ``oracle_redo``'s rows."""

        db: Final = RowKind("db", fixed="db")


class ORACLE_DG:
    """``oracle_dg``: Oracle Data Guard state, destinations, lags, log switches"""

    name: ClassVar[str] = "oracle_dg"
    role: Final = Text("oracle_dg", "role")
    protection_mode: Final = Text("oracle_dg", "protection_mode")
    protection_level: Final = Text("oracle_dg", "protection_level")
    open_mode: Final = Text("oracle_dg", "open_mode")
    switchover_status: Final = Text("oracle_dg", "switchover_status")
    version: Final = Text("oracle_dg", "version")
    db_unique_name: Final = Text("oracle_dg", "db_unique_name")
    instance_name: Final = Text("oracle_dg", "instance_name")
    inst_id: Final = Num("oracle_dg", "inst_id")
    thread: Final = Num("oracle_dg", "thread")
    transport_lag: Final = Num("oracle_dg", "transport_lag")
    apply_lag: Final = Num("oracle_dg", "apply_lag")
    lag_datum: Final = Text("oracle_dg", "lag_datum")
    lag_unknown: Final = Num("oracle_dg", "lag_unknown")
    datum_age: Final = Num("oracle_dg", "datum_age")
    apply_state: Final = Text("oracle_dg", "apply_state")
    valid_now: Final = Text("oracle_dg", "valid_now")
    archived_thread: Final = Num("oracle_dg", "archived_thread")
    archive_gap: Final = Text("oracle_dg", "archive_gap")
    target: Final = Text("oracle_dg", "target")
    service: Final = Text("oracle_dg", "service")
    valid_role: Final = Text("oracle_dg", "valid_role")
    dest_type: Final = Text("oracle_dg", "dest_type")
    archived_seq: Final = Num("oracle_dg", "archived_seq")
    transmit_mode: Final = Text("oracle_dg", "transmit_mode")
    affirm: Final = Text("oracle_dg", "affirm")
    status: Final = Text("oracle_dg", "status")
    error: Final = Text("oracle_dg", "error")
    gap_status: Final = Text("oracle_dg", "gap_status")
    net_timeout: Final = Num("oracle_dg", "net_timeout")
    resp_hist: Final = Hist("oracle_dg", "resp_hist")
    resp_p99: Final = Num("oracle_dg", "resp_p99")
    log_switches: Final = Num("oracle_dg", "log_switches")
    sequence: Final = Num("oracle_dg", "sequence")
    srl_in_use: Final = Num("oracle_dg", "srl_in_use")
    recv_seq: Final = Num("oracle_dg", "recv_seq")
    recv_rate: Final = Num("oracle_dg", "recv_rate")
    thread_lag: Final = Num("oracle_dg", "thread_lag")

    class Rows:
        """The kinds of ``oracle_dg``'s rows."""

        db: Final = RowKind("db", fixed="db")
        dest: Final = RowKind("dest", label="dest", prefix="dest_")
        thread: Final = RowKind("thread", label="thread", prefix="thread_")


class ORACLE_TRACE:
    """``oracle_trace``: LGWR slow-write warnings and NSS/RFS msgid splits from trace files"""

    name: ClassVar[str] = "oracle_trace"
    slow_writes: Final = Num("oracle_trace", "slow_writes")
    max_write: Final = Num("oracle_trace", "max_write")
    polling: Final = Num("oracle_trace", "polling")
    broadcast_waits: Final = Num("oracle_trace", "broadcast_waits")
    max_broadcast: Final = Num("oracle_trace", "max_broadcast")
    splits: Final = Num("oracle_trace", "splits")
    max_network: Final = Num("oracle_trace", "max_network")
    max_rfs: Final = Num("oracle_trace", "max_rfs")

    class Rows:
        """The kinds of ``oracle_trace``'s rows."""

        process: Final = RowKind("process", label="process")
