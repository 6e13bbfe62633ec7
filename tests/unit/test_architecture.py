"""The import direction is streamsql → planner → runtime (ARCHITECTURE.md): the runtime
never imports the planner or streamsql, the planner never imports streamsql. Checked on
the AST, so imports inside functions count too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = {"runtime": {"planner", "streamsql"}, "planner": {"streamsql"}}


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name.split(".")[0]) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module.split(".")[0]))
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_import_direction(package: str) -> None:
    files = sorted((ROOT / package).rglob("*.py"))
    assert files, f"no modules found in {package}/"
    bad = [
        f"{p.relative_to(ROOT)}:{line} imports {mod}"
        for p in files
        for line, mod in _imports(p)
        if mod in FORBIDDEN[package]
    ]
    assert not bad, "imports against the direction streamsql → planner → runtime:\n" + "\n".join(bad)


def test_checker_sees_a_violation(tmp_path: Path) -> None:
    """The check itself works: a backwards import is found, even inside a function."""
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from planner.api import Planner\n")
    assert (2, "planner") in _imports(f)
