"""`sgmon status`: one line for tmux, read from the state a running sgmon publishes.

tmux runs this every few seconds, so it does no sampling at all: every running sgmon (recorder,
dashboard, demo, agent, exporter) rewrites ``state-<pid>.txt`` in the runtime directory after
each tick (``sgmon.sinks.statefile``) with the items of the line already chosen and graded, and
this module only reads those small files.  The file is plain text, ready to print, so that a call
costs little more than starting the interpreter: no json, no argparse (the CLI hands ``status``
its two options directly), only os and time (a test checks ``sys.modules``).  Whatever is wrong,
it prints a short dim notice, never a traceback.

Only the calling user's own files count, and only one configuration's: every publisher names its
configuration (``name`` in sgmon.toml), and with several running the line shows one (``--name``
picks it, else the most recently started) and says which others there are.  The directory is
read only when it is the user's own, of mode 0700 and not a symlink (``/tmp/sgmon-$UID`` may
have been made or symlinked by someone else first), and each file by descriptor, never through
a symlink (``sgmon.safefs``); the line says when the directory is refused.

The file: a first line ``sgmon-state 3 PID START NAME`` (START is the publisher's start time in
clock ticks since boot, /proc/PID/stat field 22, so a reused pid is not taken for a live sgmon;
NAME the configuration's name, the rest of the line), then
one line per host of tab-separated fields (``HOST_FIELDS``); items are ``label US text US
severity`` joined by RS (the ASCII unit and record separators, which no value contains).
"""

from __future__ import annotations

import os
import time

from sgmon.readers.procfile import start_time
from sgmon.safefs import Refused, private_dir

STATE_FORMAT = 3
STATE_MAX = 1 << 20
"""Bytes of a state file read: a publisher writes a line per host."""
MAGIC = "sgmon-state"
HOST_FIELDS = ("name", "role", "tag", "time", "written", "interval", "failing", "items")
US, RS = "\x1f", "\x1e"
TMUX_COLOUR = {
    "warn": "#[fg=#000000,bg=#F0E442]",
    "crit": "#[fg=#000000,bg=#D55E00,bold]",
    "stale": "#[fg=#D8DEE9,bg=#3A3F47]",
}
"""Each coloured item carries its own background, the dashboard's warn and crit hues: text at
least 4.5:1 on it whatever the status-style (yellow and red text on tmux's default green, xterm's
#00CD00, were 1.3:1 and 2.7:1; the grey of stale 2.9:1)."""
TMUX_RESET = "#[default]"
ROLE_ORDER = {"primary": 0, "standby": 1}
"""Where a host's part stands on the line: primaries first, then standbys, then the rest."""


def runtime_dir() -> str:
    """Where state files live: $SGMON_RUNTIME_DIR, $XDG_RUNTIME_DIR/sgmon or /tmp/sgmon-$UID.

    A plain string: even pathlib costs this command noticeable milliseconds.
    """
    explicit = os.environ.get("SGMON_RUNTIME_DIR")
    if explicit:
        return explicit
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isdir(xdg):
        return os.path.join(xdg, "sgmon")
    return f"/tmp/sgmon-{os.getuid()}"


def state_text(pid: int, start: str, hosts: dict[str, dict], name: str = "sgmon") -> str:
    """The state file's text for these hosts of configuration ``name`` (module docstring)."""
    lines = [f"{MAGIC} {STATE_FORMAT} {pid} {start} {_clean(name)}"]
    for name, h in hosts.items():
        items = RS.join(US.join(item) for item in h["items"])
        row = [name, h["role"], h["tag"], repr(h["time"]), repr(h["written"])]
        row += [repr(h["interval"]), ",".join(h["failing"]), items]
        lines.append("\t".join(_clean(v) for v in row))
    return "\n".join(lines) + "\n"


def _clean(value: str) -> str:
    return value.replace("\t", " ").replace("\n", " ")


