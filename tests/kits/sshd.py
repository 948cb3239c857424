"""Debian's sshd in a network namespace, for the tests that reach hosts over real ssh: a key for
the user, an sshd with a host key of its own and the line known_hosts needs for it, and a
python3 that sees no site-packages (a host where nothing was installed for sgmon)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from sgmon.lab.kernel import sh


def keygen(path: Path) -> str:
    """A new ed25519 key without passphrase at ``path``; its public line."""
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True, timeout=20
    )
    return path.with_suffix(".pub").read_text().strip()


def bare_python(tmp: Path) -> Path:
    """A PATH directory whose python3 is the system one without its site directories: a host
    where nothing was installed for sgmon."""
    bindir = tmp / "bare-bin"
    bindir.mkdir()
    (bindir / "python3").write_text('#!/bin/sh\nexec /usr/bin/python3 -S "$@"\n')
    (bindir / "python3").chmod(0o755)
    return bindir


def veth(ns: str, here: str, there: str, here_ip: str, ip: str) -> None:
    """A link from this machine (``here``, at ``here_ip``) into namespace ``ns`` (``there``, at
    ``ip``), both /24 and up, with the namespace's loopback up; it goes with the namespace."""
    sh("ip", "link", "add", here, "type", "veth", "peer", "name", there, "netns", ns)
    sh("ip", "addr", "add", f"{here_ip}/24", "dev", here)
    sh("ip", "link", "set", here, "up")
    for cmd in (("addr", "add", f"{ip}/24", "dev", there), ("link", "set", there, "up")):
        sh("ip", *cmd, ns=ns)
    sh("ip", "link", "set", "lo", "up", ns=ns)


def sshd(
    ns: str, ip: str, port: int, d: Path, authorized: Path, extra: str = "",
    wrap: Sequence[str] = (),
) -> tuple[subprocess.Popen, str]:  # fmt: skip
    """sshd in netns ``ns`` on ``ip:port``, its files in the new directory ``d``, taking the keys
    in ``authorized``; ``extra`` sshd_config lines; ``wrap`` a command that execs the rest (a
    namespace of its own, a mount).  The process and its known_hosts line, once it listens."""
    d.mkdir()
    keygen(d / "host_key")
    cfg = d / "sshd_config"
    cfg.write_text(
        f"Port {port}\nListenAddress {ip}\nHostKey {d / 'host_key'}\n{extra}"
        f"AuthorizedKeysFile {authorized}\nPidFile none\nUsePAM no\nStrictModes no\n"
        "PermitRootLogin prohibit-password\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nLogLevel ERROR\n"
    )
    Path("/run/sshd").mkdir(exist_ok=True)
    proc = subprocess.Popen(
        ["ip", "netns", "exec", ns, *wrap, "/usr/sbin/sshd", "-D", "-e", "-f", str(cfg)],
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while f"{ip}:{port}" not in sh("ss", "-Hltn", ns=ns, check=False):
        assert proc.poll() is None and time.monotonic() < deadline, "sshd did not start"
        time.sleep(0.1)
    host_pub = (d / "host_key.pub").read_text().split()
    return proc, f"[{ip}]:{port} {host_pub[0]} {host_pub[1]}\n"
