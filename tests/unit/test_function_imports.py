"""No import of a project module inside a function in planner/ and runtime/, unless it is
listed below with its reason. Imports inside functions used to hold import cycles
together; a module-level import makes the dependency visible (and a cycle an error).

Legitimate reasons to import late: start-up time (a module only a few statements need,
not loaded by `streamsql -e "SELECT 1"`), and a heavy optional dependency. The entries
marked "cycle" are cycles that remain to be untangled. The list only shrinks: a new
function-level import fails the first test, a stale entry the second.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("planner", "runtime")
PROJECT = ("planner", "runtime", "streamsql")

_START_UP = "start-up: loaded only by the statements that use it, not by `streamsql -e 'SELECT 1'`"
_SPARK_WORKER = (
    "start-up of Spark's Python workers: they import runtime/executor/spark/stateful.py to unpickle the "
    "functions shipped to them (the driver-side worker only calls `init`), so it imports only numpy, pyarrow "
    "and runtime.batch at module level and each function imports the runtime it runs"
)

# (file, imported module) -> (number of function-level imports, reason)
ALLOWED: dict[tuple[str, str], tuple[int, str]] = {
    ("runtime/executor/spark/stateful.py", "runtime.config.core"): (1, _SPARK_WORKER),
    ("runtime/executor/spark/stateful.py", "runtime.executor.spark.types"): (2, _SPARK_WORKER),
    ("runtime/executor/spark/stateful.py", "runtime.graph"): (2, _SPARK_WORKER),
    ("runtime/executor/spark/stateful.py", "runtime.operators.base"): (4, _SPARK_WORKER),
    ("runtime/executor/spark/stateful.py", "runtime.state"): (1, _SPARK_WORKER),
    ("runtime/executor/spark/stateful.py", "runtime.state.keygroups"): (2, _SPARK_WORKER),
    ("runtime/executor/spark/stateful.py", "runtime.operators.rank"): (1, _SPARK_WORKER),
    ("runtime/executor/spark/stateful.py", "runtime.operators.rank_common"): (1, _SPARK_WORKER),
    ("runtime/executor/spark/stateful.py", "runtime.state.options"): (1, _SPARK_WORKER),
    ("planner/binder/select.py", "planner.binder.match_recognize"): (1, _START_UP + " (MATCH_RECOGNIZE)"),
    ("runtime/aggregates/aggset.py", "runtime.aggregates.factory"): (
        1,
        _START_UP + " (the statistical aggregates and Python UDAFs, with the first aggregate)",
    ),
    ("runtime/operators/correlate.py", "runtime.functions.python_udf"): (1, _START_UP + " (Python table functions)"),
    ("runtime/functions/python_udf.py", "runtime.functions.async_udf"): (
        1,
        _START_UP + " (async scalar functions: asyncio, ~10 ms)",
    ),
}


def _imported_module(node: ast.Import | ast.ImportFrom, path: Path) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:
        base = list(path.relative_to(ROOT).with_suffix("").parts)
        base = base[: len(base) - node.level]
        return [".".join(base + ([node.module] if node.module else []))]
    return [node.module or ""]


def function_level_imports() -> Counter[tuple[str, str]]:
    """(file, module) -> how many imports of that project module sit inside functions."""
    found: Counter[tuple[str, str]] = Counter()
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()

            def visit(node: ast.AST, in_function: bool, path: Path = path, rel: str = rel) -> None:
                for child in ast.iter_child_nodes(node):
                    inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
                    if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                        for module in _imported_module(child, path):
                            if module.split(".")[0] in PROJECT:
                                found[(rel, module)] += 1
                    visit(child, inside)

            visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return found


def test_no_unlisted_function_level_import_of_a_project_module() -> None:
    found = function_level_imports()
    extra = {k: n for k, n in found.items() if ALLOWED.get(k, (0, ""))[0] < n}
    assert not extra, (
        "imports of project modules inside functions (import at module level; if that makes an "
        f"import cycle, move the shared code so the dependency goes one way): {sorted(extra.items())}"
    )


def test_allow_list_is_not_stale() -> None:
    found = function_level_imports()
    stale = {k: v[0] for k, v in ALLOWED.items() if found.get(k, 0) != v[0]}
    assert not stale, f"ALLOWED entries whose count changed (update or remove them): {stale}"
