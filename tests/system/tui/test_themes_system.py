"""Themes are data: built-ins load without Textual, user themes add or override, bad ones skip."""

from __future__ import annotations

import subprocess
import sys


def test_themes_load_without_textual() -> None:
    code = "import sys, themes; themes.load_themes(); print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
