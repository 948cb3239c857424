"""Where the tests' own files are, wherever a test module sits in the tiers."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
DATA = TESTS / "data"
ROOTS = TESTS / "fixtures" / "roots"
