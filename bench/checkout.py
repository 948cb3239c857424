"""The code a bench measures: the checkout it lives in, byte-compiled as an install leaves it.

Run from a worktree, a bench must time that worktree: without the checkout on PYTHONPATH, a
command started outside it (the local dashboard runs in a temporary HOME) imports whatever the
venv's editable install points at.  And under PYTHONDONTWRITEBYTECODE (set on the bench vm) every
start compiled sgmon's modules again, 0.13 s of CPU before the dashboard's first frame, which
`pip install` pays once.
"""

from __future__ import annotations

import compileall
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("sgmon", "collectors", "themes")


def checkout_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` with this checkout first on PYTHONPATH (and on this process' path), its packages
    compiled."""
    for package in PACKAGES:
        compileall.compile_dir(ROOT / package, quiet=1)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    path = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return {**env, "PYTHONPATH": path}