def read_publishers(directory: str | os.PathLike | None = None) -> list[tuple[str, float, dict]]:
    """``(configuration name, start, host -> state)`` of each running sgmon of this user.  A file
    whose publisher is gone (its pid no longer names the process that wrote it: exited, killed,
    or the pid reused) is ignored and removed, so a crash or a closed terminal leaves nothing
    behind to misread; a file another user owns, or that is not a regular file (a symlink to
    anything, a FIFO), is never read.  ``Refused`` when the directory itself cannot be trusted:
    a symlink, another user's, or open to others (``sgmon.safefs.private_dir``)."""
    found: list[tuple[str, float, dict]] = []
    try:
        at = private_dir(os.fspath(directory or runtime_dir()))
    except Refused:
        raise
    except OSError:
        return found
    with at:
        for name in at.listdir():
            if not (name.startswith("state-") and name.endswith(".txt")):
                continue
            try:
                text = at.read(name, STATE_MAX, mine=True).decode("utf-8")
                head, *rows = text.rstrip("\n").split("\n")  # (splitlines cuts at RS)
                magic, version, pid, start, config = head.split(" ", 4)
                if magic != MAGIC or int(version) != STATE_FORMAT:
                    continue
                if start_time(int(pid)) != start:
                    at.unlink(name)
                    continue
                hosts = {h["name"]: h for h in (_host(row) for row in rows)}
                found.append((config, float(start), hosts))
            except (OSError, ValueError, IndexError):
                continue  # a file being replaced, or a foreign one: another publisher will do
    return found


def read_states(
    directory: str | os.PathLike | None = None, name: str | None = None
) -> dict[str, dict]:
    """Host -> its newest state published by a running sgmon (of configuration ``name``)."""
    return merged(read_publishers(directory), name)


def merged(publishers: list[tuple[str, float, dict]], name: str | None) -> dict[str, dict]:
    """Host -> its newest state among these publishers (of configuration ``name``)."""
    hosts: dict[str, dict] = {}
    for config, _, published in publishers:
        if name is not None and config != name:
            continue
        for host, h in published.items():
            old = hosts.get(host)
            if old is None or h["written"] > old["written"]:
                hosts[host] = h
    return hosts


def pick(
    publishers: list[tuple[str, float, dict]], name: str | None
) -> tuple[str | None, list[str]]:
    """The configuration to show (``name``, else the most recently started one) and the names
    of the others running."""
    names = sorted({config for config, _, _ in publishers})
    if name is None and publishers:
        name = max(publishers, key=lambda p: p[1])[0]
    return name, [n for n in names if n != name]


def _host(row: str) -> dict:
    h: dict = dict(zip(HOST_FIELDS, row.split("\t"), strict=True))
    for k in ("time", "written", "interval"):
        h[k] = float(h[k])
    h["failing"] = [f for f in h["failing"].split(",") if f]
    h["items"] = [tuple(i.split(US)) for i in h["items"].split(RS) if i]
    return h


def _is_stale(h: dict, now: float) -> bool:
    """A running publisher that has not written for three of its intervals (a source hung), or
    whose stamps cannot be trusted: written in the future, or an interval outside 0.1-60 s."""
    if not 0.1 <= h["interval"] <= 60:  # NaN fails this too
        return True
    return not -2 <= now - h["written"] <= 3 * h["interval"] + 2


