"""Every key of sgmon.toml and every collector option meets every shape of hostile value: wrong
types, NaN, infinities, negative and huge numbers, control characters and escape sequences,
homoglyphs, huge and empty strings; every table meets a 3,000-deep key; every place a password
can hide meets one.  ``config --check`` runs in-process on each (tests/system/hostile/inproc.py)
and must: end in time without a traceback, refuse what the key's rule cannot take with one
``sgmon:`` line naming the file and the key (the very problem every other command raises:
one schema), print no raw control character, no secret and nothing huge."""

from __future__ import annotations

from pathlib import Path

import pytest
from inproc import Result, run, sound

from sgmon import registry
from sgmon.config import COLLECTOR_OPTIONS, check_config, load_config
from sgmon.errors import ConfigError

pytestmark = pytest.mark.timeout(60)

# shape -> its TOML text
SHAPES: dict[str, str] = {
    "true": "true",
    "int": "42",
    "float": "4.5",
    "word": '"word"',
    "int-list": "[0]",
    "table": "{ a = 1 }",
    "datetime": "1979-05-27T07:32:00Z",
    "nan": "nan",
    "inf": "inf",
    "minus-inf": "-inf",
    "negative": "-1",
    "huge-float": "1e308",
    "int64-max": "9223372036854775807",
    "bell": '"a\\u0007b"',
    "osc-title": '"\\u001b]0;owned\\u0007"',
    "c1-csi": '"\\u009b31m"',
    "bidi-override": '"\\u202eevil"',
    "homoglyph": '"\u0440rim1"',  # a Cyrillic er where a Latin p reads
    "nul": '"a\\u0000b"',
    "empty": '""',
    "huge-string": '"' + "x" * 200_000 + '"',
    "escape-list": '["a\\u001b[2Jb"]',
}

# what a kind of value may take (any other shape must be refused)
TAKES: dict[str, set[str]] = {
    "label": {"word", "homoglyph", "empty"},
    "host-name": {"word"},
    "text": {"word", "homoglyph", "empty"},
    "path": {"empty"},
    "file": {"word", "homoglyph", "empty"},
    "duration": {"int", "float", "word", "int64-max"},
    "number": {"int", "float"},
    "threshold": {"int", "float", "huge-float", "int64-max"},
    "role": {"empty"},
    "env": {"word", "empty"},
    "bool": {"true"},
    "strings": set(),
    "ports": set(),
    "peers": set(),
    "enum": set(),
    "table": {"table"},
    "zone": set(),
    "secret": {"empty"},
    "tables": set(),
}

HOST = '[[host]]\nname = "a"\n'
DB = HOST + '[host.db]\ndsn = "h:1521/s"\n'

# (key as the message names it, where it is written, the value's kind)
KEYS: list[tuple[str, str, str]] = [
    ("name", "{k} = {v}", "label"),
    ("interval", "{k} = {v}", "duration"),
    ("dataguard", "{k} = {v}", "table"),
    ("host", "{k} = {v}", "tables"),
    ("collectors", "{k} = {v}", "table"),
    ("thresholds", "{k} = {v}", "table"),
    ("ports", "[dataguard]\n{k} = {v}", "ports"),
    ("peers", "[dataguard]\n{k} = {v}", "peers"),
    ("name", "[[host]]\n{k} = {v}", "host-name"),
    ("role", HOST + "{k} = {v}", "role"),
    ("ssh", HOST + "{k} = {v}", "text"),
    ("sgmon_path", HOST + 'ssh = "x@y"\n{k} = {v}', "text"),
    ("db_from", HOST + "{k} = {v}", "enum"),
    ("ssh_options", HOST + 'ssh = "x@y"\n{k} = {v}', "strings"),
    ("ssh_command", HOST + 'ssh = "x@y"\n{k} = {v}', "strings"),
    ("devices", HOST + "{k} = {v}", "strings"),
    ("db", HOST + "{k} = {v}", "table"),
    ("root", HOST + "{k} = {v}", "path"),
    ("db_unique_name", HOST + "{k} = {v}", "label"),
    ("dsn", HOST + "[host.db]\n{k} = {v}", "text"),
    ("user", DB + "{k} = {v}", "text"),
    ("mode", DB + "{k} = {v}", "enum"),
    ("password_env", DB + "{k} = {v}", "env"),
    ("wallet_dir", DB + "{k} = {v}", "text"),
    ("password", DB + "{k} = {v}", "secret"),
    ("thick", DB + "{k} = {v}", "bool"),
    ("events", DB + "{k} = {v}", "strings"),
    ("call_timeout", DB + "{k} = {v}", "duration"),
    ("disk.aqu_sz", '[thresholds]\n"{k}" = {{ warn = {v} }}', "threshold"),
    ("cpu.idle", '[thresholds]\n"{k}" = {{ crit = {v} }}', "threshold"),
]
OPTION_KIND = {
    "_strings": "strings",
    "_bool": "bool",
    "_string": "text",
    "_ports": "ports",
    "_peers": "peers",
    "text_or_texts": "file",
    "zone": "zone",
}
"""The kind of each collector option, by the rule it declares (the others are ranges)."""


