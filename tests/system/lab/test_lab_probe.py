"""The probe between two namespaces: SYNC costs FASTSYNC plus the standby disk's write time."""

from __future__ import annotations

import json
import subprocess
import sys

import nslab
import pytest

from sgmon.lab import kernel

pytestmark = [pytest.mark.root]
PORT = 46650


def _probe(pair, mode: str) -> dict:
    out = pair.run(
        "a", sys.executable, "-m", "sgmon", "probe", "client", f"{pair.b_ip}:{PORT}",
        "--mode", mode, "--duration", "3s", "--interval", "1s", "--format", "json",
        timeout=30,
    )  # fmt: skip
    return json.loads(out.splitlines()[-1])


def test_sync_exceeds_fastsync_by_the_standby_disk_write_time():
    nslab.require_lab()
    with nslab.ns_pair("pr") as pair, kernel.loop_device(64) as disk:
        server = pair.popen(
            "b", sys.executable, "-m", "sgmon", "probe", "server", "--listen",
            f"{pair.b_ip}:{PORT}", "--write", disk.device, "--duration", "30",
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            assert "listening" in server.stdout.readline()
            fast = _probe(pair, "fastsync")
            sync = _probe(pair, "sync")
        finally:
            server.terminate()
            server.wait(5)
    write = sync["disk_write_ms"]
    assert write > 0 and fast["disk_write_ms"] == 0
    extra = sync["lat_avg_ms"] - fast["lat_avg_ms"]
    assert extra == pytest.approx(write, rel=0.5, abs=0.1), (fast, sync)
    assert sync["predicted_ms"]["sync"] == pytest.approx(sync["lat_avg_ms"])
