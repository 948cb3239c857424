"""Exit codes and messages tell the truth: argparse mistakes are one ``sgmon:`` line, an
unreachable database is exit 3, ``status --format json`` is JSON, a state stamped in the future is
stale; and nothing sgmon prints or writes repeats a password."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sgmon.readers.procfile import start_time
from sgmon.status import state_text


def _sgmon(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None):
    return subprocess.run(
        [sys.executable, "-m", "sgmon", *args],
        capture_output=True, text=True, timeout=90, env=env, cwd=cwd,
    )  # fmt: skip


@pytest.mark.parametrize(
    "argv",
    [
        ["record", "--rotate", "-1h"],
        ["check", "--format", "xml"],
        ["status", "--format", "xml"],
        ["serve", "--no-such-option"],
        ["import", "nope"],
        ["report"],
    ],
)
def test_argument_errors_are_one_line_exit_2(argv: list[str], tmp_path: Path) -> None:
    r = _sgmon(*argv, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sgmon: "), r.stderr
    assert "--help" in lines[0] and "Traceback" not in r.stderr


def test_a_negative_rotation_written_with_equals_is_refused_by_its_rule(tmp_path: Path) -> None:
    r = _sgmon("record", "--rotate=-1h", "--simulate", "healthy", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "-1h" in r.stderr, r.stderr


def test_check_with_an_unreachable_database_exits_3(tmp_path: Path) -> None:
    """The OS collectors answer, the database does not: check says so in one line and exits 3,
    as the README promises, instead of 0 and nothing."""
    cfg = tmp_path / "sgmon.toml"
    cfg.write_text(
        '[[host]]\nname = "prim1"\nrole = "primary"\n'
        '[host.db]\ndsn = "127.0.0.1:9/NOPE"\nuser = "u"\npassword_env = "H31B_PW"\n'
        'call_timeout = "1s"\n'
    )
    cfg.chmod(0o600)
    env = dict(os.environ, H31B_PW="x")
    r = _sgmon("check", "--config", str(cfg), "--seconds", "3", env=env, cwd=tmp_path)
    assert r.returncode == 3, (r.returncode, r.stdout, r.stderr)
    lines = [x for x in r.stderr.splitlines() if "prim1" in x]
    assert len(lines) == 1 and lines[0].startswith("sgmon: ") and "database" in lines[0], r.stderr
    assert "Traceback" not in r.stderr


def _host(written: float, interval: float = 1.0, t: float | None = None) -> dict:
    return {
        "role": "primary", "tag": "P", "time": written if t is None else t,
        "written": written, "interval": interval, "failing": [], "items": [("lfs", "1/2ms", "ok")],
    }  # fmt: skip


def _publish(tmp_path: Path, hosts: dict[str, dict]) -> None:
    me = os.getpid()
    (tmp_path / f"state-{me}.txt").write_text(state_text(me, start_time(me) or "?", hosts))


def test_status_json_is_json_and_a_future_stamp_is_stale(tmp_path: Path) -> None:
    now = time.time()
    _publish(
        tmp_path,
        {
            "future": _host(now + 86400),
            "nan": _host(float("nan"), t=float("-inf")),
            "wild": _host(now, interval=float("inf")),
            "fine": _host(now),
        },
    )
    env = dict(os.environ, SGMON_RUNTIME_DIR=str(tmp_path))
    r = _sgmon("status", "--format", "json", env=env)
    assert r.returncode == 0
    state = json.loads(r.stdout, parse_constant=lambda c: pytest.fail(f"{c} is not JSON"))
    stale = {k: v["stale"] for k, v in state["hosts"].items()}
    assert stale == {"future": True, "nan": True, "wild": True, "fine": False}
    plain = _sgmon("status", env=env).stdout
    assert "stale" in plain and "-" not in plain.replace("P:", "")


def test_redact_hides_passwords_and_keeps_the_rest() -> None:
    from sgmon.errors import redact
    from sgmon.model import CollectorResult, Event, Status

    for text, secret in (
        ("ORA-12541: cannot connect scott/tiger@db1:1521/PROD", "tiger"),
        ("connect failed: password=hunter2; retrying", "hunter2"),
        ('{"password": "s3cr3t"}', "s3cr3t"),
        ("ALTER USER x IDENTIFIED BY Welcome1", "Welcome1"),
    ):
        assert secret not in redact(text) and "***" in redact(text)
    for text in ("db1:1521/PROD", "/u01/app/oracle/trace", "password_env = PW", "rto 204 ms"):
        assert redact(text) == text
    assert "tiger" not in Event(0.0, "oracle_waits", "error", "", "scott/tiger@db:1/s").text
    assert "tiger" not in (CollectorResult(Status.ERROR, error="x scott/tiger@db:1/s").error or "")


def test_a_password_in_the_dsn_is_refused_and_never_printed(tmp_path: Path) -> None:
    cfg = tmp_path / "sgmon.toml"
    cfg.write_text('[[host]]\nname = "p"\n[host.db]\ndsn = "scott/tiger@db1:1521/PROD"\n')
    cfg.chmod(0o600)
    for argv in (
        ["config", "--check", "--config", str(cfg)],
        ["import", "awr", "--dsn", "scott/tiger@db1:1521/PROD", "--dir", str(tmp_path / "a")],
    ):
        r = _sgmon(*argv, cwd=tmp_path)
        assert r.returncode == 2, r.stderr
        assert "tiger" not in r.stdout + r.stderr
        assert r.stderr.count("\n") == 1 and "password_env" in r.stderr, r.stderr


def test_what_sgmon_writes_is_private(tmp_path: Path) -> None:
    """A recording's directories are 0700 and its files 0600, whatever the umask of the shell;
    SGMON_UMASK asks for other modes."""
    env = dict(os.environ, SGMON_RUNTIME_DIR=str(tmp_path / "run"))
    arch = tmp_path / "arch"
    argv = ["record", "--simulate", "healthy", "--duration", "3s", "--speed", "10", "--quiet"]
    r = subprocess.run(
        ["sh", "-c", 'umask 022; exec "$@"', "sh", sys.executable, "-m", "sgmon", *argv,
         "--dir", str(arch)],
        capture_output=True, text=True, timeout=90, env=env,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    modes = {p: stat.S_IMODE(p.stat().st_mode) for p in [arch, *arch.rglob("*")]}
    assert len(modes) > 3
    for p, mode in modes.items():
        assert mode == (0o700 if p.is_dir() else 0o600), (p, oct(mode))
    shared = tmp_path / "shared"
    env["SGMON_UMASK"] = "022"
    r = _sgmon(*argv, "--dir", str(shared), env=env)
    assert r.returncode == 0 and stat.S_IMODE((shared / "meta.json").stat().st_mode) == 0o644


def test_a_name_with_a_newline_or_escape_stays_one_escaped_line(tmp_path: Path) -> None:
    r = _sgmon("check", "--from", str(tmp_path / "a\nb\x1b[31mred"), cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "\x1b" not in r.stderr and "a\\nb\\x1b[31mred" in r.stderr, r.stderr
