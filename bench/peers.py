"""How the benches start their peers, once: glances without any network access.

glances checks PyPI for a newer version at start and some plugins reach out (``ip`` asks a
public service for the public address, ``cloud`` the metadata server, ``ports`` scans); a bench
must measure monitoring, not those, and must not leave the machine.
"""

from __future__ import annotations

import sys
from pathlib import Path

GLANCES_OFFLINE = [
    "--disable-check-update",
    "--disable-plugin",
    "cloud,ip,ports,docker,wifi,folders,raid,smart,sensors,gpu,containers",
]


def glances() -> str:
    """The glances next to this interpreter (a bench venv), else the one on PATH."""
    local = Path(sys.executable).with_name("glances")
    return str(local) if local.exists() else "glances"
