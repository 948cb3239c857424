"""`sgmon agent`: the NDJSON stream ssh carries (header, frames, pongs) and a quiet stop."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from sgmon.config import Config, HostConfig
from sgmon.hosts.build import make_collectors
from sgmon.hosts.remote import RemoteSource
from sgmon.model import Frame, schema_from_dict

AGENT = [sys.executable, "-m", "sgmon", "agent"]


def test_header_then_frames_and_pong(tmp_path):
    env = {"SGMON_RUNTIME_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    p = subprocess.Popen(
        [*AGENT, "--interval", "0.2", "--duration", "1.5"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    assert p.stdin is not None
    t0 = time.time()
    p.stdin.write(f"ping {t0}\n".encode())
    p.stdin.flush()
    out, err = p.communicate(timeout=30)
    assert p.returncode == 0, err
    lines = [json.loads(x) for x in out.decode().splitlines()]
    head = lines[0]
    assert head["sgmon_agent"] == 1 and head["interval"] == 0.2 and head["frame_version"] == 1
    (host,) = head["hosts"]
    schema = schema_from_dict(head["schemas"][host["name"]])
    assert "cpu" in schema and schema["disk"][0].name == "r_s"
    pongs = [x for x in lines if "pong" in x]
    assert len(pongs) == 1 and pongs[0]["pong"] == t0 and abs(pongs[0]["time"] - t0) < 5
    frames = [Frame.from_dict(x) for x in lines[1:] if "v" in x]
    assert len(frames) >= 3
    assert all(f.host == host["name"] for f in frames)
    assert [f.seq for f in frames] == sorted({f.seq for f in frames})
    assert frames[-1].rows("cpu")["all"]["idle"] is not None


def test_stops_quietly_when_stdout_closes():
    p = subprocess.Popen(
        [*AGENT, "--interval", "0.1"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert p.stdout is not None
    p.stdout.readline()
    p.stdout.readline()
    p.stdout.close()  # the ssh session ended
    try:
        rc = p.wait(15)
    finally:
        p.kill()
    assert rc == 0
    assert p.stderr is not None and p.stderr.read() == b""


def test_the_role_the_consumer_passes_reaches_the_host(tmp_path):
    """``ssh host sgmon agent --role standby``: a far host whose config names no role takes the
    consumer's, which picks its DG sockets (the tcp collector's ``auto`` direction)."""
    source = RemoteSource(HostConfig(name="stby", role="standby", ssh="oracle@stby"))
    assert source.argv()[-1].endswith("sgmon agent --role standby")
    env = {"SGMON_RUNTIME_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [*AGENT, "--role", "standby", "--interval", "0.2", "--duration", "0.5"],
        capture_output=True, env=env, timeout=30, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert [h["role"] for h in json.loads(out.stdout.splitlines()[0])["hosts"]] == ["standby"]
    bad = subprocess.run([*AGENT, "--role", "boss"], capture_output=True, env=env, timeout=30)
    assert bad.returncode == 2 and b"invalid choice: 'boss'" in bad.stderr


def test_a_configured_role_gives_the_tcp_collector_its_direction():
    config = Config(ports=(1521,))
    for role, direction in (("primary", "out"), ("standby", "in"), ("", "both")):
        [tcp] = [c for c in make_collectors(config, HostConfig("h", role)) if c.name == "tcp"]
        assert tcp.direction == direction
