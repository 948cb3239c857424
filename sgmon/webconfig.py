"""The web configuration of `sgmon serve`: the exporter-toolkit file every Prometheus exporter
reads (``--web.config.file``).

``tls_server_config`` (``cert_file``, ``key_file``, optionally ``client_ca_file`` and
``client_auth_type``, ``min_version``) and ``basic_auth_users`` (user: bcrypt hash).  The file is
refused when group or others may read it (it may name a key), and each problem is one line.  A
checked password is remembered (its SHA-256, for ``AUTH_CACHE_S``), as exporter-toolkit does:
bcrypt costs tens of milliseconds a check by design, and a fleet scrapes every few seconds.
"""

from __future__ import annotations

import base64
import hashlib
import ssl
import stat
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sgmon.errors import UsageError

AUTH_CACHE_S = 60.0


@dataclass(frozen=True, slots=True)
class WebConfig:
    """What ``--web.config.file`` asks for: TLS, and the users allowed in."""

    tls: ssl.SSLContext | None = None
    users: dict[str, bytes] = field(default_factory=dict)
    """user -> bcrypt hash; empty: no authentication."""

    @classmethod
    def read(cls, path: str) -> WebConfig:
        """The file parsed and checked, or UsageError with one line naming the key."""
        where = f"--web.config.file {path}"
        data = _load(Path(path), where)
        unknown = set(data) - {"tls_server_config", "basic_auth_users", "http_server_config"}
        if unknown:
            raise UsageError(f"{where}: {sorted(unknown)[0]}: unknown key")
        tls_raw = data.get("tls_server_config")
        tls = _tls(tls_raw, Path(path).parent, where) if tls_raw else None
        users_raw = data.get("basic_auth_users") or {}
        if not isinstance(users_raw, dict):
            raise UsageError(f"{where}: basic_auth_users: a table of user: bcrypt hash")
        users: dict[str, bytes] = {}
        for user, hashed in users_raw.items():
            if not isinstance(hashed, str) or not hashed.startswith(("$2a$", "$2b$", "$2y$")):
                raise UsageError(
                    f"{where}: basic_auth_users.{user}: not a bcrypt hash (htpasswd -nBC 10 "
                    '"" | tr -d ":\\n", or python -c "import bcrypt; ...")'
                )
            users[str(user)] = hashed.encode()
        return cls(tls, users)


def _load(path: Path, where: str) -> dict[str, Any]:
    """The YAML file as a mapping, refused when others than its owner may read it."""
    import yaml

    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"{where}: not a regular file")
        if st.st_mode & 0o077:
            raise UsageError(
                f"{where}: group or others may read it (mode {stat.S_IMODE(st.st_mode):o}); "
                f"chmod 600 {path}"
            )
        text = path.read_text()
    except OSError as e:
        raise UsageError(f"{where}: cannot read: {e.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{where}: not UTF-8 text") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f"line {mark.line + 1}: " if mark is not None else ""
        raise UsageError(f"{where}: {line}not valid YAML") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"{where}: not a YAML mapping of tls_server_config, basic_auth_users")
    return data


_TLS_KEYS = {"cert_file", "key_file", "client_ca_file", "client_auth_type", "min_version"}
_VERSIONS = {"TLS12": ssl.TLSVersion.TLSv1_2, "TLS13": ssl.TLSVersion.TLSv1_3}


def _tls(raw: object, base: Path, where: str) -> ssl.SSLContext:
    """The server's TLS context from ``tls_server_config`` (paths relative to the file)."""
    if not isinstance(raw, dict):
        raise UsageError(f"{where}: tls_server_config: a table with cert_file and key_file")
    unknown = set(raw) - _TLS_KEYS
    if unknown:
        raise UsageError(f"{where}: tls_server_config.{sorted(unknown)[0]}: unknown key")
    for key in ("cert_file", "key_file"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise UsageError(f"{where}: tls_server_config.{key}: missing")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    version = raw.get("min_version", "TLS12")
    if version not in _VERSIONS:
        raise UsageError(f"{where}: tls_server_config.min_version: use TLS12 or TLS13")
    ctx.minimum_version = _VERSIONS[version]
    try:
        ctx.load_cert_chain(base / raw["cert_file"], base / raw["key_file"])
    except (OSError, ssl.SSLError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise UsageError(
            f"{where}: tls_server_config: cannot load the certificate: {why}"
        ) from None
    auth = raw.get("client_auth_type", "NoClientCert")
    if auth not in ("NoClientCert", "RequireAndVerifyClientCert"):
        raise UsageError(
            f"{where}: tls_server_config.client_auth_type: use NoClientCert or "
            "RequireAndVerifyClientCert"
        )
    if auth == "RequireAndVerifyClientCert":
        ca = raw.get("client_ca_file")
        if not isinstance(ca, str):
            raise UsageError(f"{where}: tls_server_config.client_ca_file: missing")
        try:
            ctx.load_verify_locations(base / ca)
        except (OSError, ssl.SSLError) as e:
            raise UsageError(f"{where}: tls_server_config.client_ca_file: {e}") from None
        ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


class Authenticator:
    """Basic authentication against bcrypt hashes, each good password remembered for a while
    (by its SHA-256: the password itself is never kept)."""

    def __init__(self, users: dict[str, bytes]) -> None:
        self.users = users
        self._good: dict[tuple[str, bytes], float] = {}
        self._lock = threading.Lock()

    def allows(self, header: str) -> bool:
        """Whether an Authorization header names a user and its password."""
        known = self.known(header)
        if known is not None:
            return known
        user, _, password = base64.b64decode(header.partition(" ")[2]).decode().partition(":")
        import bcrypt

        if not bcrypt.checkpw(password.encode(), self.users[user]):
            return False
        now = time.monotonic()
        with self._lock:
            self._good = {k: t for k, t in self._good.items() if now - t < AUTH_CACHE_S}
            self._good[(user, hashlib.sha256(password.encode()).digest())] = now
        return True

    def known(self, header: str) -> bool | None:
        """``allows`` without its bcrypt check: True or False when that needs none (no users,
        a malformed header or an unknown user, a password checked good a moment ago), None
        when it does (tens of milliseconds: not on a thread that answers others meanwhile)."""
        if not self.users:
            return True
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            user, sep, password = base64.b64decode(token, validate=True).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            return False
        if not sep or user not in self.users:
            return False
        key = (user, hashlib.sha256(password.encode()).digest())
        with self._lock:
            if time.monotonic() - self._good.get(key, -AUTH_CACHE_S) < AUTH_CACHE_S:
                return True
        return None
