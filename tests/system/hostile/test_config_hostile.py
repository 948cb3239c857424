"""A hostile-config corpus: every mistake is one ``sgmon:`` line naming the file and the key,
from ``config --check`` and from a command alike (one schema), with no traceback, no hang and
nothing of the user's deleted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import REPO

from sgmon.config import SCHEMA, check_config, load_config, validate
from sgmon.errors import ConfigError

HOST = '[[host]]\nname = "prim1"\n'
DB = HOST + '[host.db]\ndsn = "prim1:1521/PROD"\npassword_env = "PW"\n'

# (case id, the config text, the key the one line must name)
CASES: list[tuple[str, str, str]] = [
    ("dataguard-number", "dataguard = 5\n", "dataguard"),
    ("host-as-table", '[host]\nname = "x"\n', "host"),
    ("deep-nested-array", "name = " + "[" * 5000 + "]" * 5000 + "\n", "name"),
    ("dsn-password-leading-space", HOST + '[host.db]\ndsn = " scott/tiger@h:1521/s"\n', "dsn"),
    ("dsn-password-nbsp", HOST + '[host.db]\ndsn = "\u00a0scott/tiger@h:1521/s"\n', "dsn"),
    (
        "dsn-password-descriptor",
        HOST + '[host.db]\ndsn = "(DESCRIPTION=(ADDRESS=(HOST=h))'
        '(SECURITY=(WALLET_PASSWORD=tiger)))"\n',
        "dsn",
    ),
    (
        "dsn-ezconnect-plus-password",
        HOST + '[host.db]\ndsn = "h:1521/s?wallet_password=tiger"\n',
        "dsn",
    ),
    ("user-with-password", HOST + '[host.db]\ndsn = "h/s"\nuser = "scott/tiger"\n', "user"),
    (
        "password-env-is-the-password",
        HOST + '[host.db]\ndsn = "h/s"\npassword_env = "hunter2!"\n',
        "password_env",
    ),
    ("ssh-target-password", '[[host]]\nname = "p"\nssh = "oracle:hunter2@prim1"\n', "ssh"),
    ("name-a-megabyte", 'name = "' + "x" * 1_000_000 + '"\n', "name"),
    ("name-escape", 'name = "a\\u001b[31mb"\n', "name"),
    ("db-unique-name-long", HOST + 'db_unique_name = "' + "D" * 200 + '"\n', "db_unique_name"),
    ("host-named-meta-json", '[[host]]\nname = "meta.json"\n', "name"),
    ("deep-dotted-key", "a" + ".a" * 3000 + " = 1\n", "a"),
    ("deep-dotted-collector", "[collectors.disk" + ".x" * 200 + "]\ny = 1\n", "collectors"),
    ("deep-nested-peers", "[dataguard]\npeers = " + "[" * 3000 + "]" * 3000 + "\n", "peers"),
    ("collectors-number", "collectors = 5\n", "collectors"),
    ("collector-number", "[collectors]\ndisk = 5\n", "disk"),
    ("db-number", HOST + "db = 5\n", "db"),
    ("host-name-number", "[[host]]\nname = 5\n", "name"),
    ("ports-number", "[dataguard]\nports = 1521\n", "ports"),
    ("ports-empty", "[dataguard]\nports = []\n", "ports"),
    ("ports-range", "[dataguard]\nports = [70000]\n", "ports"),
    ("ports-bool", "[dataguard]\nports = [true]\n", "ports"),
    ("call-timeout-negative", DB + "call_timeout = -5\n", "call_timeout"),
    ("call-timeout-nan", DB + "call_timeout = nan\n", "call_timeout"),
    ("warn-above-crit", '[thresholds]\n"disk.aqu_sz" = { warn = 100, crit = 1 }\n', "disk.aqu_sz"),
    ("idle-warn-below-crit", '[thresholds]\n"cpu.idle" = { warn = 1, crit = 50 }\n', "cpu.idle"),
    ("threshold-negative", '[thresholds]\n"disk.aqu_sz" = { warn = -1 }\n', "disk.aqu_sz"),
    ("threshold-inf", '[thresholds]\n"disk.aqu_sz" = { crit = inf }\n', "disk.aqu_sz"),
    ("threshold-no-field", '[thresholds]\n"disk.nope" = { warn = 1 }\n', "disk.nope"),
    ("threshold-number", '[thresholds]\n"disk.aqu_sz" = 5\n', "disk.aqu_sz"),
    ("thresholds-number", "thresholds = 5\n", "thresholds"),
    ("lgwr-number", "[collectors.oracle_trace]\nlgwr = 5\n", "lgwr"),
    ("disk-exclude-number", "[collectors.disk]\nexclude = 5\n", "exclude"),
    ("tcp-direction", '[collectors.tcp]\ndirection = "sideways"\n', "direction"),
    ("host-empty-list", "host = []\n", "host"),
    ("host-name-esc", '[[host]]\nname = "a\\u001b[31mb"\n', "name"),
    ("host-name-newline", '[[host]]\nname = "a\\nb"\n', "name"),
    ("host-name-trailing-newline", '[[host]]\nname = "a\\n"\n', "name"),
    ("host-name-dotdot", '[[host]]\nname = ".."\n', "name"),
    ("host-name-path", '[[host]]\nname = "../../x/y"\n', "name"),
    ("host-name-empty", '[[host]]\nname = ""\n', "name"),
    ("host-no-name", '[[host]]\nrole = "primary"\n', "name"),
    ("host-duplicate", '[[host]]\nname = "a"\n[[host]]\nname = "a"\n', "name"),
    ("interval-zero", "interval = 0\n", "interval"),
    ("interval-negative", "interval = -1\n", "interval"),
    ("interval-huge", "interval = 1e300\n", "interval"),
    ("interval-nan", "interval = nan\n", "interval"),
    ("interval-bool", "interval = true\n", "interval"),
    ("interval-word", 'interval = "soon"\n', "interval"),
    ("root-missing", '[[host]]\nname = "a"\nroot = "/nonexistent"\n', "root"),
    ("role-typo", '[[host]]\nname = "a"\nrole = "stanby"\n', "role"),
    ("devices-string", '[[host]]\nname = "a"\ndevices = "sdb"\n', "devices"),
    (
        "ssh-options-numbers",
        '[[host]]\nname = "a"\nssh = "x@y"\nssh_options = [1]\n',
        "ssh_options",
    ),
    ("db-mode", DB + 'mode = "root"\n', "mode"),
    ("db-no-dsn", HOST + '[host.db]\nuser = "x"\n', "dsn"),
    ("db-thick-word", DB + 'thick = "yes"\n', "thick"),
    ("db-password-plain", HOST + '[host.db]\ndsn = "h:1521/s"\npassword = "hunter2"\n', "password"),
    ("dsn-password", HOST + '[host.db]\ndsn = "scott/tiger@h:1521/s"\n', "dsn"),
    ("unknown-key", 'intervall = "1s"\n', "intervall"),
    ("name-number", "name = 5\n", "name"),
    ("not-toml", "this is = = not toml\n", "TOML"),
]


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SGMON_")}
    env.update(SGMON_RUNTIME_DIR=str(home / "run"), HOME=str(home), XDG_CONFIG_HOME=str(home))
    return env


def _sgmon(args: list[str], home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sgmon", *args],
        capture_output=True, text=True, timeout=60, env=_env(home), cwd=cwd,
    )  # fmt: skip


def _one_line(proc: subprocess.CompletedProcess[str], path: Path, key: str) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    line = lines[0]
    assert line.startswith("sgmon: ") and str(path) in line and key in line, line
    assert "\x1b" not in line and "tiger" not in line and "hunter2" not in line, line
    return line


@pytest.mark.parametrize(("text", "key"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_check_and_record_refuse_with_one_line(tmp_path: Path, text: str, key: str) -> None:
    """``config --check`` and ``record`` both refuse, with the same single line; the user's
    files beside the archive are all still there."""
    cfg = tmp_path / "sgmon.toml"
    cfg.write_text(text)
    cfg.chmod(0o600)
    mine = tmp_path / "mine.csv"
    mine.write_text("the user's own file\n")
    check = _sgmon(["config", "--check", "--config", str(cfg)], tmp_path, tmp_path)
    line = _one_line(check, cfg, key)
    rec = _sgmon(
        ["record", "--config", str(cfg), "--dir", str(tmp_path / "arch"), "--duration", "1s"],
        tmp_path, tmp_path,
    )  # fmt: skip
    assert _one_line(rec, cfg, key) == line
    assert mine.read_text() == "the user's own file\n"
    assert not (tmp_path / "arch").exists()


@pytest.mark.parametrize(("text", "key"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_one_schema_in_process(tmp_path: Path, text: str, key: str) -> None:
    """The check's first problem is the error every command raises: they cannot disagree."""
    cfg = tmp_path / "sgmon.toml"
    cfg.write_text(text)
    cfg.chmod(0o600)
    checked = check_config(str(cfg))
    with pytest.raises(ConfigError) as e:
        load_config(str(cfg))
    assert checked.problems == [str(e.value)]


