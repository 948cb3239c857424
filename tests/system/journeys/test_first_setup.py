"""The first-setup journey, as a newcomer walks it: README.md's "Watch your own primary and
standby", its config and the commands of its steps 5 and 6 read from the page itself, run from
this machine (the jump host) against two database hosts that are not this one.

Each database host is a network namespace with its own sshd, hostname, ``oracle`` user and
/proc/diskstats, and no sgmon (``kits.dbhosts``); the README's devices exist there and not here.
Only what cannot be the same here is changed in the README's config: the host part of each ssh
target (an address), the ssh options (port, key, known_hosts) and the DSNs, which open sgmon's
V$-shaped stand-in (``standin:PATH``), whose logins are checked as a database checks them.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from kits import readme
from kits.dbhosts import DbHosts, database_hosts
from paths import REPO

from sgmon.sim.standin import StandIn

pytestmark = pytest.mark.root

PORT = 46344
PASSWORD = "Journey-1st-setup"
TIMEOUT_S = 60
RECORD_S = 15
"""The --duration added to the README's record command so that it ends: long enough for both
pumps to start and tick twice on a loaded machine (8 s was not, at a load average of 10)."""
SECTION = readme.section((REPO / "README.md").read_text(), "Watch your own primary and standby")
STEPS = readme.steps(SECTION)
CONFIG = tomllib.loads(readme.toml_block(SECTION))
DEVICES = {h["name"]: d for h in CONFIG["host"] for d in h["devices"]}
"""The README's hosts and the redo device it gives each (one each)."""


def _command(step: int, starting: str) -> str:
    """The one command of a README step that starts so."""
    found = [c for c in readme.commands(STEPS[step]) if c.startswith(starting)]
    assert len(found) == 1, (step, readme.commands(STEPS[step]))
    return found[0]


def _argv(command: str) -> list[str]:
    """An ``sgmon ...`` command of the README, run by this interpreter."""
    words = shlex.split(command)
    assert words[0] == "sgmon", command
    return [sys.executable, "-m", "sgmon", *words[1:]]


def _localized(block: str, lab: DbHosts, dsns: dict[str, str]) -> str:
    """The README's config with the host part of each ssh target, the ssh options and the DSNs
    changed, and nothing else (checked by parsing both)."""
    out = block
    expected = tomllib.loads(block)
    for h, want in zip(CONFIG["host"], expected["host"], strict=True):
        user = h["ssh"].rpartition("@")[0]
        target, options = f"{user}@{lab.hosts[h['name']].ip}", lab.ssh_options()
        line = re.search(rf'^ssh = "{re.escape(h["ssh"])}".*$', out, re.MULTILINE)
        assert line is not None, h["ssh"]
        out = out.replace(
            line.group(0), f'ssh = "{target}"\nssh_options = {json.dumps(options)}', 1
        )
        out = out.replace(f'dsn = "{h["db"]["dsn"]}"', f'dsn = "{dsns[h["name"]]}"', 1)
        want.update(ssh=target, ssh_options=options)
        want["db"]["dsn"] = dsns[h["name"]]
    assert tomllib.loads(out) == expected
    return out


@dataclass
class Walk:
    """The jump host's directory holding sgmon.toml, the shell the newcomer exported the
    password in, the database hosts."""

    cwd: Path
    env: dict[str, str]
    lab: DbHosts

    def run(self, argv: list[str], timeout: float = TIMEOUT_S) -> subprocess.CompletedProcess:
        return subprocess.run(
            argv, cwd=self.cwd, env=self.env, capture_output=True, text=True, timeout=timeout,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip


def _standins(tmp: Path, user: str) -> dict[str, str]:
    """The README's databases as stand-ins, their DSNs by host: the primary open to ``user``,
    the standby mounted and taking ``user`` as SYSDG (its mode in the README); the primary's
    SYNC destination names the standby's service as a DBA's LOG_ARCHIVE_DEST_2 does."""
    dsns = {}
    for h in CONFIG["host"]:
        path = tmp / f"{h['name']}.db"
        service = h["db"]["dsn"].rpartition("/")[2]
        if h["role"] == "primary":
            db = StandIn(str(path), db_unique_name=service)
            db.add_user(user, PASSWORD)
            standby = next(s for s in CONFIG["host"] if s["role"] == "standby")
            dest = standby["db"]["dsn"]
            db.set_dest(2, db_unique_name=dest.rpartition("/")[2], destination=dest)
        else:
            db = StandIn(str(path), role="PHYSICAL STANDBY", db_unique_name=service)
            db.add_user(user, PASSWORD, admin=[h["db"]["mode"]], grants=())
        db.close()
        dsns[h["name"]] = f"standin:{path}"
    return dsns


@pytest.fixture
def walk(tmp_path: Path) -> Iterator[Walk]:
    """Steps 1-4 done: sgmon installed here (this interpreter), the database user created, ssh
    given a key, sgmon.toml written from the README; the password exported as step 5 says."""
    users = {h["db"]["user"] for h in CONFIG["host"]}
    assert len(users) == 1, users
    dsns = _standins(tmp_path, users.pop())
    exported = [c for c in readme.commands(STEPS[5]) if c.startswith("export ")]
    assert len(exported) == 1, STEPS[5]
    variable = exported[0].split()[1].split("=")[0]
    with database_hosts(tmp_path, DEVICES, PORT) as lab:
        here = Path("/proc/diskstats").read_text().split()
        for device in DEVICES.values():  # the README's devices are the database hosts', not ours
            assert device not in here and not Path(f"/sys/class/block/{device}").exists()
        cwd = tmp_path / "jump"
        cwd.mkdir()
        cfg = cwd / "sgmon.toml"
        cfg.write_text(_localized(readme.toml_block(SECTION), lab, dsns))
        cfg.chmod(0o600)
        (tmp_path / "home").mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("SGMON_")}
        env.update(HOME=str(tmp_path / "home"), SGMON_RUNTIME_DIR=str(tmp_path / "run"))
        env[variable] = PASSWORD
        yield Walk(cwd, env, lab)