def _options() -> list[tuple[str, str, str]]:
    """Every option every installed collector declares, and the shared ones (on one)."""
    out = []
    for name in sorted(registry.names()):
        rules = dict(registry.load(name).option_rules or {})
        if name == "disk":
            rules |= COLLECTOR_OPTIONS
        for opt, rule in sorted(rules.items()):
            kind = "path" if opt == "root" else OPTION_KIND.get(rule.__name__, "number")
            if opt in ("direction",):
                kind = "enum"
            out.append((f"collectors.{name}.{opt}", f"[collectors.{name}]\n{opt} = {{v}}", kind))
    return out


ALL = [*KEYS, *_options()]


def _text(where: str, key: str, shape: str) -> str:
    return where.format(k=key.rpartition(".")[2] if "{k} =" in where else key, v=SHAPES[shape])


def _check(capfd: pytest.CaptureFixture[str], tmp: Path, text: str) -> tuple[Path, Result]:
    cfg = tmp / "sgmon.toml"
    cfg.write_text(text + "\n")
    cfg.chmod(0o600)
    return cfg, run(capfd, "config", "--check", "--offline", "--config", str(cfg))


def _refused_once(r: Result, cfg: Path, key: str) -> str:
    assert r.rc == 2, (r.rc, r.out[-800:], r.err[-800:])
    lines = r.notes()
    assert len(lines) == 1 and str(cfg) in lines[0], r.err
    assert key.rpartition(".")[2] in lines[0], lines[0]
    assert len(lines[0]) < 600, f"a line of {len(lines[0])} characters"
    return lines[0]


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize(("key", "where", "kind"), ALL, ids=[k[0] for k in ALL])
def test_each_key_meets_each_hostile_shape(capfd, tmp_path, monkeypatch, key, where, kind, shape):
    monkeypatch.chdir(tmp_path)
    cfg, r = _check(capfd, tmp_path, _text(where, key, shape))
    sound(r)
    assert len(r.out) + len(r.err) < 20_000, "a huge value echoed whole"
    if shape in TAKES[kind]:
        return
    line = _refused_once(r, cfg, key)
    with pytest.raises(ConfigError) as e:  # every command refuses it with the same line
        load_config(str(cfg))
    assert line == f"sgmon: {e.value}"


DEEP = "a" + ".a" * 3000
# (case, the text, the key the line must name)
DEEP_CASES = [
    ("dataguard-dotted", f"[dataguard]\n{DEEP} = 1", "dataguard"),
    ("host-dotted", f"{HOST}{DEEP} = 1", "a"),
    ("db-dotted", f"{DB}{DEEP} = 1", "a"),
    ("thresholds-dotted", f"[thresholds]\n{DEEP} = 1", "thresholds"),
    ("collector-option-dotted", f"[collectors.tcp]\n{DEEP} = 1", "collectors"),
    ("table-header-dotted", f"[{DEEP}]\nb = 1", "a"),
    ("array-of-tables-dotted", f"[[{DEEP}]]\nb = 1", "a"),
    ("inline-table-deep", "x = " + "{ a = " * 3000 + "1" + " }" * 3000, "x"),
    ("host-inline-deep", HOST + "db = " + "{ a = " * 3000 + "1" + " }" * 3000, "db"),
    ("array-deep-in-host", HOST + "devices = " + "[" * 3000 + "]" * 3000, "devices"),
    ("quoted-dotted", "a" + '."\\u001b"' * 3000 + " = 1", "a"),
]


@pytest.mark.parametrize(
    ("text", "key"), [c[1:] for c in DEEP_CASES], ids=[c[0] for c in DEEP_CASES]
)
def test_a_3000_deep_key_is_one_line(capfd, tmp_path, text, key):
    cfg, r = _check(capfd, tmp_path, text)
    sound(r)
    line = _refused_once(r, cfg, key)
    assert check_config(str(cfg)).problems == [line.removeprefix("sgmon: ")]


