"""The gates every change passes: lint, format, the import layers and the types.

Run as tests so that the README's one test command (and CI, which runs exactly it) holds them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from paths import REPO

ROOT = REPO
BIN = Path(sys.executable).parent


@pytest.mark.parametrize(
    "argv",
    [
        ["ruff", "check", "."],
        ["ruff", "format", "--check", "."],
        ["lint-imports"],
        ["mypy"],
    ],
    ids=["ruff-check", "ruff-format", "import-layers", "mypy"],
)
def test_gate(argv: list[str]) -> None:
    r = subprocess.run(
        [str(BIN / argv[0]), *argv[1:]], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
