"""The readers of frames name no collector field by a string: they reach fields through the
typed references of sgmon/fields.py, so a misspelt field fails under mypy, not silently as a
None.  The exporter names no collector: a new collector needs no edit there."""

from __future__ import annotations

import ast
from pathlib import Path

from paths import REPO

from sgmon import registry

CONSUMERS = ("analysis", "tui", "sinks", "report", "commands", "topology", "symmetry",
             "headless.py", "monitor.py", "judgement.py", "status.py")  # fmt: skip
LIMIT = 60
"""What may stay: words that equal a field's name without being one (a heading the user reads,
a key of a JSON output, a finding's subject)."""


def _literals(paths: list[Path], words: set[str]) -> list[str]:
    """``file:line 'word'`` for each string literal in ``paths`` that is one of ``words``."""
    return [
        f"{path.name}:{node.lineno} {node.value!r}"
        for path in paths
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.Constant) and node.value in words
    ]


def _files(*names: str) -> list[Path]:
    out: list[Path] = []
    for name in names:
        p = REPO / "sgmon" / name
        out += [p] if p.is_file() else sorted(p.rglob("*.py"))
    assert out, names
    return out


def test_consumers_name_fields_through_typed_references() -> None:
    fields = {f.name for n in registry.builtin_names() for f in registry.builtin(n).fields}
    found = _literals(_files(*CONSUMERS), fields)
    assert len(found) <= LIMIT, "\n".join(found)


def test_the_exporter_names_no_collector() -> None:
    assert _literals(_files("sinks/prometheus"), set(registry.builtin_names())) == []


def test_the_count_sees_a_field_named_by_string(tmp_path: Path) -> None:
    """The check itself can fail: a row read by the field's name is counted."""
    f = tmp_path / "rule.py"
    f.write_text('def f(row):\n    return row.get("w_await"), row.get(DISK.w_await.name)\n')
    assert _literals([f], {"w_await"}) == ["rule.py:2 'w_await'"]
