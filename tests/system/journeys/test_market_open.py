"""Journey: market open, watched the way a DBA team watches it.

A SYNC pair runs in the lab (two network namespaces, real sockets, real redo writes, a standby
log device whose backing disk the blkio throttle can cap), each host reached from here over its
own sshd with nothing of sgmon installed, each database through its stand-in with a login of its
own.  While `sgmon record`, the dashboard (in tmux), the status line and `sgmon serve` scraped by
a real Prometheus with the shipped alerts all run, the standby's volume hits an IOPS cap, then
the link starts losing packets.  What each shows is what the team acts on:

- under the cap: the dashboard's first finding, the status line and the firing alert name the
  standby's log device;
- under the loss: the status line and the firing alert name the retransmissions;
- after: the recording's report opens with the cause that cost commits the most, the cap, as
  `check --from` does.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import nslab
import pytest
from importlab import report_summary
from kits.prom import Api, documented_fleet, prometheus, stop
from kits.sshd import bare_python, keygen, sshd, veth
from tmuxkit import Tmux

from sgmon.sim.standin.logins import Users

pytestmark = [pytest.mark.root, pytest.mark.slow]

PASSWORD = "Market-open-2026"
PASSWORD_ENV = "SGMON_MARKET_PW"
SSH_PORT = 46345
NAME = "MARKET"
SETTLE_S = 90.0
"""Seconds each phase may take to show on every screen: a finding holds 3 ticks, an alert 15 s
(its `for:`), Prometheus scrapes and evaluates every second, on two loaded cores."""


@dataclass
class Desk:
    """What the team has open: the lab, its hosts' devices, and every sgmon watching it."""

    lab: object
    config: Path
    archive: Path
    env: dict[str, str]
    api: Api
    tmux: Tmux
    devices: dict[str, str]
    procs: list[subprocess.Popen] = field(default_factory=list)

    def status(self) -> str:
        """`sgmon status --name MARKET`, as tmux runs it."""
        r = subprocess.run(
            [sys.executable, "-m", "sgmon", "status", "--name", NAME],
            capture_output=True, text=True, timeout=30, env=self.env,
        )  # fmt: skip
        return r.stdout.strip()

    def first_finding(self) -> str:
        """The dashboard's first finding, its lines joined, as tmux shows it."""
        lines = self.tmux.screen().splitlines()
        at = next((i for i, line in enumerate(lines) if "FINDINGS" in line), None)
        if at is None:
            return ""
        entry: list[str] = []
        for line in lines[at + 1 :]:
            text = line.strip("│╰─╯ ")
            if entry and re.match(r"(?:CRIT|WARN|INFO) ", text):
                break
            entry.append(text)
        return " ".join(" ".join(entry).split())

    def firing(self, alerts: tuple[str, ...]) -> list[dict]:
        """The firing alerts of MARKET among ``alerts``."""
        return [
            a for a in self.api.alerts()
            if a["state"] == "firing" and a["labels"]["alertname"] in alerts
            and a["labels"].get("dg_config") == NAME
        ]  # fmt: skip


def _until(check: Callable[[], bool], what: str, timeout: float, desk: Desk) -> None:
    """Poll ``check`` every second until it holds; fail with what every screen shows."""
    deadline = time.monotonic() + timeout
    while not check():
        for p in desk.procs:
            assert p.poll() is None, f"{p.args[:4]} exited {p.returncode}"
        if time.monotonic() > deadline:
            pytest.fail(
                f"{what} within {timeout:.0f} s; status: {desk.status()!r}; first finding: "
                f"{desk.first_finding()!r}; alerts: {[a['labels'] for a in desk.api.alerts()]}"
            )
        time.sleep(1)


def _reach(lab, tmp: Path) -> tuple[dict[str, str], list[str]]:
    """An sshd in each lab namespace on a link of its own to this machine (a management network
    beside the redo link), logins by key as root with a python3 that has no sgmon: each host's
    address, and the ssh options that reach them."""
    key = tmp / "key"
    authorized = tmp / "authorized_keys"
    authorized.write_text(keygen(key) + "\n")
    authorized.chmod(0o644)
    extra = f"SetEnv PATH={bare_python(tmp)}:/usr/bin:/bin\n"
    tag = uuid.uuid4().hex[:4]
    k = 150 + int(tag, 16) % 50
    known, addresses = "", {}
    for i, h in enumerate(lab.hosts()):
        ns = lab.namespace(h.side)
        here_ip, ip = f"10.{k}.{30 + i}.1", f"10.{k}.{30 + i}.2"
        veth(ns, f"vm{tag}{i}", f"vn{tag}{i}", here_ip, ip)
        _, line = sshd(ns, ip, SSH_PORT, tmp / f"sshd-{h.name}", authorized, extra)
        known += line
        addresses[h.name] = ip
    (tmp / "known_hosts").write_text(known)
    options = ["-F", "/dev/null", "-p", str(SSH_PORT), "-i", str(key), "-o", "IdentitiesOnly=yes",
               "-o", f"UserKnownHostsFile={tmp / 'known_hosts'}"]  # fmt: skip
    return addresses, options


