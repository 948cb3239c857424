"""Where a database's password comes from: an environment variable, a prompt, or nowhere (a
wallet: external authentication).  A password lives only in this process's memory; a prompt
happens once per database and user, on the terminal, before a full-screen UI takes it
(``ask_passwords``)."""

from __future__ import annotations

import getpass
import os
import sys
from collections.abc import Iterable

from sgmon.config import DbConfig
from sgmon.oracle.errors import OracleError

_prompted: dict[tuple[str, str], str] = {}  # in memory only, for this process's life


def secret_source(db: DbConfig | None) -> str:
    """The password's source as a message may name it ('' when there is none)."""
    if db is None:
        return ""
    if db.wallet_dir:
        return f"the wallet in {db.wallet_dir}"
    if db.password_env:
        return f"${db.password_env}"
    if db.password == "prompt":
        return "the prompt"
    return ""


def password_of(db: DbConfig) -> str:
    """The password of ``db``'s user: from its environment variable, or asked for up front, or
    at the prompt now; an OracleError (fatal: a retry cannot help) when there is none."""
    if db.password_env:
        value = os.environ.get(db.password_env)
        if not value:
            raise OracleError(
                f"environment variable {db.password_env} is empty: export the password of "
                f"{db.user}@{db.dsn} in it",
                fatal=True,
            )
        return value
    if db.password == "prompt":
        if (db.dsn, db.user) in _prompted:
            return _prompted[(db.dsn, db.user)]
        return _prompt(db)
    raise OracleError(
        f"{db.user}@{db.dsn} has no password source: set password_env, wallet_dir or "
        'password = "prompt"',
        fatal=True,
    )


def ask_passwords(dbs: Iterable[DbConfig | None]) -> None:
    """Prompt now, on the calling (main) thread, for every database whose password comes from
    the prompt; call before a full-screen UI owns the terminal.  Kept in memory only."""
    for db in dbs:
        if db is None or db.password != "prompt" or (db.dsn, db.user) in _prompted:
            continue
        _prompted[(db.dsn, db.user)] = _prompt(db)


def _prompt(db: DbConfig) -> str:
    """The password typed at the terminal; fatal when there is no terminal to type it at."""
    if not sys.stdin.isatty():
        raise OracleError(
            f"no terminal to prompt for the password of {db.user}@{db.dsn}: use "
            "password_env or wallet_dir",
            fatal=True,
        )
    return getpass.getpass(f"password for {db.user}@{db.dsn}: ")