def test_step_5_config_check_says_ok_when_every_host_and_login_answered(walk: Walk) -> None:
    r = walk.run(_argv(_command(5, "sgmon config --check")))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.rstrip().endswith("\nok") and r.stderr == "", r.stdout + r.stderr
    for h in CONFIG["host"]:  # each host's own sshd, hostname and python3 (no sgmon there)
        name, user = h["name"], h["ssh"].rpartition("@")[0]
        line = f"  {name}: ssh {user}@{walk.lab.hosts[name].ip}: python3 3."
        assert line in r.stdout and f" answers on {name}\n" in r.stdout, r.stdout
    logins = r.stdout[r.stdout.index("database logins:") :]
    assert logins.count("version 19.0.0.0.0: reads ") == 2, logins


def test_step_6_record_keeps_each_hosts_own_device_and_cpu(walk: Walk, tmp_path: Path) -> None:
    """The README's command with a --duration added, writing where it says (/var/tmp/sgmon, in
    a mount namespace of its own whose /var/tmp is the test's)."""
    argv = [*_argv(_command(6, "sgmon record")), "--duration", f"{RECORD_S}s"]
    where = argv[argv.index("--dir") + 1]
    assert where.startswith("/var/tmp/"), argv
    var_tmp = tmp_path / "var-tmp"
    var_tmp.mkdir()
    private = ["unshare", "--mount", "--propagation", "private", "sh", "-ec",
               'mount --bind "$1" /var/tmp; shift; exec "$@"', "sh", str(var_tmp)]  # fmt: skip
    r = walk.run([*private, *argv], timeout=RECORD_S + TIMEOUT_S)
    assert r.returncode == 0, r.stderr
    archive = var_tmp / Path(where).relative_to("/var/tmp")
    for name, device in DEVICES.items():
        disks = _rows(archive / name, "disk")
        mine = [row for row in disks if row["instance"] == device]
        assert len(mine) >= 2, (name, disks[:3])
        assert any(float(row["w_s"] or 0) > 0 for row in mine), mine  # its rows move
        others = set(DEVICES.values()) - {device}
        assert not [row for row in disks if row["instance"] in others], name
        assert len(_rows(archive / name, "cpu")) >= 2, name


def _rows(host_dir: Path, collector: str) -> list[dict[str, str]]:
    """The rows a recording holds of one host's collector."""
    files = sorted(host_dir.glob(f"{collector}_*.csv"))
    assert files, f"no {collector} CSV in {host_dir}"
    rows: list[dict[str, str]] = []
    for f in files:
        with open(f, newline="") as fh:
            rows += csv.DictReader(fh)
    return rows


def test_a_host_down_and_a_wrong_password_are_each_one_line_then_a_count(walk: Walk) -> None:
    """The same walk with the standby's sshd stopped and a wrong password exported: every
    check still tried, no ok, one line each, the count last, exit 3."""
    standby = next(h["name"] for h in CONFIG["host"] if h["role"] == "standby")
    primary = next(h["name"] for h in CONFIG["host"] if h["role"] == "primary")
    walk.lab.hosts[standby].stop_sshd()
    variable = next(k for k, v in walk.env.items() if v == PASSWORD)
    walk.env[variable] = wrong = f"Wrong-{PASSWORD}"
    r = walk.run(_argv(_command(5, "sgmon config --check")))
    assert r.returncode == 3, r.stdout + r.stderr
    assert not r.stdout.rstrip().endswith("ok")
    errors = r.stderr.splitlines()
    assert all(line.startswith("sgmon: ") for line in errors), errors
    assert sum("checks failed" in line for line in errors) == 1
    assert errors[-1] == (
        f"sgmon: 3 of 4 checks failed: ssh {standby}, database {primary}, database {standby}"
    ), errors
    assert f" answers on {primary}\n" in r.stdout
    assert re.search(rf"^  {standby}: ssh .*Connection refused$", r.stdout, re.MULTILINE)
    assert r.stdout.count(": ORA-01017 wrong user name or password") == 2, r.stdout
    everything = r.stdout + r.stderr
    assert "retrying" not in everything and "next attempt" not in everything, everything
    assert PASSWORD not in everything and wrong not in everything
