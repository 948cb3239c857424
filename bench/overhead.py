"""CPU and peak RSS per 1 Hz sample of sgmon's whole collector set, next to the alternatives.

In ONE run, all at once and over the same window, with 2,000 established TCP sockets on
loopback of which 50 are on the Data Guard port (25 connections to it, both ends local; see
--dg-connections):

- sgmon: every installed collector that can run here (sgmon.registry, the oracle ones need a
  database and are left out), engine ticking at 1 s, frames built and dropped: the collector
  set's own cost, the issue's figure;
- sgmon + JSON: the same, each frame also encoded as the agent sends it over ssh (a sink's
  cost on top; `sgmon record`'s CSV writing is measured in bench/record_cost.py);
- `sadc -S XALL 1 N` writing to a temporary file (what sar's collector costs);
- `glances -q -t 1` (collection at 1 s without drawing; skipped with the reason if absent);
- an OSWatcher-style shell loop forking `iostat -dxk`, `ss -tinm`, `ip -s link` and
  `mpstat -P ALL` each second.

CPU is read from /proc/PID/stat (the process plus its waited-for children, 10 ms ticks) at the
start and the end of the measured window, after a warm-up that excludes start-up costs; per
sample = per second at 1 Hz.  Peak RSS is VmHWM (the fork loop: the largest of the shell and
its children, from wait4).  The sgmon worker also reports its own getrusage over its sampling
window (microsecond resolution) and which collectors answered.

    /work/venv/bin/python bench/overhead.py [--samples 60] [--dg-port 1521] [--dg-connections 25]
        [--disks N] [--interfaces N]

``--disks N`` and ``--interfaces N`` add N loop devices (sparse files, each read once so that
iostat, sadc and sgmon show it) and N virtual interfaces (``sgbenchN``: dummy, or ifb where this
kernel has no dummy driver) in the root namespace for the run, so sadc sees them too.  They are
removed at the end, on an error and on Ctrl-C or SIGTERM; a stale run's are removed at start.

``--targets`` measures issue 18's scenarios instead (8 and 50 DG sockets, 100 disks, 200
interfaces; the device scenarios with 8 DG sockets), sgmon beside sadc only, ``--rounds``
times in one run, and prints each scenario's min/median/max with the target's verdict.  CPU
there is each process's scheduler run time (/proc/PID/task/*/schedstat, nanoseconds) so that
sgmon and sadc are read alike and finer than the 10 ms ticks of /proc/PID/stat.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from peers import GLANCES_OFFLINE, glances

CLK_TCK = os.sysconf("SC_CLK_TCK")
SADC = "/usr/lib/sysstat/sadc"
SKIP_TICKS = 3  # per-collector figures start after these ticks (opening, first dumps)
OTHER_PORT = 46000  # the unrelated connections' listener (this engineer's port range)
FORK_LOOP = (
    "while :; do iostat -dxk >/dev/null; ss -tinm >/dev/null; ip -s link >/dev/null; "
    "mpstat -P ALL >/dev/null; sleep 1; done"
)
DEV_PREFIX = "sgbench"  # the interfaces and loop files this bench owns (stale ones removed)
MAX_DEVICES = 1000  # --disks and --interfaces bound
LOOP_CTL_ADD, LOOP_CTL_REMOVE = 0x4C80, 0x4C81  # linux/loop.h


@dataclass(frozen=True)
class Scenario:
    """One of issue 18's measured cases and its target (sgmon CPU / sadc CPU, same run)."""

    name: str
    dg_conns: int
    disks: int = 0
    interfaces: int = 0
    target: float = 1.0


TARGETS = (
    Scenario("8 DG sockets", 4),
    Scenario("50 DG sockets", 25, target=1.5),
    Scenario("100 disks", 4, disks=100),
    Scenario("200 interfaces", 4, interfaces=200),
)


# ---------------------------------------------------------------- the socket farm (a child)


