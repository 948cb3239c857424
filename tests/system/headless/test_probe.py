"""`sgmon probe` on loopback: every mode end to end, and the one-line errors."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import pytest

from sgmon.cli import main
from sgmon.probe.server import ProbeServer


@pytest.fixture
def server(tmp_path: Path):
    """A probe server with a write file on a real disk (/var/tmp), stopped after the test."""
    write = Path("/var/tmp") / f"sgmon-probe-{tmp_path.name}.dat"
    srv = ProbeServer("127.0.0.1", 0, write, log=lambda _: None)  # port 0: never one in use
    t = threading.Thread(target=srv.serve, args=(60,), daemon=True)
    t.start()
    yield srv
    srv.stop.set()
    t.join(5)
    for f in (write, write.with_name(write.name + ".apply")):
        f.unlink(missing_ok=True)


def _at(srv: ProbeServer) -> str:
    host, port = srv.address
    return f"{host}:{port}"


def _run(capsys, server: ProbeServer, *argv: str) -> tuple[int, list[dict], str]:
    code = main(["probe", "client", _at(server), *argv, "--format", "json"])
    out = capsys.readouterr()
    return code, [json.loads(line) for line in out.out.splitlines()], out.err


@pytest.mark.parametrize("mode", ["async", "fastsync", "sync", "apply"])
def test_each_mode_reports_intervals_and_summary(server, capsys, mode):
    code, rows, err = _run(
        capsys, server, "--mode", mode, "--duration", "1.2s", "--interval", "0.5s"
    )
    assert code == 0, err
    intervals = [r for r in rows if r["type"] == "interval"]
    summ = rows[-1]
    assert summ["type"] == "summary" and len(intervals) >= 2
    assert summ["throughput_mb_s"] > 0
    assert summ["rto_ms"] >= 1 and summ["rtt_ms"] is not None and summ["cwnd"] >= 1
    assert summ["buffer_3bdp_bytes"] == pytest.approx(3 * summ["bdp_bytes"], abs=2)
    pred = summ["predicted_ms"]
    if mode == "async":
        assert summ["lat_avg_ms"] is None and pred["fastsync"] is None
        return
    assert summ["lat_p50_ms"] <= summ["lat_p99_ms"] <= summ["lat_max_ms"]
    assert pred["fastsync"] is not None and pred["fastsync"] <= summ["lat_avg_ms"]
    if mode in ("sync", "apply"):
        # The server's synced write is part of what the client waited for.
        assert 0 < summ["disk_write_ms"] < summ["lat_avg_ms"]
        assert pred["sync"] == pytest.approx(pred["fastsync"] + summ["disk_write_ms"])
    if mode == "apply":
        assert summ["apply_write_ms"] > 0 and pred["apply"] > pred["sync"]


def test_text_format_reads_like_oratcptest(server, capsys):
    code = main(
        [
            "probe",
            "client",
            _at(server),
            "--mode",
            "sync",
            "--duration",
            "0.6s",
            "--interval",
            "0.3s",
            "--length",
            "4k",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    for text in (
        "[Requesting a test]",
        "Message payload        = 4 kbytes",
        "The server is ready.",
        "Test finished.",
        "Avg. latency",
        "disk-write",
        "3 x BDP buffer size",
    ):
        assert text in out


def test_csv_has_header_rows_and_summary(server, capsys):
    code = main(
        [
            "probe",
            "client",
            _at(server),
            "--mode",
            "fastsync",
            "--duration",
            "0.6s",
            "--interval",
            "0.3s",
            "--format",
            "csv",
        ]
    )
    lines = capsys.readouterr().out.splitlines()
    assert code == 0
    assert lines[0].startswith("time,seconds,throughput_mb_s")
    assert lines[-1].startswith("summary,") and len(lines) >= 4


def test_refuses_without_duration(capsys):
    assert main(["probe", "client", "127.0.0.1:1", "--mode", "sync"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("sgmon:") and "--duration" in err[0]


def test_unreachable_peer_is_one_line(capsys):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert main(["probe", "client", f"127.0.0.1:{port}", "--duration", "1s"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("sgmon: cannot reach")


def test_port_in_use_is_one_line(server, capsys):
    assert main(["probe", "server", "--listen", _at(server), "--duration", "1s"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "in use" in err[0]


def test_sync_needs_a_write_file(capsys):
    srv = ProbeServer("127.0.0.1", 0, None, log=lambda _: None)
    t = threading.Thread(target=srv.serve, args=(10,), daemon=True)
    t.start()
    try:
        code = main(["probe", "client", _at(srv), "--mode", "sync", "--duration", "1s"])
    finally:
        srv.stop.set()
        t.join(5)
    assert code == 2 and "--write" in capsys.readouterr().err


def test_stops_when_the_peer_vanishes(server, capsys):
    threading.Timer(0.8, server.stop.set).start()
    code, rows, err = _run(
        capsys, server, "--mode", "fastsync", "--duration", "30s", "--interval", "0.5s"
    )
    assert code == 3 and "went away" in err
    summ = rows[-1]
    assert summ["type"] == "summary" and summ["seconds"] < 10
