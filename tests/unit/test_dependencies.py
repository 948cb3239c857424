"""Every declared dependency is imported by the product: a package that nothing imports is dead
weight in every install (and on every database host that runs the collection code)."""

from __future__ import annotations

import ast
import re
import tomllib

from paths import REPO

ROOT = REPO
PRODUCT = ("sgmon", "collectors", "themes")
# a distribution's import name where it differs from its normalised project name
IMPORT_NAME = {"prometheus-client": "prometheus_client", "pyyaml": "yaml"}


def imported_top_names() -> set[str]:
    """The top-level names the product's modules import, at any depth of a module."""
    names: set[str] = set()
    for package in PRODUCT:
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    names.update(a.name.split(".")[0] for a in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    names.add(node.module.split(".")[0])
    return names


def declared() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [re.split(r"[\s<>=!~;\[]", d, maxsplit=1)[0] for d in project["dependencies"]]


def test_every_declared_dependency_is_imported() -> None:
    used = imported_top_names()
    unused = []
    for dist in declared():
        key = re.sub(r"[-_.]+", "-", dist).lower()
        if IMPORT_NAME.get(key, key.replace("-", "_")) not in used:
            unused.append(dist)
    assert not unused, f"declared in [project] dependencies but imported by no module: {unused}"


def test_the_gate_sees_an_unused_dependency() -> None:
    """The check itself can fail: psutil, which the product does not import, would be caught."""
    assert "psutil" not in imported_top_names()
    assert {"textual", "rich", "oracledb", "prometheus_client"} <= imported_top_names()