def render(
    fmt: str = "plain",
    host: str | None = None,
    directory: str | os.PathLike | None = None,
    name: str | None = None,
) -> str:
    """The status line in ``plain``, ``tmux`` or ``json`` form, for one configuration."""
    try:
        publishers = read_publishers(directory)
    except Refused as e:
        return _dim(f"sgmon: {e}, not a private directory; not read", fmt)
    shown, others = pick(publishers, name)
    hosts = merged(publishers, shown) if shown is not None else {}  # the files read once
    if host is not None:
        hosts = {k: v for k, v in hosts.items() if k == host}
    now = time.time()
    if fmt == "json":
        return _json(shown, others, hosts, now)
    if not hosts:
        what = f"no data for {host}" if host else "no sgmon running"
        return _dim(f"sgmon: {what}" + (f" for {name}" if name else ""), fmt)
    tags = [h.get("tag") or n for n, h in hosts.items()]
    parts = [_part(n, h, tags, now, fmt) for n, h in sorted(hosts.items(), key=_primary_first)]
    if others:  # say so, and how to pick, rather than mix two configurations' hosts
        parts.append(_dim(f"{shown}; also running: {', '.join(others)} (--name)", fmt))
    return " | ".join(parts)


def _json(shown: str | None, others: list[str], hosts: dict[str, dict], now: float) -> str:
    """The line's ``json`` form: each host's state as published, with whether it is stale."""
    import json

    return json.dumps(
        {
            "name": shown,
            "others": others,
            "hosts": {k: _finite(dict(v, stale=_is_stale(v, now))) for k, v in hosts.items()},
        },
        separators=(",", ":"),
        allow_nan=False,
    )


def _primary_first(named: tuple[str, dict]) -> tuple[int, str]:
    """Primaries, then standbys, then the rest, each by name."""
    return ROLE_ORDER.get(named[1]["role"], 2), named[0]


def _part(name: str, h: dict, tags: list[str], now: float, fmt: str) -> str:
    """One host's part of the line: its tag and items, or why it has none."""
    tag = h.get("tag") or name
    if tag != name and tags.count(tag) > 1:  # RAC's instances, several standbys: P:node1
        tag = f"{tag}:{name}"
    if _is_stale(h, now):
        age = now - h["written"]
        since = f" {age:.0f}s" if 0 <= age < 1e9 else ""  # a stamp in the future: no age
        return _dim(f"{tag} stale{since}", fmt)
    items = [_item(label, text, sev, fmt) for label, text, sev in h["items"]]
    return " ".join([tag, *items]) if items else _dim(f"{tag} no data", fmt)


def _finite(h: dict) -> dict:
    """A host's entry with a NaN or infinite number as null: JSON has no NaN or Infinity."""
    return {k: None if isinstance(v, float) and v - v != 0 else v for k, v in h.items()}


def _item(label: str, text: str, sev: str, fmt: str) -> str:
    s = f"{label} {text}"
    if fmt != "tmux":
        return s
    s = s.replace("#", "##")  # tmux reads #[...] and #(...) in the line: a finding's text is data
    return f"{TMUX_COLOUR[sev]}{s}{TMUX_RESET}" if sev in TMUX_COLOUR else s


def _dim(text: str, fmt: str) -> str:
    return f"{TMUX_COLOUR['stale']}{text}{TMUX_RESET}" if fmt == "tmux" else text


def main(fmt: str = "plain", host: str | None = None, name: str | None = None) -> int:
    """Print the line; any failure is a short notice, and the exit code is always 0 for tmux."""
    try:
        line = render(fmt, host, name=name)
    except Exception as e:  # the status bar must never show a traceback
        line = _dim(f"sgmon: status unreadable ({type(e).__name__})", fmt)
    print(line, flush=True)
    return 0


def fast_args(argv: list[str]) -> tuple[str, str | None, str | None] | None:
    """``--format F``, ``--host H`` and ``--name N`` as the CLI would parse them, without
    argparse (whose import costs this command a third of its time); None for anything else,
    which then goes through argparse for its help or its error."""
    fmt, host, config = "plain", None, None
    it = iter(argv)
    for arg in it:
        name, eq, value = arg.partition("=")
        if name not in ("--format", "--host", "--name"):
            return None
        if not eq:
            value = next(it, "")
            if not value or value.startswith("-"):
                return None
        if name == "--format":
            if value not in ("plain", "tmux", "json"):
                return None
            fmt = value
        elif name == "--name":
            config = value
        else:
            host = value
    return fmt, host, config