def test_readme_threshold_passes_check(tmp_path: Path) -> None:
    """A per-instance threshold as the README shows it is a valid key for the check too."""
    cfg = tmp_path / "sgmon.toml"
    cfg.write_text(
        '[thresholds]\n"disk.aqu_sz" = { warn = 2, crit = 8 }\n'
        '"oracle_waits.log file sync.p99" = { warn = 32 }\n'
    )
    assert check_config(str(cfg)).problems == []
    assert load_config(str(cfg)).thresholds["oracle_waits.log file sync.p99"] == {"warn": 32}


def _toml_values() -> st.SearchStrategy[Any]:
    """What tomllib can hand the schema: scalars, lists and tables, nested, under the schema's
    own key names as well as others."""
    keys = st.sampled_from(
        [k for table in SCHEMA.values() for k in table] + ["disk", "tcp", "cpu.idle", "x"]
    ) | st.text(max_size=8)
    scalars = (
        st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats()
        | st.text(max_size=12) | st.sampled_from(["1s", "0", "primary", "..", "a/b@c", "/"])
    )  # fmt: skip
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=4),
        max_leaves=12,
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dictionaries(
        st.sampled_from(list(SCHEMA[""])),
        _toml_values()
        | st.lists(st.dictionaries(st.sampled_from(list(SCHEMA["host"])), _toml_values())),
        max_size=5,
    )
)
def test_any_parsed_toml_is_a_config_or_one_line_problems(data: dict[str, Any]) -> None:
    config, problems = validate(data, Path("/etc/sgmon.toml"))
    assert (config is None) == bool(problems)
    for p in problems:
        assert p.startswith("/etc/sgmon.toml: ") and "\n" not in p and "\x1b" not in p, p


def test_a_value_from_the_environment_is_named_as_such(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = tmp_path / "sgmon.toml"
    cfg.write_text('interval = "1s"\n')
    monkeypatch.setenv("SGMON_INTERVAL", "0")
    with pytest.raises(ConfigError, match=r"sgmon.toml: interval \(from \$SGMON_INTERVAL\): '0'"):
        load_config(str(cfg))


def test_the_readmes_example_config_passes_the_schema(tmp_path: Path) -> None:
    """The README's sgmon.toml, as a user copies it, is a valid config for every command."""
    readme = (REPO / "README.md").read_text()
    example = readme.split("```toml\n", 1)[1].split("```", 1)[0]
    cfg = tmp_path / "sgmon.toml"
    cfg.write_text(example)
    cfg.chmod(0o600)
    assert check_config(str(cfg)).problems == []
    assert [h.name for h in load_config(str(cfg)).hosts] == ["prim1", "stby1"]
