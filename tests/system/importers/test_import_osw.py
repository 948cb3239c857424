"""`sgmon import osw` on an OSWatcher archive the real tools wrote (tests/oswlab.py).

The loaded archive: three snapshots while eight O_DIRECT|O_DSYNC writers queue on a loop device
whose backing device is capped at 100 write IOPS (seed 003's standby), loopback TCP traffic
runs, and a process named like Oracle's log writer sleeps; two of its files gzip'd, as
OSWatcher does with a closed hour.  The import must hold iostat's figures for the device,
netstat's counters as rates, the process under the procs collector's name, and ``sgmon check
--from`` must name the device as the standby's.  Damaged files lose their damaged block only.
"""

from __future__ import annotations

import contextlib
import gzip
import resource
import socket
import subprocess
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import nslab
import oswlab
import pytest
from importlab import rows, sgmon, unexplained_findings
from oswlab import OLD_IOSTAT

pytestmark = [pytest.mark.root, pytest.mark.slow]

HOST = "stby1"


@contextlib.contextmanager
def loopback_traffic(seconds: float) -> Iterator[None]:
    """Bounded TCP traffic on 127.0.0.1: connections opened and small writes, for ``seconds``."""
    stop = threading.Event()
    srv = socket.create_server(("127.0.0.1", 0))
    port = srv.getsockname()[1]

    def serve() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                conn, _ = srv.accept()
                with conn:
                    while conn.recv(65536):
                        pass

    def talk() -> None:
        end = time.monotonic() + seconds
        while not stop.is_set() and time.monotonic() < end:
            with socket.create_connection(("127.0.0.1", port)) as c:
                c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                for _ in range(200):
                    c.sendall(b"x" * 100)
            time.sleep(0.02)

    threads = [threading.Thread(target=serve), threading.Thread(target=talk)]
    for t in threads:
        t.start()
    try:
        yield
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=5)
        srv.close()


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The archive and the loop device's name."""
    nslab.require_root("losetup", "dd", "timeout", "iostat", "mpstat", "vmstat", "netstat", "top")
    archive = tmp_path_factory.mktemp("osw") / "archive"
    lgwr = subprocess.Popen(["bash", "-c", "exec -a ora_lgwr_TEST sleep 60"])
    try:
        with (
            nslab.throttled_loop(write_iops=100) as loop,
            nslab.disk_load(loop, 8, 20),
            loopback_traffic(15),
        ):
            time.sleep(1.5)  # let the queue fill
            files = oswlab.collect(archive, HOST, snapshots=3, step=2)
    finally:
        lgwr.kill()
        lgwr.wait()
    assert len(files) == 6
    for f in files[:2]:  # iostat and mpstat: closed hours are compressed
        f.with_name(f.name + ".gz").write_bytes(gzip.compress(f.read_bytes()))
        f.unlink()
    return archive, loop.name


def test_loaded_archive_holds_the_tools_figures_and_names_the_device(
    loaded: tuple[Path, str], tmp_path: Path
) -> None:
    archive, dev = loaded
    out = tmp_path / "arch"
    r = sgmon("import", "osw", str(archive), "--dir", str(out), "--role=standby")
    assert r.returncode == 0, r.stderr
    assert r.stderr == "", r.stderr
    assert f"{HOST} (3 samples)" in r.stdout
    disk = [d for d in rows(out, HOST, "disk") if d["instance"] == dev]
    assert len(disk) == 3
    for d in disk:  # iostat's own numbers for a device that queues behind a 100 IOPS cap
        assert float(d["w_s"]) > 30, d
        assert float(d["aqu_sz"]) > 4 and float(d["w_await_ms"]) > 20 and float(d["util_pct"]) > 90
    # the same figures are in the (gzip'd) iostat file's last table of each block
    text = gzip.decompress(next(archive.glob("oswiostat/*.gz")).read_bytes()).decode()
    last = [ln.split() for ln in text.splitlines() if ln.startswith(dev + " ")]
    assert [float(d["w_s"]) for d in disk] == [float(x[7]) for x in last]
    cpu = [d for d in rows(out, HOST, "cpu") if d["instance"] == "all"]
    assert len(cpu) == 3 and all(d["idle_pct"] and d["runq_sz"] for d in cpu)
    # xtop.sh halves two top samples by line count and can miss the second header: not every
    # block has the load line, but the blocks that do are taken
    assert any(d["load1"] for d in cpu)
    tcp = rows(out, HOST, "tcp")
    assert len(tcp) == 2  # rates need two netstat blocks
    assert max(float(d["active_opens_per_s"]) for d in tcp) > 1, tcp
    lo = [d for d in rows(out, HOST, "netdev") if d["instance"] == "lo"]
    assert max(float(d["rx_pkt_per_s"]) for d in lo) > 100, lo
    procs = rows(out, HOST, "procs")
    assert {(d["instance"], d["state"]) for d in procs} == {("LGWR", "S")}, procs
    check = sgmon("check", "--from", str(out))
    assert dev in check.stdout and "standby I/O saturated" in check.stdout, check.stdout
    assert sgmon("replay", "--summary", str(out)).returncode == 0


