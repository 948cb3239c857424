"""Docs that cannot rot: every example in README.md and docs/*.md is run.

A ```toml block is a config example and goes through ``sgmon config --check --offline`` (the
file alone: its hosts and databases do not exist here; a block that is not an sgmon.toml, such
as a pyproject.toml entry point, is named in ``NOT_CONFIG``).  Every line of a code block that
starts with ``sgmon`` (also as ``$ sgmon`` or ``primary:  sgmon``) is a command shown to the
reader and is run, in one scratch directory per page and in page order (so a ``record`` feeds
the ``replay`` below it): ``record``, ``serve``, ``agent`` and ``check`` against the simulated
pair where they name no hosts, bounded by ``--duration`` and a timeout.
What cannot run here (the dashboard, root, a second machine) is skipped by ``SKIP``, with the
reason, never silently; a marker that matches no command fails, so the list cannot rot either.
Commands in running text (`sgmon record`) are names, not examples, and are not run.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from paths import REPO

ROOT = REPO
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SGMON = [sys.executable, "-m", "sgmon"]

NOT_CONFIG = {"[project.entry-points": "a pyproject.toml entry point, not an sgmon.toml"}
SKIP = {
    "sgmon lab --scenario": "needs root and network namespaces (the lab's own tests run it)",
    "sgmon lab --fault": "needs root and network namespaces (the lab's own tests run it)",
    "sgmon probe server": "serves until stopped (the probe's own tests run server and client)",
    "sgmon probe client stby:": "needs a probe server on the standby",
}
INTERACTIVE = ("demo", "replay", "dashboard")
"""The dashboard takes the terminal: skipped unless a plain-text option is given."""
PLAIN = ("--summary", "--fields", "--at", "--list")
NEEDS_HOSTS = ("record", "serve", "agent", "check")
BOUND_S = 3
TIMEOUT_S = 180


def code_blocks(text: str) -> list[tuple[str, str]]:
    """``(language, body)`` of each fenced block, ``("", body)`` of each indented one."""
    out: list[tuple[str, str]] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        fence = re.match(r"^```(\w*)", lines[i])
        if fence:
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.append((fence.group(1), "\n".join(lines[i + 1 : j])))
            i = j + 1
        elif lines[i].startswith("    ") and (i == 0 or not lines[i - 1].strip()):
            j = i
            while j < len(lines) and (lines[j].startswith("    ") or not lines[j].strip()):
                j += 1
            out.append(("", "\n".join(line[4:] for line in lines[i:j])))
            i = j
        else:
            i += 1
    return out


def commands(text: str) -> list[str]:
    """The sgmon command lines of a page's code blocks, without prompt, label or comment."""
    found = []
    for lang, body in code_blocks(text):
        if lang == "toml":
            continue
        for line in body.split("\n"):
            m = re.match(r"^\s*(?:\$ |\w+:\s+)?(sgmon(?:\s.*)?)$", line)
            if m:
                found.append(re.split(r"\s{2,}|\s#", m.group(1).strip())[0])
    return found


def configs(text: str) -> list[str]:
    return [body for lang, body in code_blocks(text) if lang == "toml"]


def _skip_reason(cmd: str) -> str | None:
    for marker, why in SKIP.items():
        if cmd.startswith(marker):
            return why
    args = shlex.split(cmd)[1:]
    if not args or (args[0] in INTERACTIVE and not set(args) & set(PLAIN)):
        return "the dashboard: interactive (the TUI tests drive it in tmux)"
    return None


def _runnable(cmd: str) -> list[str]:
    """The command as run here: against the simulated pair where it names no hosts, bounded."""
    args = shlex.split(cmd)[1:]
    if args[0] in NEEDS_HOSTS and not {"--simulate", "--from", "--config"} & set(args):
        args += ["--simulate", "healthy"]
    if args[0] in ("record", "serve", "agent") and "--duration" not in args:
        args += ["--duration", f"{BOUND_S}s"]
    return [*SGMON, *args]


def _run(
    argv: list[str], tmp: Path, exported: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """A command in the scratch directory, with its own runtime dir and home, no terminal, and
    the variables a reader who followed the page has exported."""
    env = dict(os.environ, SGMON_RUNTIME_DIR=str(tmp / "run"), HOME=str(tmp), **(exported or {}))
    env.pop("SGMON_CONFIG", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=tmp, env=env,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def _ids(pages: list[Path]) -> list[str]:
    return [str(p.relative_to(ROOT)) for p in pages]


def test_pages_have_examples() -> None:
    """The extraction finds what the pages show (an empty harvest would pass vacuously)."""
    readme = (ROOT / "README.md").read_text()
    assert configs(readme), "the README shows a config example"
    everything = [c for p in PAGES for c in commands(p.read_text())]
    assert any(c.startswith("sgmon record") for c in everything)
    assert "sgmon config --check --simulate cascade-iops-cap" in everything


def test_skip_markers_are_used() -> None:
    """Every skip marker matches a command a page shows: no stale exemptions."""
    everything = [c for p in PAGES for c in commands(p.read_text())]
    unused = [m for m in SKIP if not any(c.startswith(m) for c in everything)]
    assert not unused, f"skip markers no page uses: {unused}"
    texts = [b for p in PAGES for b in configs(p.read_text())]
    unused = [m for m in NOT_CONFIG if not any(b.lstrip().startswith(m) for b in texts)]
    assert not unused, f"NOT_CONFIG markers no page uses: {unused}"


@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
def test_config_examples_pass_config_check(page: Path, tmp_path: Path) -> None:
    """Each config example is accepted by `sgmon config --check --offline` (exit 0, no `sgmon:`
    line): the file alone, as its hosts and databases do not exist here."""
    for n, body in enumerate(configs(page.read_text())):
        if any(body.lstrip().startswith(m) for m in NOT_CONFIG):
            continue
        cfg = tmp_path / f"example{n}.toml"
        cfg.write_text(body)
        cfg.chmod(0o600)
        # the page says to export the password variables it names (none is set here, and
        # config --check refuses an empty one)
        exported = dict.fromkeys(re.findall(r'password_env\s*=\s*"(\w+)"', body), "not-a-password")
        argv = [*SGMON, "config", "--check", "--offline", "--config", str(cfg)]
        r = _run(argv, tmp_path, exported)
        assert r.returncode == 0, f"{page.name} example {n + 1}: {r.stderr.strip()}"
        assert "sgmon:" not in r.stderr and r.stdout.rstrip().endswith("ok")


@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
def test_commands_run(page: Path, tmp_path: Path) -> None:
    """Each command shown runs to its end without a usage error; `check` may report findings."""
    skipped: list[str] = []
    for cmd in commands(page.read_text()):
        if why := _skip_reason(cmd):
            skipped.append(f"{cmd}: {why}")
            continue
        argv = _runnable(cmd)
        r = _run(argv, tmp_path)
        ok = {0, 1, 2} if argv[len(SGMON)] == "check" else {0}
        assert r.returncode in ok and "usage:" not in r.stderr, (
            f"{page.name}: `{shlex.join(argv[len(SGMON) :])}` exit {r.returncode}: "
            f"{r.stderr.strip()[-500:]}"
        )
        if argv[len(SGMON)] == "check":
            assert r.stdout.strip(), f"{cmd}: printed nothing"
    if skipped:
        print(f"{page.name}: skipped", *skipped, sep="\n  ")
