"""One home per operator kind: an operator name (a JobGraph `operator`, e.g. "GroupAggregate")
appears as a string literal only in the module that declares its spec
(runtime/operators/spec.py). Everything else looks the spec up or uses `SPEC.name`.

The scan covers planner/, runtime/ and streamsql/ (docstrings and comments excluded; a
string fragment of an f-string counts). There is no allow-list: every kind is a spec.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

from runtime.operators.spec import all_specs

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("planner", "runtime", "streamsql")


def operator_names() -> set[str]:
    return {s.name for s in all_specs()}  # all_specs loads every operator module


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the Constant nodes that are docstrings."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def literal_occurrences(names: set[str]) -> Counter[tuple[str, str]]:
    """(file relative to the repository, name) -> number of string literals equal to name."""
    found: Counter[tuple[str, str]] = Counter()
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docs = _docstrings(tree)
            rel = path.relative_to(ROOT).as_posix()
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Constant)
                    and isinstance(node.value, str)
                    and node.value in names
                    and id(node) not in docs
                ):
                    found[(rel, node.value)] += 1
    return found


def spec_modules() -> dict[str, str]:
    """operator name -> the file that declares its spec."""
    out: dict[str, str] = {}
    for spec in all_specs():
        mod = sys.modules[type(spec).__module__]
        assert mod.__file__ is not None
        out[spec.name] = Path(mod.__file__).resolve().relative_to(ROOT).as_posix()
    return out


def test_operator_names_only_in_their_spec_module() -> None:
    homes = spec_modules()
    found = literal_occurrences(operator_names())
    stray = {key: n for key, n in found.items() if homes.get(key[1]) != key[0]}
    assert not stray, (
        "operator names spelled as string literals outside their spec module (use SPEC.name, "
        f"Node.is_kind(SPEC) or the params class): {sorted(stray.items())}"
    )


def test_every_spec_is_declared_once_with_its_params_class() -> None:
    specs = all_specs()
    assert len({s.name for s in specs}) == len(specs)
    assert len({s.params_type for s in specs}) == len(specs)
    for s in specs:
        assert s.operator_class is not None, s.name
