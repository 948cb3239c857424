"""Dashboard colour themes as plain data, loadable without Textual.

Each ``*.toml`` here (and in ``~/.config/sgmon/themes/``) holds the fields of a Textual ``Theme``
plus a ``[variables]`` table with sgmon's own colours (severities, heatmap, budget legs).  Keeping
them as dicts lets headless code list or check themes without paying for Textual; ``sgmon.tui``
turns each dict into a ``textual.theme.Theme``.  A user theme may leave out any sgmon variable:
the dashboard falls back to the dark theme's value.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path
from typing import Any

from sgmon.config import config_dir

BUILTIN_DIR = Path(__file__).parent
ORDER = ("sgmon-dark", "sgmon-light", "sgmon-contrast")
"""Built-in themes in the order the `t` key cycles through them."""


def user_dir() -> Path:
    """Where user themes live: ``$XDG_CONFIG_HOME/sgmon/themes`` (default ``~/.config``)."""
    return config_dir() / "themes"


def _read(path: Path) -> dict[str, Any]:
    spec = tomllib.loads(path.read_text())
    if "name" not in spec or "primary" not in spec:
        raise ValueError(f"{path}: a theme needs at least name and primary")
    spec.setdefault("variables", {})
    return spec


def load_themes(extra_dir: Path | None = None) -> dict[str, dict[str, Any]]:
    """Theme name -> Theme fields: the built-ins, then user themes (which may override them).

    A broken user theme is reported on stderr and skipped; it never stops the dashboard.
    """
    themes = {}
    for path in sorted(BUILTIN_DIR.glob("*.toml")):
        spec = _read(path)
        themes[spec["name"]] = spec
    folder = extra_dir if extra_dir is not None else user_dir()
    if folder.is_dir():
        for path in sorted(folder.glob("*.toml")):
            try:
                spec = _read(path)
            except (OSError, ValueError, tomllib.TOMLDecodeError) as e:
                print(f"sgmon: theme {path} skipped: {e}", file=sys.stderr)
                continue
            themes[spec["name"]] = spec
    return dict(sorted(themes.items(), key=lambda kv: _rank(kv[0])))


def _rank(name: str) -> tuple[int, str]:
    return (ORDER.index(name), "") if name in ORDER else (len(ORDER), name)