def test_torn_last_block_is_one_line_and_the_rest_kept(
    loaded: tuple[Path, str], tmp_path: Path
) -> None:
    archive, _ = loaded
    torn = tmp_path / "archive"
    subprocess.run(["cp", "-a", str(archive), str(torn)], check=True)
    vm = next(torn.glob("oswvmstat/*.dat"))
    text = vm.read_text()
    vm.write_text(text[: text.rstrip("\n").rfind("\n") + 20])  # into the last line
    out = tmp_path / "arch"
    r = sgmon("import", "osw", str(torn), "--dir", str(out))
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"sgmon: {vm}: last block"), lines
    # vmstat's third block lost (its blocked count is vmstat's alone; top also gives a run queue)
    runq = [d["blocked"] for d in rows(out, HOST, "cpu") if d["instance"] == "all"]
    assert len(runq) == 3 and runq[-1] == "" and all(runq[:2]), runq
    assert len({d["time"] for d in rows(out, HOST, "disk")}) == 3  # iostat's blocks all kept


def test_cut_gzip_stream_is_one_line_and_the_rest_kept(
    loaded: tuple[Path, str], tmp_path: Path
) -> None:
    archive, dev = loaded
    cut = tmp_path / "archive"
    subprocess.run(["cp", "-a", str(archive), str(cut)], check=True)
    gz = next(cut.glob("oswiostat/*.gz"))
    data = gz.read_bytes()
    gz.write_bytes(data[: len(data) * 3 // 4])
    out = tmp_path / "arch"
    r = sgmon("import", "osw", str(cut), "--dir", str(out))
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and "compressed stream cut short" in lines[0], lines
    kept = [d for d in rows(out, HOST, "disk") if d["instance"] == dev]
    assert 1 <= len(kept) < 3, kept
    assert len({d["time"] for d in rows(out, HOST, "cpu")}) == 3  # other tools untouched


def test_a_decompression_bomb_is_one_line_and_costs_no_memory(
    loaded: tuple[Path, str], tmp_path: Path
) -> None:
    """A .gz among the files that expands 1000:1 (2 GB of zeros in 2 MB) is refused with one
    line, and the import's peak memory stays that of a normal one: the rest is imported."""
    archive, _ = loaded
    bombed = tmp_path / "archive"
    subprocess.run(["cp", "-a", str(archive), str(bombed)], check=True)
    gz = next(bombed.glob("oswiostat/*.gz"))
    z, zeros = zlib.compressobj(9, zlib.DEFLATED, 31), bytes(64 << 20)
    gz.write_bytes(b"".join([*(z.compress(zeros) for _ in range(32)), z.flush()]))
    out = tmp_path / "arch"
    r = sgmon("import", "osw", str(bombed), "--dir", str(out))
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and "not OSWatcher text; not read" in lines[0], lines
    # the largest of this test process' children so far, the import among them
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    assert rss_mb < 400, rss_mb  # a bomb held whole is 2,048 MB
    assert len({d["time"] for d in rows(out, HOST, "cpu")}) == 3  # other tools untouched


def test_old_and_new_iostat_columns_by_their_names(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    (archive / "oswiostat").mkdir(parents=True)
    (archive / "oswiostat" / "db1_iostat_26.11.24.1100.dat").write_text(OLD_IOSTAT)
    out = tmp_path / "arch"
    r = sgmon("import", "osw", str(archive), "--dir", str(out))
    assert r.returncode == 0 and r.stderr == "", r.stderr
    sdb = [d for d in rows(out, "db1", "disk") if d["instance"] == "sdb"]
    old, new = sdb
    assert (old["w_s"], old["aqu_sz"], old["w_await_ms"], old["svctm_ms"]) == (
        "650", "80.12", "123.4", "1.53",
    )  # fmt: skip
    assert old["r_await_ms"] == "" and old["rareq_sz_kb"] == ""  # no reads: no read averages
    assert (new["w_s"], new["aqu_sz"], new["w_await_ms"], new["wareq_sz_kb"]) == (
        "640", "75.3", "110.2", "8",
    )  # fmt: skip
    assert old["time"] == "2026-11-24T11:00:05.000+00:00"


def test_ahf_netstat_with_ip_s_link(tmp_path: Path) -> None:
    """OSWatcher's AHF releases (banner ``Linux OSWbb v22.1.0AHF <host>``, after a line of
    advice) write ``ip -s link`` and nstat's ``#kernel`` counters to oswnetstat; the interfaces'
    byte counters become kB/s between snapshots, as the live collector's.  Written here by the
    real tools, two snapshots 2 s apart with loopback traffic between."""
    nslab.require_root("ip", "nstat")
    lines = ["It is recommended to use System Health Monitor...\n", "Linux OSWbb v22.1.0AHF db2\n"]
    tools = (["ip", "-s", "link"], ["nstat", "-az"])
    stamps = []
    with loopback_traffic(3):
        for _ in range(2):
            stamps.append(int(time.time()))
            when = time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(stamps[-1]))
            lines.append(f"zzz ***{when}\n")
            lines += [subprocess.run(t, capture_output=True, text=True).stdout for t in tools]
            time.sleep(2)
    archive = tmp_path / "archive"
    (archive / "oswnetstat").mkdir(parents=True)
    (archive / "oswnetstat" / "db2_netstat_26.11.24.1100.dat").write_text("".join(lines))
    out = tmp_path / "arch"
    r = sgmon("import", "osw", str(archive), "--dir", str(out))
    assert r.returncode == 0 and r.stderr == "", r.stderr
    lo = [d for d in rows(out, "db2", "netdev") if d["instance"] == "lo"]
    assert len(lo) == 1, lo  # a rate needs two snapshots
    blocks = "".join(lines).split("zzz")[1:]
    rx = [int(b.split("RX:")[1].splitlines()[1].split()[0]) for b in blocks]  # lo is first
    expected = (rx[1] - rx[0]) / 1024 / (stamps[1] - stamps[0])
    assert expected > 10 and float(lo[0]["rx_kb_kb_per_s"]) == pytest.approx(expected, rel=1e-3)
    assert rows(out, "db2", "tcp") == []  # nstat's counters are not read (see the provenance)


def test_zone_abbreviation_and_tz(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    (archive / "oswiostat").mkdir(parents=True)
    text = OLD_IOSTAT.replace(" UTC ", " CET ")
    (archive / "oswiostat" / "db1_iostat_26.11.24.1100.dat").write_text(text)
    r = sgmon("import", "osw", str(archive), "--dir", str(tmp_path / "a"), "--tz=Europe/Berlin")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert rows(tmp_path / "a", "db1", "disk")[0]["time"] == "2026-11-24T10:00:05.000+00:00"
    r = sgmon("import", "osw", str(archive), "--dir", str(tmp_path / "b"))
    assert r.returncode == 0
    assert r.stderr.count("\n") == 1 and "CET" in r.stderr and "--tz" in r.stderr, r.stderr
    bad = sgmon("import", "osw", str(archive), "--dir", str(tmp_path / "c"), "--tz=Mars/Base")
    assert bad.returncode == 2 and bad.stderr.startswith("sgmon: --tz Mars/Base"), bad.stderr


def test_not_an_archive_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    r = sgmon("import", "osw", str(tmp_path / "empty"), "--dir", str(tmp_path / "a"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no OSWatcher files" in r.stderr
    assert not (tmp_path / "a").exists()


def test_healthy_archive_gives_no_finding_above_info(tmp_path: Path) -> None:
    """A quiet host: nothing queues, so nothing above info (but a CPU saturation the sample
    itself shows: this machine is shared, see tests/importlab.py)."""
    nslab.require_root("iostat", "mpstat", "vmstat", "netstat", "top")
    archive = tmp_path / "archive"
    oswlab.collect(archive, "quiet", snapshots=3, step=1)
    out = tmp_path / "arch"
    r = sgmon("import", "osw", str(archive), "--dir", str(out), "--role=standby")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert unexplained_findings(out) == []