def _config(lab, addresses: dict[str, str], options: list[str]) -> str:
    """The sgmon.toml a DBA writes for the pair (README's shape): ssh, devices, logins; the
    collectors of CPU time off (see inside)."""
    out = [f'name = "{NAME}"', "[dataguard]", f"ports = [{lab.opts.port}]"]
    # The two hosts are namespaces of one machine whose CPUs the other tests (and, here, every
    # watcher of the journey) share: CPU starvation there would be true, and not the fault this
    # journey injects; the lab's own runs give each host a CPU of its own instead.
    out += [f"[collectors.{c}]\nenabled = false" for c in ("cpu", "procs")]
    for h in lab.hosts():
        users = Users(str(h.db), "19.0.0.0.0", (0, "PROD"))  # the DBA's CREATE USER and GRANT
        standby = h.role != "primary"
        users.add_user("C##SGMON", PASSWORD, admin=["sysdg"] if standby else [],
                       grants=() if standby else ("SELECT_CATALOG_ROLE",))  # fmt: skip
        users.close()
        out += [
            "[[host]]", f'name = "{h.name}"', f'role = "{h.role}"',
            f'ssh = "root@{addresses[h.name]}"', f"ssh_options = {json.dumps(options)}",
            f'devices = ["{h.device}"]', "[host.db]", f'dsn = "standin:{h.db}"',
            'user = "c##sgmon"', f'password_env = "{PASSWORD_ENV}"',
            *(['mode = "sysdg"'] if standby else []),
        ]  # fmt: skip
    return "\n".join(out) + "\n"


@pytest.fixture
def desk(tmp_path: Path) -> Iterator[Desk]:
    """The lab, reached over ssh, with record, serve, Prometheus and the dashboard running."""
    nslab.require_lab()
    nslab.require_root("ssh", "ssh-keygen", "/usr/sbin/sshd", "prometheus", "tmux")
    from sgmon.lab.run import Lab, LabOptions

    with Lab(LabOptions(duration=600)) as lab:
        addresses, options = _reach(lab, tmp_path)
        etc = tmp_path / "etc"
        etc.mkdir()
        cfg, port = documented_fleet(etc, tmp_path, _config(lab, addresses, options))
        run = tmp_path / "run"
        run.mkdir(mode=0o700)
        env = {k: v for k, v in os.environ.items() if not k.startswith("SGMON_")}
        env.update({PASSWORD_ENV: PASSWORD, "SGMON_RUNTIME_DIR": str(run)})
        sgmon = [sys.executable, "-m", "sgmon"]
        procs = [
            subprocess.Popen([*sgmon, "record", "--config", str(cfg), "--dir",
                              str(tmp_path / "rec"), "--duration", "600s"],
                             env=env, stderr=subprocess.PIPE, text=True),
            subprocess.Popen([*sgmon, "serve", "--config", str(cfg), "--listen",
                              f"127.0.0.1:{port}", "--duration", "600s"],
                             env=env, stderr=subprocess.DEVNULL),
        ]  # fmt: skip
        prom, api = prometheus(etc / "prometheus.yml", tmp_path / "tsdb")
        t = Tmux(f"market{uuid.uuid4().hex[:4]}")
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items() if "SGMON_" in k)
        t.start(f"cd {shlex.quote(str(tmp_path))} && env {exports} "
                f"{shlex.quote(sys.executable)} -m sgmon --config {shlex.quote(str(cfg))}; "
                "echo EXITED $?; sleep 600", 120, 40)  # fmt: skip
        devices = {h.name: h.device for h in lab.hosts()}
        try:
            yield Desk(lab, cfg, tmp_path / "rec", env, api, t, devices, procs)
        finally:
            t.kill()
            stop([*procs, prom])


def test_the_cause_on_every_screen_then_first_in_the_report(desk: Desk, tmp_path: Path) -> None:
    lab, standby_disk = desk.lab, desk.devices["standby"]
    _until(desk.api.ready, "Prometheus ready", 60, desk)
    _until(
        lambda: len(desk.api.query(f'sgmon_host_up{{dg_config="{NAME}"}} == 1')) == 2,
        "both hosts up in Prometheus", SETTLE_S, desk,
    )  # fmt: skip
    _until(lambda: "FINDINGS" in desk.tmux.screen(), "the dashboard drawn", 30, desk)
    time.sleep(10)  # a healthy baseline
    assert "<- standby disk" not in desk.status(), desk.status()  # not before the cap

    lab.fault("iops")
    cap = ("SgmonCommitsSlowedByStandbyIO", "SgmonCommitsSlowedByStandbyIOCritical")
    _until(
        lambda: f"<- standby disk {standby_disk}" in desk.status()
        and f"standby disk {standby_disk}" in desk.first_finding()
        and bool(desk.firing(cap)),
        "the cap named by the status line, the dashboard and an alert", SETTLE_S, desk,
    )  # fmt: skip
    alert = desk.firing(cap)[0]
    assert alert["labels"]["host"] == "standby", alert
    assert desk.first_finding().startswith(("CRIT standby:", "WARN standby:")), desk.first_finding()

    lab.fault("iops", on=False)
    lab.fault("loss")
    loss = ("SgmonCommitsSlowedByRetransmits", "SgmonCommitsSlowedByRetransmitsCritical")
    _until(
        lambda: "<- DG socket retransmits" in desk.status() and bool(desk.firing(loss)),
        "the loss named by the status line and an alert", SETTLE_S, desk,
    )  # fmt: skip
    lab.fault("loss", on=False)
    time.sleep(5)

    recorder = desk.procs[0]
    recorder.send_signal(signal.SIGTERM)
    _, err = recorder.communicate(timeout=60)
    assert recorder.returncode == 0, err
    summary = report_summary(desk.archive, desk.config, tmp_path / "report.html")
    first = summary.split(". ")[0]
    assert "standby" in first and standby_disk in summary.split("Cause:")[-1][:200], summary
    r = subprocess.run(
        [sys.executable, "-m", "sgmon", "check", "--from", str(desk.archive), "--config",
         str(desk.config), "--format", "json"],
        capture_output=True, text=True, timeout=120, env=desk.env,
    )  # fmt: skip
    lead = json.loads(r.stdout)["findings"][0]
    assert (lead["rule"], lead["host"]) == ("standby_io", "standby"), lead
