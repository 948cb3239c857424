"""`sgmon status`: one line for tmux, read from the state a running sgmon publishes.

tmux runs this every few seconds, so it does no sampling at all: every running sgmon (recorder,
dashboard, agent, exporter) rewrites ``state-<pid>.json`` in the runtime directory after each
tick (``sgmon.sinks.statefile``) with the items of the line already chosen and graded, and this
module only reads those small files.  It imports nothing but the standard library's json/os/time
(a test checks ``sys.modules``), and whatever is wrong it prints a short dim notice, never a
traceback.
"""

from __future__ import annotations

import json
import os
import time

STATE_FORMAT = 1
TMUX_COLOUR = {"warn": "#[fg=yellow]", "crit": "#[fg=red,bold]", "stale": "#[fg=colour244]"}
TMUX_RESET = "#[default]"


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


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_states(directory: str | os.PathLike | None = None) -> tuple[dict[str, dict], bool]:
    """Host -> its newest published state, and whether any publisher is still running."""
    directory = directory or runtime_dir()
    hosts: dict[str, dict] = {}
    running = False
    try:
        if os.stat(directory).st_uid != os.getuid():
            return hosts, False  # someone else's directory in /tmp: never trust it
        names = os.listdir(directory)
    except OSError:
        return hosts, False
    for name in names:
        if not (name.startswith("state-") and name.endswith(".json")):
            continue
        try:
            with open(os.path.join(directory, name), encoding="utf-8") as fh:
                state = json.load(fh)
            if state.get("format") != STATE_FORMAT:
                continue
            alive = _alive(int(state["pid"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a file being replaced, or a foreign one: another publisher will do
        running = running or alive
        for host, h in state.get("hosts", {}).items():
            h = dict(h, alive=alive)
            old = hosts.get(host)
            if old is None or (h["alive"], h["written"]) > (old["alive"], old["written"]):
                hosts[host] = h
    return hosts, running


def _is_stale(h: dict, now: float) -> bool:
    return not h["alive"] or now - h["written"] > 3 * h.get("interval", 1.0) + 2


def render(
    fmt: str = "plain", host: str | None = None, directory: str | os.PathLike | None = None
) -> str:
    """The status line in ``plain``, ``tmux`` or ``json`` form."""
    hosts, running = read_states(directory)
    if running:  # a crashed publisher's leftovers matter only when nothing else publishes
        hosts = {k: v for k, v in hosts.items() if v["alive"]}
    if host is not None:
        hosts = {k: v for k, v in hosts.items() if k == host}
    now = time.time()
    if fmt == "json":
        return json.dumps(
            {"hosts": {k: dict(v, stale=_is_stale(v, now)) for k, v in hosts.items()}},
            separators=(",", ":"),
        )
    if not hosts:
        what = f"no data for {host}" if host else "no sgmon running"
        return _dim(f"sgmon: {what}", fmt)
    order = {"primary": 0, "standby": 1}
    parts = []
    for name, h in sorted(hosts.items(), key=lambda kv: (order.get(kv[1]["role"], 2), kv[0])):
        tag = h.get("tag") or name
        if _is_stale(h, now):
            parts.append(_dim(f"{tag} stale {now - h['written']:.0f}s", fmt))
            continue
        items = [_item(label, text, sev, fmt) for label, text, sev in h.get("items", ())]
        parts.append(" ".join([tag, *items]) if items else _dim(f"{tag} no data", fmt))
    return " | ".join(parts)


def _item(label: str, text: str, sev: str, fmt: str) -> str:
    s = f"{label} {text}"
    if fmt == "tmux" and sev in TMUX_COLOUR:
        return f"{TMUX_COLOUR[sev]}{s}{TMUX_RESET}"
    return s


def _dim(text: str, fmt: str) -> str:
    return f"{TMUX_COLOUR['stale']}{text}{TMUX_RESET}" if fmt == "tmux" else text


def main(fmt: str = "plain", host: str | None = None) -> int:
    """Print the line; any failure is a short notice, and the exit code is always 0 for tmux."""
    try:
        line = render(fmt, host)
    except Exception as e:  # the status bar must never show a traceback
        line = _dim(f"sgmon: status unreadable ({type(e).__name__})", fmt)
    print(line, flush=True)
    return 0
