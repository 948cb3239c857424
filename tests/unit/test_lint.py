"""Checks the linters leave out: a bare string that is no docstring.

A string continued onto the next line without parentheses after a ``return`` is a statement
of its own that nothing reads (the advice it belonged to ended mid-sentence); ruff's B018 leaves
bare strings alone because docstrings are bare strings.  Here a bare string is allowed only
where it documents: first in a module, class or function, or right after an assignment (an
attribute docstring, as Sphinx and this code base use them, ``self.x = ...`` included).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _stray_strings(tree: ast.AST) -> list[int]:
    """Line numbers of bare string statements that document nothing."""
    bad: list[int] = []
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            body = getattr(node, name, None)
            if not isinstance(body, list):
                continue
            for i, stmt in enumerate(body):
                if not (
                    isinstance(stmt, ast.Expr)
                    and isinstance(stmt.value, ast.Constant)
                    and isinstance(stmt.value.value, str)
                ):
                    continue
                docstring = i == 0 and name == "body" and not isinstance(node, ast.If | ast.For)
                attribute = i > 0 and isinstance(body[i - 1], ast.Assign | ast.AnnAssign)
                if not (docstring or attribute):
                    bad.append(stmt.lineno)
    return bad


def test_no_string_statement_documents_nothing() -> None:
    found = []
    for top in ("sgmon", "collectors", "themes", "bench"):
        for path in sorted((ROOT / top).rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            found += [f"{path.relative_to(ROOT)}:{n}" for n in _stray_strings(tree)]
    assert found == []


def test_the_check_finds_a_continued_return() -> None:
    src = 'def f(x):\n    if x:\n        return "a, " + x + ", b"\n        "c"\n    return x\n'
    assert _stray_strings(ast.parse(src)) == [4]
    assert _stray_strings(ast.parse('X = 1\n"""X\'s meaning."""\n')) == []
