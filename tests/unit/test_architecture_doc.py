"""docs/architecture.md names modules and files a new contributor will look for: each must exist.

A move or a split that leaves the page pointing at a module that is gone fails here, so the
page stays the true map of the tree.
"""

from __future__ import annotations

import importlib.util
import re

from paths import REPO

DOC = REPO / "docs" / "architecture.md"
PATH = re.compile(r"`((?:sgmon|collectors|themes|docs|tests|deploy|bench)/[\w./-]*)`")
MODULE = re.compile(r"`((?:sgmon|collectors)(?:\.\w+)+)`")
NOT_MODULES = {"sgmon.collectors", "sgmon.toml"}
"""Named on the page as what they are: the entry-point group, the config file."""


def _named(pattern: re.Pattern[str]) -> set[str]:
    return set(pattern.findall(DOC.read_text()))


def _is_module(name: str) -> bool:
    """Whether ``name`` is an importable module (a name inside a module is not)."""
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a parent that is a module, not a package
        return False


def test_every_path_the_page_names_exists() -> None:
    paths = _named(PATH)
    assert len(paths) >= 20, "the page names the tree's files: found too few to be the map"
    missing = sorted(p for p in paths if not (REPO / p.rstrip("/")).exists())
    assert missing == [], f"docs/architecture.md names files that are gone: {missing}"


def test_every_module_the_page_names_imports() -> None:
    modules = _named(MODULE) - NOT_MODULES
    assert {"sgmon.contract", "sgmon.fields", "sgmon.readers"} <= modules
    missing = []
    for name in sorted(modules):
        parts = name.split(".")
        # `sgmon.model.Field`: the longest prefix that is a module must hold the rest
        for n in range(1, len(parts) + 1):
            if n == len(parts) or not _is_module(".".join(parts[: n + 1])):
                break
        if not _is_module(".".join(parts[:n])):
            missing.append(name)
            continue
        if n < len(parts):
            module = importlib.import_module(".".join(parts[:n]))
            obj: object = module
            for attr in parts[n:]:
                if not hasattr(obj, attr):
                    missing.append(name)
                    break
                obj = getattr(obj, attr)
    assert missing == [], f"docs/architecture.md names modules or names that are gone: {missing}"
