"""The gates every change passes: lint, format, the import layers and the types.

Run as tests so that the README's one test command (and CI, which runs exactly it) holds them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from paths import REPO

ROOT = REPO
BIN = Path(sys.executable).parent

CONTRACT = [
    "sgmon/model.py",
    "sgmon/grading.py",
    "sgmon/verdicts.py",
    "sgmon/contract.py",
    "sgmon/fields.py",
]
"""The typed contract's modules, held to ``mypy --strict`` with all they import from sgmon
(pyproject's mypy overrides hold them to it in the plain ``mypy`` gate as well)."""


def _run(argv: list[str], cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / argv[0]), *argv[1:]],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **env},
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["ruff", "check", "."],
        ["ruff", "format", "--check", "."],
        ["lint-imports"],
        ["mypy"],
        ["mypy", "--strict", *CONTRACT],
        ["mypy", "--strict", "sgmon/readers"],
    ],
    ids=[
        "ruff-check",
        "ruff-format",
        "import-layers",
        "mypy",
        "mypy-strict-contract",
        "mypy-strict-readers",
    ],
)
def test_gate(argv: list[str]) -> None:
    r = _run(argv)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]


READER = """\
\"\"\"A reader of frames, as the analysis, a panel or a sink is one.\"\"\"

from sgmon.contract import Row
from sgmon.fields import TCP


def rto_ms(row: Row | None) -> float | None:
    return TCP.{field}.of(row)
"""


def test_a_misspelt_field_fails_the_type_check(tmp_path: Path) -> None:
    """The point of the generated references: a field named wrong is a type error, found
    before anything runs, where a string key would read None and go unnoticed."""

    def check(field: str) -> subprocess.CompletedProcess[str]:
        probe = tmp_path / f"reader_{field}.py"
        probe.write_text(READER.format(field=field))
        cache = str(tmp_path / "mypy-cache")
        # no pyproject in tmp_path: --strict alone; sgmon found on MYPYPATH (an editable
        # install's import hook is invisible to mypy)
        return _run(
            ["mypy", "--strict", "--cache-dir", cache, probe.name], tmp_path, MYPYPATH=str(ROOT)
        )

    typo = check("rtoo")
    assert typo.returncode == 1, typo.stdout + typo.stderr
    assert 'has no attribute "rtoo"' in typo.stdout, typo.stdout
    right = check("rto")
    assert right.returncode == 0, right.stdout + right.stderr
