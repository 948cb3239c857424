"""The errors a user can cause, each printed by the CLI as one ``sgmon:`` line with its exit code.

Low and dependency-free (``redact`` imports ``re`` when called), so that the importers, the TUI,
the archive and the config can raise them without importing the command line that catches them
(``sgmon.cli.main``); and ``redact``, which every message and event passes through.
"""


class UsageError(Exception):
    """A user error in arguments or config: printed as one `sgmon:` line, exit 2."""


class Unreachable(Exception):
    """A source could not be reached: printed as one `sgmon:` line, exit 3."""


class ConfigError(ValueError):
    """A config problem (sgmon.toml or a collector option), as one line that says what to do:
    exit 2."""


class ArchiveError(Exception):
    """An archive problem as one line that says what to do."""


class SinkFailed(Exception):
    """An output that cannot go on (the archive directory deleted under the recorder): the run
    ends, the message is printed as one ``sgmon:`` line, exit 1."""


_WORD = r"(?i)\b([\w-]*(?:password|passwd|pwd|secret|token)\"?)"
_SECRETS = (
    # user/password@host:port/service (an easy-connect string with the password in it)
    (r"(?<![\w/])([\w.$#-]+)/[^\s@/]+@", r"\1/***@"),
    # password=..., PWD = ... (a key and its value, as in a connect string or a command line)
    # (password = "prompt" names a source, not a secret, and stays)
    (_WORD + r"(\s*=\s*)(?![\"']?prompt\b)(\"[^\"]*\"|'[^']*'|[^\s;,&]+)", r"\1\2***"),
    # "password": "..." (JSON) and pwd:value
    (_WORD + r"(\s*:\s*)(\"[^\"]*\"|'[^']*')", r"\1\2***"),
    (_WORD + r"(:)([^\s\"']+)", r"\1\2***"),
    # user:password@host (an ssh target or a URL with the password in it)
    (r"(?<![\w:\[])([\w.$#-]+):[^\s@:/\]]+@", r"\1:***@"),
    # IDENTIFIED BY x (SQL echoed in an error)
    (r"(?i)\b(identified\s+by\s+)(\"[^\"]*\"|\S+)", r"\1***"),
)


def redact(text: str) -> str:
    """``text`` with anything password-like replaced by ``***``: every message, event and file
    sgmon writes passes through here, so a password typed where it does not belong (a DSN, a
    driver's error) is never repeated."""
    if "/" not in text and "=" not in text and ":" not in text and "by" not in text.lower():
        return text
    import re

    for pattern, repl in _SECRETS:
        text = re.sub(pattern, repl, text)
    return text


def one_line(text: str) -> str:
    """``text`` redacted, with control characters escaped (``\\n``, ``\\x1b``): a message is one
    line, and a name read from a file never moves the user's cursor or colours the terminal."""
    import re

    return re.sub(r"[\x00-\x1f\x7f]", lambda m: repr(m.group())[1:-1], redact(text))