def farm(dg_port: int, dg_conns: int, other_conns: int) -> None:
    """Hold the connections until stdin closes; print "ready" once they are established."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = 2 * (dg_conns + other_conns) + 64
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(need, soft), max(need, hard)))
    held: list[socket.socket] = []
    for port, n in ((dg_port, dg_conns), (OTHER_PORT, other_conns)):
        srv = socket.socket()
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            srv.bind(("127.0.0.1", port))
        except OSError as e:
            print(f"error: cannot listen on 127.0.0.1:{port}: {e.strerror}", flush=True)
            return
        srv.listen(4096)
        for _ in range(n):
            held.append(socket.create_connection(("127.0.0.1", port)))
            held.append(srv.accept()[0])
        srv.close()
    print("ready", len(held), flush=True)
    sys.stdin.read()  # until the parent closes the pipe (or dies)


# ---------------------------------------------------------------- the sgmon worker (a child)


def worker(ticks: int, dg_port: int, out: str, encode: bool = False) -> None:
    """Run the collector set on the engine for ``ticks`` 1 s ticks, each frame JSON-encoded
    if ``encode``; write a JSON summary."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from sgmon.config import Config
    from sgmon.hosts.build import make_collectors
    from sgmon.hosts.local import LocalSource
    from sgmon.model import Frame, Status

    collectors = make_collectors(Config(ports=(dg_port,)), None)
    thread_cpu = {c.name: [0.0, 0] for c in collectors}
    counting = [False]  # the first ticks open files and sockets and learn layouts: not counted
    for c in collectors:
        c.sample = _timed(c.sample, thread_cpu[c.name], counting)  # type: ignore[method-assign]
    source = LocalSource(collectors, 1.0)
    stop = threading.Event()
    last: Frame | None = None  # frames are dropped as a recorder drops them
    durations = {c.name: 0.0 for c in collectors}  # after the first SKIP_TICKS frames
    marks: list[tuple[float, float]] = []

    def emit(frame: Frame) -> None:
        nonlocal last
        if encode:
            frame.to_json()
        if counting[0]:
            for name, res in frame.collectors.items():
                durations[name] += res.duration_ms or 0
        last = frame
        counting[0] = len(marks) + 1 >= SKIP_TICKS
        ru = resource.getrusage(resource.RUSAGE_SELF)
        marks.append((time.monotonic(), ru.ru_utime + ru.ru_stime))
        if len(marks) >= ticks:
            stop.set()

    try:
        source.run(emit, stop)
    finally:
        source.close()
    assert last is not None, "the engine emitted no frame"
    status = {
        name: {
            "status": res.status.value,
            "error": res.error,
            "rows": len(res.rows),
            "mean_ms": round(durations[name] / max(1, len(marks) - SKIP_TICKS), 3),
            "cpu_ms": round(1000 * thread_cpu[name][0] / max(1, thread_cpu[name][1]), 3),
        }
        for name, res in last.collectors.items()
    }
    ok = [n for n, s in status.items() if s["status"] == Status.OK.value]
    if out == "-":
        return
    Path(out).write_text(
        json.dumps(
            {
                "collectors": status,
                "ran": ok,
                "marks": marks,
                "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            }
        )
    )


def _timed(sample, acc: list, counting: list[bool]):
    """Wrap a collector's sample() to add its thread CPU time and count to ``acc`` once
    ``counting[0]`` is set."""

    def timed():
        t0 = time.thread_time()
        try:
            return sample()
        finally:
            if counting[0]:
                acc[0] += time.thread_time() - t0
                acc[1] += 1

    return timed


# ---------------------------------------------------------------- devices (the parent, as root)


def _run(argv: Sequence[str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run a device command; its failure is judged by what it made, not by its status."""
    return subprocess.run(argv, input=stdin, capture_output=True, text=True, check=False)


def _our_links() -> list[str]:
    """Interfaces named with this bench's prefix."""
    out = _run(["ip", "-o", "link", "show"]).stdout
    names = (line.split(":")[1].strip().partition("@")[0] for line in out.splitlines())
    return [n for n in names if n.startswith(DEV_PREFIX)]


def _our_loops() -> list[str]:
    """Loop devices backed by a file in one of this bench's directories."""
    mark = f"/{DEV_PREFIX}-loop-"
    out = _run(["losetup", "-l", "-n", "-O", "NAME,BACK-FILE"]).stdout
    return [line.split()[0] for line in out.splitlines() if mark in line]


def remove_devices(dirs: Sequence[Path] = ()) -> None:
    """Remove this bench's interfaces and loop devices, and ``dirs`` plus any stale
    ``sgbench-loop-*`` directories in the temporary directory."""
    links = _our_links()
    if links:
        _run(["ip", "-batch", "-"], "".join(f"link del {n}\n" for n in links))
    for dev in _our_loops():
        _run(["losetup", "-d", dev])
        _remove_loop(dev)
    for d in {*dirs, *Path(tempfile.gettempdir()).glob(f"{DEV_PREFIX}-loop-*")}:
        shutil.rmtree(d, ignore_errors=True)


def _remove_loop(dev: str) -> None:
    """Take a detached loop device away (LOOP_CTL_REMOVE): a detached one stays in
    /proc/diskstats with the counts of its read, so later runs would show it.  One of those
    made at boot (below the driver's max_loop) is added again, with its counters at zero."""
    index = int(dev.removeprefix("/dev/loop"))
    try:
        boot = int(Path("/sys/module/loop/parameters/max_loop").read_text())
    except (OSError, ValueError):
        boot = 8  # the driver's default
    fd = os.open("/dev/loop-control", os.O_RDWR)
    try:
        fcntl.ioctl(fd, LOOP_CTL_REMOVE, index)
        if index < boot:
            fcntl.ioctl(fd, LOOP_CTL_ADD, index)
    except OSError as e:
        print(f"overhead: {dev} stays: {e.strerror}", file=sys.stderr)
    finally:
        os.close(fd)


def _add_links(n: int) -> tuple[int, str]:
    """Up to ``n`` interfaces sgbench0.. (dummy, or ifb without a dummy driver): how many
    were made and of which kind."""
    for kind in ("dummy", "ifb"):
        names = [f"{DEV_PREFIX}{i}" for i in range(n)]
        cmds = "".join(f"link add {x} type {kind}\nlink set {x} up\n" for x in names)
        _run(["ip", "-force", "-batch", "-"], cmds)
        made = len(_our_links())
        if made:
            return made, kind
    return 0, "none: neither a dummy nor an ifb driver"


def _add_loops(n: int, where: Path) -> tuple[int, str]:
    """Up to ``n`` loop devices on 1 MiB sparse files in ``where``, each read once (a device
    that never did I/O is left out by iostat, sadc and sgmon alike)."""
    if not os.path.exists("/dev/loop-control"):
        return 0, "no /dev/loop-control"
    for i in range(n):
        back = where / f"{i}.img"
        with open(back, "wb") as f:
            f.truncate(1 << 20)
        made = _run(["losetup", "-f", "--show", str(back)])
        if made.returncode != 0:
            return i, made.stderr.strip() or f"losetup status {made.returncode}"
        fd = os.open(made.stdout.strip(), os.O_RDONLY)
        try:
            os.read(fd, 4096)
        finally:
            os.close(fd)
    return n, ""


@contextlib.contextmanager
def bench_devices(disks: int, interfaces: int) -> Iterator[str]:
    """``disks`` loop devices and ``interfaces`` interfaces for the with-block, removed after
    it however it ends (SIGTERM and SIGHUP raise SystemExit so that this runs); yields what was
    made, in words.  A stale run's leftovers are removed first."""
    if not disks and not interfaces:
        yield ""
        return
    if os.geteuid() != 0:
        raise RuntimeError("--disks and --interfaces need root (loop devices, ip link add)")
    before = {sig: signal.signal(sig, _exit_on_signal) for sig in (signal.SIGTERM, signal.SIGHUP)}
    remove_devices()
    where = Path(tempfile.mkdtemp(prefix=f"{DEV_PREFIX}-loop-"))
    try:
        said = []
        if disks:
            made, why = _add_loops(disks, where)
            said.append(f"{made} of {disks} loop devices" + (f" ({why})" if why else ""))
        if interfaces:
            made, kind = _add_links(interfaces)
            said.append(f"{made} of {interfaces} interfaces ({kind})")
        yield ", ".join(said)
    finally:
        remove_devices([where])
        for sig, handler in before.items():
            signal.signal(sig, handler)


def _exit_on_signal(signum: int, _frame: object) -> None:
    """Unwind (finally blocks run, the devices go) instead of dying where the signal hit."""
    raise SystemExit(128 + signum)


# ---------------------------------------------------------------- measurement (the parent)


@dataclass
class Tool:
    """One contender: its command and what was measured."""

    name: str
    argv: list[str]
    note: str = ""
    proc: subprocess.Popen | None = None
    cpu0: float = 0.0
    cpu1: float = 0.0
    run0: float = 0.0  # schedstat run time at the window's ends
    run1: float = 0.0
    hwm_kb: int = 0
    wait_maxrss_kb: int = 0
    skipped: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def cpu(self) -> float:
        """CPU seconds in the window."""
        return self.cpu1 - self.cpu0

    @property
    def run(self) -> float:
        """Scheduler run time in the window, seconds."""
        return self.run1 - self.run0


def proc_cpu(pid: int) -> float:
    """utime+stime+cutime+cstime of a process, seconds."""
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rpartition(")")[2].split()
    return sum(int(x) for x in parts[11:15]) / CLK_TCK


def task_run(pid: int) -> float:
    """Seconds the scheduler ran a process's live threads (schedstat: ns, not 10 ms ticks)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        with (
            contextlib.suppress(FileNotFoundError),
            open(f"/proc/{pid}/task/{task}/schedstat") as f,
        ):
            total += int(f.read().split()[0])
    return total / 1e9


def proc_hwm(pid: int) -> int:
    """Peak RSS (VmHWM) of a process, kB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def start(tool: Tool) -> None:
    """Start a contender in its own process group (so it is stopped with its children)."""
    tool.proc = subprocess.Popen(
        tool.argv,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )


def stop(tool: Tool) -> None:
    """Stop a contender and its children; keep wait4's peak RSS (covers waited children)."""
    p = tool.proc
    if p is None:
        return
    if p.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGTERM)
    try:
        _, _, ru = os.wait4(p.pid, 0)
        tool.wait_maxrss_kb = ru.ru_maxrss
    except ChildProcessError:
        pass
    p.returncode = p.returncode if p.returncode is not None else -1


@contextlib.contextmanager
def socket_farm(dg_port: int, dg_conns: int = 25) -> Iterator[None]:
    """The socket farm in a child process for the with-block (also for bench/ab_tick.py and
    bench/tick_floor.py); RuntimeError with its reason when it does not start."""
    farm_p = subprocess.Popen(
        [sys.executable, __file__, "--farm", str(dg_port), str(dg_conns), str(1000 - dg_conns)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = farm_p.stdout.readline().strip() if farm_p.stdout else ""
        if not line.startswith("ready"):
            raise RuntimeError(f"the socket farm failed: {line or 'no answer'}")
        yield
    finally:
        if farm_p.stdin:
            farm_p.stdin.close()
        farm_p.wait(timeout=30)


def in_turns(
    tool: str,
    contenders: Mapping[str, Callable[[], float]],
    rounds: int,
    port: int,
    dg_conns: int = 25,
    disks: int = 0,
    interfaces: int = 0,
) -> int:
    """Measure each contender (ms of CPU per tick) in turns, ``rounds`` times, beside the socket
    farm, and print each one's median and runs (bench/ab_tick.py, bench/tick_floor.py); the
    farm or a contender failing (RuntimeError) ends it with the reason and exit status 2.  Each
    round starts one contender later than the one before: whoever ran second cost 0.03-0.09 ms
    more per tick than the same code run first (ab_tick, one commit against its parent, both
    orders).  ``disks`` and ``interfaces``: test devices for the run (see bench_devices)."""
    runs: dict[str, list[float]] = {name: [] for name in contenders}
    order = list(contenders.items())
    try:
        with bench_devices(disks, interfaces), socket_farm(port, dg_conns):
            for r in range(rounds):
                k = r % len(order)
                for name, measure in order[k:] + order[:k]:
                    runs[name].append(measure())
    except RuntimeError as e:
        print(f"{tool}: {e}", file=sys.stderr)
        return 2
    width = max(map(len, runs), default=0)
    for name, ms in runs.items():
        each = ", ".join(f"{x:.3f}" for x in ms)
        print(f"{name:{width}s}  median {statistics.median(ms):.3f} ms CPU per tick ({each})")
    return 0


def farm_options(p: argparse.ArgumentParser) -> None:
    """The socket farm's options, for every bench that runs beside it."""
    p.add_argument("--dg-port", type=int, default=1521, help="the Data Guard port (default 1521)")
    p.add_argument(
        "--dg-connections",
        type=dg_connections,
        default=25,
        metavar="N",
        help="Data Guard connections among the 1,000, both ends local (default 25: 50 sockets; "
        "a primary with one standby has 1)",
    )
    for what, made in (("disks", "loop devices"), ("interfaces", "virtual interfaces")):
        p.add_argument(
            f"--{what}",
            type=device_count,
            default=0,
            metavar="N",
            help=f"N {made} for the run, removed after it (root; default 0)",
        )


def run_bench(
    samples: int, warmup: int, dg_port: int, dg_conns: int = 25, disks: int = 0, interfaces: int = 0
) -> int:
    """Start everything, measure the window, print the table."""
    try:
        with bench_devices(disks, interfaces) as made, socket_farm(dg_port, dg_conns):
            if made:
                print(f"devices for this run: {made}")
            tools, window = _measured(samples, warmup, dg_port, full=True)
            report(tools, samples, window, dg_port, 2 * dg_conns)
    except RuntimeError as e:
        print(f"overhead: {e}", file=sys.stderr)
        return 2
    return 0


def _contenders(total: int, dg_port: int, tmp: Path, full: bool) -> list[Tool]:
    """sgmon (first: it writes its summary to tmp/sgmon.json) and sadc, and with ``full`` the
    JSON-encoding sgmon, glances and the fork loop; each outlives ``total`` seconds."""
    sgmon = [sys.executable, __file__, "--worker", str(total), str(dg_port)]
    tools = [
        Tool("sgmon", [*sgmon, str(tmp / "sgmon.json")]),
        Tool(
            "sgmon + JSON",
            [*sgmon, "-", "json"],
            note="each frame also JSON-encoded (the agent's sink)",
        ),
        Tool("sadc -S XALL", [SADC, "-S", "XALL", "1", str(total), str(tmp / "sa.bin")]),
        Tool(
            "glances -t 1",
            [glances(), "-q", "-t", "1", "--stop-after", str(total), *GLANCES_OFFLINE],
        ),
        Tool("fork loop", ["bash", "-c", FORK_LOOP], note="iostat, ss, ip, mpstat /s"),
    ]
    if not full:
        tools = [tools[0], tools[2]]
    for t in tools:
        exe = t.argv[0]
        if not (os.path.exists(exe) or shutil.which(exe)):
            t.skipped = f"{exe} not found"
    return tools


def _measured(samples: int, warmup: int, dg_port: int, full: bool) -> tuple[list[Tool], float]:
    """One measured window of the contenders (``full``: every peer, else sgmon and sadc), in a
    scratch directory removed after; the contenders and the window's length in seconds."""
    tmp = Path(tempfile.mkdtemp(prefix="sgmon-bench-"))
    try:
        tools = _contenders(samples + warmup + 5, dg_port, tmp, full=full)
        return tools, _window(tools, samples, warmup, tmp / "sgmon.json")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _window(tools: list[Tool], samples: int, warmup: int, summary: Path) -> float:
    """Start the contenders, read their CPU at the window's ends, stop them; the seconds the
    window lasted.  sgmon (tools[0]) stops by itself and leaves its summary in ``summary``."""
    try:
        for t in tools:
            if not t.skipped:
                start(t)
        time.sleep(warmup)
        t0 = time.monotonic()
        for t in tools:
            if not t.skipped:
                t.cpu0, t.run0 = _cpu_or_skip(t)
        time.sleep(samples)
        window = time.monotonic() - t0
        for t in tools:
            if not t.skipped:
                t.cpu1, t.run1 = _cpu_or_skip(t, end=True)
                if not t.skipped:
                    t.hwm_kb = proc_hwm(t.proc.pid)  # type: ignore[union-attr]
        for t in tools[1:]:
            stop(t)
        sg = tools[0]
        if sg.proc is not None:
            sg.proc.wait(timeout=samples + warmup + 60)
            if summary.exists():
                sg.extra = json.loads(summary.read_text())
        return window
    finally:
        for t in tools:
            if t.proc is not None and t.proc.poll() is None:
                stop(t)


def _cpu_or_skip(t: Tool, end: bool = False) -> tuple[float, float]:
    """(/proc/PID/stat CPU, scheduler run time) of a contender, seconds; zeros and the reason
    in ``skipped`` if it is gone."""
    try:
        return proc_cpu(t.proc.pid), task_run(t.proc.pid)  # type: ignore[union-attr]
    except OSError:
        rc = t.proc.poll() if t.proc else None
        t.skipped = f"exited early (status {rc})" + (" before the window ended" if end else "")
        return 0.0, 0.0


def _own_window(extra: dict, samples: int) -> float | None:
    """The sgmon worker's own CPU per tick over the last ``samples`` ticks (getrusage)."""
    marks = extra.get("marks") or []
    if len(marks) < 2:
        return None
    use = marks[-(samples + 1) :]
    (_, c0), (_, c1) = use[0], use[-1]
    return (c1 - c0) / (len(use) - 1)


def report(tools: list[Tool], samples: int, window: float, dg_port: int, dg: int) -> None:
    """Print the figures and the ratios to sgmon."""
    print(f"window {window:.1f} s ({samples} samples at 1 Hz), 2,000 established loopback TCP")
    print(f"sockets, {dg} of them on port {dg_port}; CPU from /proc/PID/stat (10 ms ticks)\n")
    sg = tools[0]
    base = sg.cpu / window * 1000 if not sg.skipped else None
    print(f"{'contender':<14} {'CPU ms/sample':>14} {'peak RSS MB':>12} {'x sgmon CPU':>12}")
    for t in tools:
        if t.skipped:
            print(f"{t.name:<14} skipped: {t.skipped}")
            continue
        per = t.cpu / window * 1000
        rss = max(t.hwm_kb, t.wait_maxrss_kb) / 1024
        ratio = f"{per / base:.1f}" if base else "-"
        print(f"{t.name:<14} {per:>14.2f} {rss:>12.1f} {ratio:>12}  {t.note}")
    if sg.extra:
        own = _own_window(sg.extra, samples)
        if own is not None:
            print(
                f"\nsgmon by its own getrusage over its last {samples} ticks: {own * 1000:.2f} ms"
            )
        print(f"sgmon collectors that ran: {', '.join(sg.extra['ran'])}")
        for name, s in sg.extra["collectors"].items():
            why = f" ({s['error']})" if s["error"] else ""
            print(
                f"  {name:<8} {s['status']:<11} {s['rows']:>4} rows  sample() CPU "
                f"{s['cpu_ms']:.3f} ms, wall sample+derive {s['mean_ms']:.3f} ms{why}"
            )


def run_targets(
    rounds: int, samples: int, warmup: int, dg_port: int, only: str | None = None
) -> int:
    """Issue 18's scenarios (``only``: the one of that name), sgmon beside sadc, ``rounds``
    times (each round starting one scenario later, as in_turns does); print a table per
    scenario and the verdicts."""
    targets = tuple(sc for sc in TARGETS if only in (None, sc.name))
    got: dict[Scenario, list[tuple[float, float, dict]]] = {sc: [] for sc in targets}
    print(f"{rounds} rounds of {len(targets)} scenarios, {samples} samples each at 1 Hz after")
    print(f"{warmup} s of warm-up; 2,000 loopback sockets; CPU = schedstat run time\n")
    try:
        for r in range(rounds):
            k = r % len(targets)
            for sc in targets[k:] + targets[:k]:
                with (
                    bench_devices(sc.disks, sc.interfaces) as made,
                    socket_farm(dg_port, sc.dg_conns),
                ):
                    tools, window = _measured(samples, warmup, dg_port, full=False)
                sg, sadc = tools
                if sg.skipped or sadc.skipped:
                    raise RuntimeError(f"{sc.name}: {sg.skipped or sadc.skipped}")
                per = (sg.run / window * 1000, sadc.run / window * 1000)
                got[sc].append((*per, sg.extra))
                print(
                    f"round {r + 1} {sc.name:<15} sgmon {per[0]:.3f} ms, sadc {per[1]:.3f} ms, "
                    f"x{per[0] / per[1]:.2f}" + (f"  [{made}]" if made else ""),
                    flush=True,
                )
    except RuntimeError as e:
        print(f"overhead: {e}", file=sys.stderr)
        return 2
    report_targets(got)
    return 0


def report_targets(got: Mapping[Scenario, list[tuple[float, float, dict]]]) -> None:
    """A table per scenario (min / median / max over the rounds), per-collector medians, and
    the verdicts: a target is met when the median round's sgmon/sadc ratio is within it."""
    verdicts = []
    for sc, runs in got.items():
        sg = [r[0] for r in runs]
        sadc = [r[1] for r in runs]
        ratio = [a / b for a, b in zip(sg, sadc, strict=True)]
        print(
            f"\n{sc.name} ({2 * sc.dg_conns} DG sockets, {sc.disks} extra disks, "
            f"{sc.interfaces} extra interfaces)"
        )
        print("| contender | CPU ms/sample min / median / max |\n|---|---|")
        print(f"| sgmon | {_mmm(sg)} |\n| sadc -S XALL | {_mmm(sadc)} |")
        print(f"| sgmon / sadc | {_mmm(ratio)} |")
        names = runs[0][2].get("collectors", {}) if runs else {}
        for name in names:
            cpu = [r[2]["collectors"][name]["cpu_ms"] for r in runs if r[2].get("collectors")]
            rows = names[name]["rows"]
            print(
                f"  {name:<8} {rows:>4} rows, sample() CPU median {statistics.median(cpu):.3f} ms"
            )
        med = statistics.median(ratio)
        verdicts.append(
            f"| {sc.name} | <= {sc.target:g}x sadc | {med:.2f}x "
            f"({_mmm(ratio)}) | {'met' if med <= sc.target else '**not met**'} |"
        )
    print("\n| scenario | target | sgmon / sadc, median (min / median / max) | verdict |")
    print("|---|---|---|---|")
    print("\n".join(verdicts))


def _mmm(xs: Sequence[float]) -> str:
    """min / median / max, as the tables print them."""
    return f"{min(xs):.3f} / {statistics.median(xs):.3f} / {max(xs):.3f}"


def device_count(text: str) -> int:
    """--disks, --interfaces: 0 to MAX_DEVICES."""
    if not text.isdigit() or int(text) > MAX_DEVICES:
        raise argparse.ArgumentTypeError(f"{text!r}: use 0 to {MAX_DEVICES}")
    return int(text)


def dg_connections(text: str) -> int:
    """--dg-connections: 1 to 999 of the 1,000 connections."""
    if not text.isdigit() or not 1 <= int(text) <= 999:
        raise argparse.ArgumentTypeError(f"{text!r}: use 1 to 999 (of the 1,000 connections)")
    return int(text)


def main() -> int:
    """Parse the options; the --farm and --worker forms are the children."""
    if len(sys.argv) > 1 and sys.argv[1] == "--farm":
        farm(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
        return 0
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5:6] == ["json"])
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--samples", type=int, default=60, help="measured 1 Hz samples (default 60)")
    p.add_argument("--warmup", type=int, default=5, help="seconds before the window opens")
    p.add_argument(
        "--targets",
        action="store_true",
        help="issue 18's scenarios, sgmon beside sadc, with verdicts (ignores the farm options "
        "but --dg-port)",
    )
    p.add_argument("--rounds", type=int, default=3, help="rounds with --targets (default 3)")
    p.add_argument(
        "--scenario",
        choices=[sc.name for sc in TARGETS],
        help="with --targets, this scenario alone",
    )
    farm_options(p)
    a = p.parse_args()
    if a.targets:
        return run_targets(a.rounds, a.samples, a.warmup, a.dg_port, a.scenario)
    return run_bench(a.samples, a.warmup, a.dg_port, a.dg_connections, a.disks, a.interfaces)


if __name__ == "__main__":
    sys.exit(main())
