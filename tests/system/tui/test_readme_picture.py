"""The README's picture is what the current code draws: docs/make_screenshot.py steps the
simulated pair on a fixed clock and seed, so the same code draws the same bytes, and a change
to any panel, title or finding that the picture shows fails here until it is drawn again."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from paths import REPO


def test_the_readme_picture_is_drawn_by_the_current_code(tmp_path: Path) -> None:
    out = tmp_path / "screenshot.svg"
    r = subprocess.run(
        [sys.executable, str(REPO / "docs" / "make_screenshot.py"), str(out)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "docs/screenshot.svg" in (REPO / "README.md").read_text()
    assert out.read_bytes() == (REPO / "docs" / "screenshot.svg").read_bytes(), (
        "the README's picture is stale: run python docs/make_screenshot.py"
    )