SECRET = "tiger9Zq"
# (case, the text, the key the line must name)
SECRETS = [
    ("dsn-user-password", f'dsn = "scott/{SECRET}@h:1521/s"', "dsn"),
    ("dsn-leading-tab", f'dsn = "\\tscott/{SECRET}@h:1521/s"', "dsn"),
    ("dsn-leading-nbsp", f'dsn = "\u00a0scott/{SECRET}@h/s"', "dsn"),
    ("dsn-ideographic-space", f'dsn = "\u3000scott/{SECRET}@h/s"', "dsn"),
    ("dsn-quoted-password", f'dsn = "scott/\\"{SECRET}\\"@h/s"', "dsn"),
    ("dsn-tns-alias", f'dsn = "scott/{SECRET}@PRODTNS"', "dsn"),
    ("dsn-easy-connect-url", f'dsn = "tcps://scott/{SECRET}@h:2484/s"', "dsn"),
    (
        "descriptor-wallet-password",
        f'dsn = "(DESCRIPTION=(ADDRESS=(HOST=h))(SECURITY=(WALLET_PASSWORD={SECRET})))"',
        "dsn",
    ),
    (
        "descriptor-password-clause",
        f'dsn = "(DESCRIPTION=(ADDRESS=(HOST=h))(CONNECT_DATA=(PASSWORD = {SECRET})))"',
        "dsn",
    ),
    ("descriptor-user-password", f'dsn = "(DESCRIPTION=(USER=scott/{SECRET}@x))"', "dsn"),
    ("ezplus-wallet-password", f'dsn = "h:1521/s?wallet_password={SECRET}"', "dsn"),
    ("ezplus-pwd-second", f'dsn = "h:1521/s?ssl_server_dn_match=on&pwd={SECRET}"', "dsn"),
    ("ezplus-token", f'dsn = "tcps://h:2484/s?token={SECRET}"', "dsn"),
    ("ezplus-upper-passwd", f'dsn = "h/s?PASSWD={SECRET}"', "dsn"),
    ("ezplus-secret-blank", f'dsn = "h/s?client_secret = {SECRET}"', "dsn"),
    ("user-slash", f'dsn = "h/s"\nuser = "scott/{SECRET}"', "user"),
    ("user-slash-at", f'dsn = "h/s"\nuser = "scott/{SECRET}@h"', "user"),
    ("user-leading-slash", f'dsn = "h/s"\nuser = "/{SECRET}"', "user"),
    ("password-env-is-it", f'dsn = "h/s"\npassword_env = "{SECRET}!"', "password_env"),
    ("password-env-blank", f'dsn = "h/s"\npassword_env = "pw {SECRET}"', "password_env"),
    ("password-plain", f'dsn = "h/s"\npassword = "{SECRET}"', "password"),
    ("password-number", 'dsn = "h/s"\npassword = 20240101', "password"),
]
SSH_SECRETS = [
    ("ssh-user-password", f'ssh = "oracle:{SECRET}@prim1"', "ssh"),
    ("ssh-url", f'ssh = "ssh://oracle:{SECRET}@prim1:22"', "ssh"),
    ("ssh-empty-user", f'ssh = ":{SECRET}@prim1"', "ssh"),
]


@pytest.mark.parametrize(
    ("text", "key"),
    [c[1:] for c in SECRETS + SSH_SECRETS],
    ids=[c[0] for c in SECRETS + SSH_SECRETS],
)
def test_a_password_in_any_form_is_refused_unprinted(capfd, tmp_path, monkeypatch, text, key):
    monkeypatch.setenv("PW", SECRET)
    body = HOST + (text if key == "ssh" else "[host.db]\n" + text)
    cfg, r = _check(capfd, tmp_path, body)
    sound(r, SECRET)
    _refused_once(r, cfg, key)
    with pytest.raises(ConfigError) as e:
        load_config(str(cfg))
    assert SECRET not in str(e.value)


# (case, the options of `import awr`, the option the line must name)
CLI_SECRETS = [
    ("dsn-user-password", [f"--dsn=scott/{SECRET}@127.0.0.1:9/s"], "dsn"),
    ("dsn-leading-blank", [f"--dsn= scott/{SECRET}@127.0.0.1:9/s"], "dsn"),
    ("dsn-nbsp", [f"--dsn=\u00a0scott/{SECRET}@127.0.0.1:9/s"], "dsn"),
    ("dsn-ezplus", [f"--dsn=127.0.0.1:9/s?wallet_password={SECRET}"], "dsn"),
    ("dsn-descriptor", [f"--dsn=(DESCRIPTION=(SECURITY=(WALLET_PASSWORD={SECRET})))"], "dsn"),
    ("user-slash", ["--dsn=127.0.0.1:9/s", f"--user=scott/{SECRET}"], "user"),
    ("password-env-is-it", ["--dsn=127.0.0.1:9/s", f"--password-env={SECRET}!"], "password_env"),
]


@pytest.mark.parametrize(
    ("opts", "key"), [c[1:] for c in CLI_SECRETS], ids=[c[0] for c in CLI_SECRETS]
)
def test_a_password_on_the_command_line_is_refused_unprinted(capfd, tmp_path, opts, key):
    """The same refusals for `import awr`'s options: one line, before any login, nothing
    written, the password never repeated."""
    out = tmp_path / "arch"
    r = run(capfd, "import", "awr", "--dir", str(out), "--user=scott", *opts)
    sound(r, SECRET, codes=(2,))
    assert len(r.notes()) == 1 and key in r.notes()[0], r.err
    assert not out.exists()
