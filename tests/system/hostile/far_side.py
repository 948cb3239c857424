"""A far side gone wrong, run in place of ``ssh`` by tests/system/hostile/test_hostile_far_host.py.

``far_side.py MODE MARKER [ssh's arguments...]``: reads what sgmon sends (the pump's program and
its request), runs the real pump, and misbehaves as MODE says: a clock (``clock=nan``) or a pong
(``pong=1e300``) gone wrong, a login banner, random bytes, endless lines, a flood of ticks, an
agent's row holding NaN, a
child that ignores SIGTERM, in the group or out of it with setsid, or orphaned: its parent
ended first (``orphan``: a double fork; ``leaves``: the command itself exits at once, its
setsid child talking on; ``orphan-exit=N``: the command exits with status N, nothing talking).
Such a child's command line carries MARKER, for the test to find it.
"""

import json
import os
import subprocess
import sys
import time

MODE, MARKER = sys.argv[1], sys.argv[2]
STDIN = sys.stdin.buffer
IGNORES_SIGTERM = (
    "import signal as s, time; s.signal(s.SIGTERM, s.SIG_IGN); print(flush=True); time.sleep(600)"
)


def forever(fd, chunk):
    while True:
        os.write(fd, chunk)


def main():
    if MODE == "random":
        while True:
            os.write(1, os.urandom(65536))
    elif MODE == "endless-stderr":
        forever(2, b"\x1b[31mno end " * 4096)
    elif MODE in ("endless-stdout", "agent-endless"):
        forever(1, b"x" * 65536)
    elif MODE == "stderr-flood":
        for i in range(20000):
            os.write(2, b"error %d \x1b]0;owned\x07\n" % i)
    elif MODE.startswith("banner="):
        os.write(1, b"Welcome to prod1, authorized use only\x1b[5m\n" * int(MODE[7:]))
    elif MODE.startswith("agent-clock="):
        agent(MODE[12:])
    elif MODE.startswith("agent-usr="):
        agent("now", float(MODE[10:]))
    elif MODE in ("stubborn", "stubborn-setsid"):
        stubborn(setsid=MODE == "stubborn-setsid")
    elif MODE == "orphan" or MODE.startswith("orphan-exit="):
        if os.fork() == 0:  # a daemon's double fork: the child leaves its grandchild behind
            os.setsid()
            stubborn()
            os._exit(0)
        os.wait()
        if MODE != "orphan":
            sys.exit(int(MODE.split("=")[1]))
    elif MODE == "leaves":
        if os.fork():
            os._exit(0)  # the command ends; its child holds the pipes and talks on
        os.setsid()
        stubborn()
    pump()


def stubborn(setsid=False):
    """A child that ignores SIGTERM (and its stdin's end), out of the group if ``setsid``;
    back once it does."""
    child = subprocess.Popen(
        [sys.executable, "-c", IGNORES_SIGTERM, MARKER],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        start_new_session=setsid,  # out of the group and the session
    )
    child.stdout.readline()


def pump():
    """The real pump, with one part of it gone wrong."""
    code = STDIN.read(int(STDIN.readline()))
    spec = json.loads(STDIN.readline())
    if MODE == "flood":
        spec["interval"] = 0.0002  # thousands of valid ticks a second
    ns = {"__name__": "pump"}
    exec(compile(code, "pump.py", "exec"), ns)
    if MODE.startswith("clock="):
        pack, bad = ns["pack"], float(MODE[6:])
        ns["pack"] = lambda wall, *rest: pack(bad, *rest)
    elif MODE.startswith("pong="):
        ns["listen"] = lambda stdin: lie_in_pongs(ns, stdin, float(MODE[5:]))
    elif MODE == "error-flood":
        run = ns["Ticks"].run
        ns["Ticks"].run = lambda self, sockets: [
            *(ns["send"](b"E", b"sock_diag: \x1b[2Jerror %d" % i) for i in range(20000)),
            run(self, sockets),
        ]
    elif MODE == "hello-random":
        ns["Ticks"].run = lambda self, sockets: forever(1, os.urandom(65536))

    class Request:
        def readline(self):
            return json.dumps(spec).encode()

        def __iter__(self):
            return iter(STDIN)

    ns["sys"] = type("sys", (), {"stdin": type("stdin", (), {"buffer": Request()})})
    ns["main"]()


def agent(clock, usr=1.0):
    """An installed agent's NDJSON stream, each frame stamped ``clock`` (``now``: its own), its
    cpu row's usr ``usr`` (a NaN or an infinity, written as JSON's NaN and Infinity), idle 50."""
    schema = {
        "cpu": [
            {"name": "usr", "unit": "%", "kind": "gauge"},
            {"name": "idle", "unit": "%", "kind": "gauge"},
        ]
    }
    header = {
        "sgmon_agent": 1,
        "hosts": [{"name": "far"}],
        "interval": 1.0,
        "schemas": {"far": schema},
    }
    print(json.dumps(header), flush=True)
    for seq in range(1, 600):
        t = time.time() if clock == "now" else float(clock)
        cpu = {"status": "ok", "rows": {"all": {"usr": usr, "idle": 50.0}}}
        frame = {
            "v": 1,
            "host": "far",
            "time": t,
            "seq": seq,
            "interval": 1.0,
            "collectors": {"cpu": cpu},
        }
        print(json.dumps(frame), flush=True)
        time.sleep(1 - time.time() % 1)


def lie_in_pongs(ns, stdin, t):
    for raw in stdin:
        ns["STATE"]["heard"] = time.monotonic()
        words = raw.split()
        if words[:1] == [b"ping"]:
            ns["send"](b"P", json.dumps({"pong": float(words[1]), "time": t}).encode())
    os._exit(0)


main()
