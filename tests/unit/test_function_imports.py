"""No import of a project module inside a function in planner/, runtime/ and streamsql/,
unless it is listed below with its reason, and never one that holds an import cycle
together: a module-level import makes the dependency visible (and a cycle an error).

Where two modules need each other, the dependency goes one way and the other direction is
a registration, a parameter or a protocol (e.g. the binder's query forms register with
planner/binder/query.py; Expression.in_ takes any `SubqueryTable`), or the shared code
moves down into a module both import (planner/catalog_objects.py,
runtime/connectors/filesystem_paths.py).

The reasons a late import may stay are the constants below, none of them a cycle, and
`test_no_listed_import_closes_a_cycle` checks that moving each one to module level would
make no cycle. A new function-level import fails the first test, a stale entry the second.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("planner", "runtime", "streamsql")
PROJECT = PACKAGES

_START_UP = (
    "start-up: a module a `SELECT 1` does not load (through `streamsql -e` or the Table API), loaded by "
    "the statements that use it"
)
_DEFERRED = (
    "start-up of the entry layer: streamsql/ (CLI, shell, REST server, Table API) loads what a command, "
    "statement or call needs when it runs, so creating a TableEnvironment, `streamsql --version` and the "
    "shell's prompt do not load it"
)
_SPARK_WORKER = (
    "start-up of Spark's Python workers: they import runtime/executor/spark/stateful.py to unpickle the "
    "functions shipped to them (the driver-side worker only calls `init`), so it imports only numpy, pyarrow, "
    "runtime.batch and runtime.errors at module level and each function imports the runtime it runs"
)
REASONS = (_START_UP, _DEFERRED, _SPARK_WORKER)

# (file, imported module) -> (number of function-level imports, reason)
ALLOWED: dict[tuple[str, str], tuple[int, str]] = {
    ("runtime/executor/spark/stateful.py", "runtime.config.core"): (1, _SPARK_WORKER),
    ("runtime/executor/spark/stateful.py", "runtime.executor.spark.types"): (2, _SPARK_WORKER),
    ("runtime/executor/spark/stateful.py", "runtime.graph"): (2, _SPARK_WORKER),
    ("runtime/executor/spark/stateful.py", "runtime.map_values"): (1, _SPARK_WORKER),
    ("runtime/executor/spark/stateful.py", "runtime.operators.base"): (4, _SPARK_WORKER),
    ("runtime/executor/spark/stateful.py", "runtime.state"): (1, _SPARK_WORKER),
    ("runtime/executor/spark/stateful.py", "runtime.state.keygroups"): (1, _SPARK_WORKER),
    ("runtime/executor/spark/stateful.py", "runtime.executor.spark.ties"): (2, _SPARK_WORKER),
    ("runtime/executor/spark/stateful.py", "runtime.executor.spark.slot_store"): (3, _SPARK_WORKER),
    ("runtime/executor/spark/stateful.py", "runtime.checkpoint.format"): (2, _SPARK_WORKER),
    ("runtime/executor/spark/stateful.py", "runtime.pandas_interop"): (1, _SPARK_WORKER),
    ("runtime/executor/spark/stateful.py", "runtime.connectors.base"): (1, _SPARK_WORKER),
    ("runtime/executor/spark/stateful.py", "runtime.connectors.formats"): (1, _SPARK_WORKER),
    ("runtime/executor/spark/stateful.py", "runtime.state.options"): (1, _SPARK_WORKER),
    ("planner/binder/select.py", "planner.binder.match_recognize"): (1, _START_UP),  # MATCH_RECOGNIZE
    ("runtime/aggregates/more.py", "runtime.functions.json_functions"): (1, _START_UP),  # JSON_OBJECTAGG/ARRAYAGG
    ("planner/binder/expressions.py", "runtime.functions.json_functions"): (2, _START_UP),  # JSON_OBJECT/ARRAY
    # a binder form builds its rule module's logical node (the rule module imports its operators)
    ("planner/binder/changelog_ptf.py", "planner.rules.changelog_ptf"): (1, _START_UP),
    ("planner/binder/changelog_ptf.py", "runtime.operators.process_table_function"): (5, _START_UP),
    ("planner/binder/grouping_sets.py", "planner.rules.grouping_sets"): (1, _START_UP),
    ("planner/binder/lateral.py", "planner.rules.correlate"): (2, _START_UP),
    ("planner/binder/lateral.py", "runtime.operators.correlate"): (2, _START_UP),
    ("planner/binder/over.py", "planner.rules.over"): (4, _START_UP),
    ("planner/binder/ranking.py", "planner.rules.ranking"): (3, _START_UP),
    ("planner/binder/setops.py", "planner.rules.setops"): (1, _START_UP),
    ("planner/binder/subqueries.py", "planner.rules.joins"): (1, _START_UP),
    ("planner/binder/time_joins.py", "planner.rules.time_joins"): (1, _START_UP),
    # the grammars and classes of statements other than queries, INSERT, SET/RESET, CREATE TABLE/VIEW
    ("planner/parse.py", "planner.statements_catalog"): (4, _START_UP),
    ("planner/parse.py", "planner.statements_dml"): (1, _START_UP),
    ("planner/parse.py", "planner.statements_functions"): (2, _START_UP),
    ("planner/parse.py", "planner.statements_materialized"): (3, _START_UP),
    ("planner/parse.py", "planner.statements_models"): (3, _START_UP),
    ("planner/catalog.py", "planner.statements_materialized"): (1, _START_UP),
    # logical rules of rule modules, run for a plan that has their nodes
    ("planner/optimizer/phases.py", "planner.rules.joins"): (1, _START_UP),
    # the non-deterministic update check and the operator specs it visits: TRY_RESOLVE only
    ("planner/api.py", "planner.optimizer.non_deterministic_update"): (1, _START_UP),
    ("planner/optimizer/phases.py", "planner.rules.ranking"): (1, _START_UP),
    ("planner/optimizer/window_rewrite.py", "planner.rules.grouping_sets"): (1, _START_UP),
    # the operator modules of aggregations, windows and normalized scans: loaded by the physical
    # converter that builds their node, and by an optimizer rule once the plan has its nodes
    ("planner/physical.py", "runtime.operators.changelog_normalize"): (2, _START_UP),
    ("planner/physical.py", "runtime.operators.group_agg"): (1, _START_UP),
    ("planner/physical.py", "runtime.operators.window_agg"): (1, _START_UP),
    ("planner/physical.py", "runtime.operators.window_tvf"): (1, _START_UP),
    ("planner/physical.py", "runtime.operators.session_tvf"): (1, _START_UP),
    ("planner/optimizer/mini_batch.py", "runtime.operators.mini_batch"): (1, _START_UP),
    ("planner/changelog.py", "runtime.operators.drop_update_before"): (1, _START_UP),
    ("planner/lower.py", "runtime.operators.sink_materializer"): (1, _START_UP),  # upsert sinks keyed otherwise
    ("planner/optimizer/sink_keyed_shuffle.py", "runtime.operators.changelog_normalize"): (1, _START_UP),
    ("planner/optimizer/sink_keyed_shuffle.py", "runtime.operators.group_agg"): (1, _START_UP),
    ("planner/optimizer/split_distinct.py", "runtime.operators.expand"): (1, _START_UP),
    ("planner/optimizer/split_distinct.py", "runtime.operators.group_agg"): (2, _START_UP),
    ("planner/optimizer/two_phase_agg.py", "runtime.operators.group_agg"): (3, _START_UP),
    ("planner/optimizer/two_phase_agg.py", "runtime.operators.two_phase_agg"): (1, _START_UP),
    ("planner/optimizer/two_phase_window_agg.py", "runtime.operators.window_agg"): (2, _START_UP),
    ("planner/optimizer/two_phase_window_agg.py", "runtime.operators.window_slicing"): (1, _START_UP),
    ("planner/optimizer/two_phase_window_agg.py", "runtime.operators.window_two_phase"): (1, _START_UP),
    # restoring with another parallelism (the generic operator state's merge)
    # a state file of an older streamsql that holds Arrow maps
    ("runtime/checkpoint/format.py", "runtime.map_values"): (1, _START_UP),
    ("runtime/operators/base.py", "runtime.checkpoint.rescale"): (1, _START_UP),
    ("runtime/operators/base.py", "runtime.checkpoint.restore"): (1, _START_UP),
    # the statistical aggregates and Python UDAFs, with the first aggregate
    ("runtime/aggregates/aggset.py", "runtime.aggregates.factory"): (1, _START_UP),
    ("runtime/functions/python_udf.py", "runtime.functions.async_udf"): (1, _START_UP),  # asyncio, ~10 ms
    ("streamsql/catalog.py", "planner.catalog_objects"): (1, _DEFERRED),
    ("streamsql/catalog.py", "streamsql.analyze_table"): (1, _DEFERRED),
    ("streamsql/catalog_statements.py", "planner.binder.expressions"): (1, _DEFERRED),
    ("streamsql/catalog_statements.py", "planner.binder.scope"): (1, _DEFERRED),
    ("streamsql/catalog_statements.py", "planner.binder.types"): (1, _DEFERRED),
    ("streamsql/catalog_statements.py", "streamsql.analyze_table"): (1, _DEFERRED),
    ("streamsql/table_env_catalog.py", "planner.parse"): (1, _DEFERRED),
    ("streamsql/table_env_catalog.py", "streamsql.models"): (1, _DEFERRED),
    ("streamsql/catalog.py", "streamsql.descriptors"): (1, _DEFERRED),
    ("streamsql/catalog_statements.py", "planner.catalog_alter"): (2, _DEFERRED),
    ("streamsql/catalog_statements.py", "streamsql.table_env_api"): (1, _DEFERRED),
    ("streamsql/cli.py", "planner.catalog"): (1, _START_UP),
    ("streamsql/cli.py", "planner.errors"): (5, _START_UP),
    ("streamsql/cli.py", "planner.parse"): (1, _START_UP),
    ("streamsql/cli.py", "planner.statements"): (2, _START_UP),
    ("streamsql/cli.py", "runtime.checkpoint.options"): (1, _START_UP),
    ("streamsql/cli.py", "runtime.config.core"): (1, _START_UP),
    ("streamsql/cli.py", "runtime.errors"): (3, _START_UP),
    ("streamsql/cli.py", "runtime.executor.spark.options"): (1, _START_UP),
    ("streamsql/cli.py", "runtime.pandas_interop"): (1, _DEFERRED),
    ("streamsql/cli.py", "streamsql.client_output"): (8, _START_UP),
    ("streamsql/cli.py", "streamsql.control"): (1, _START_UP),
    ("streamsql/cli.py", "streamsql.environment"): (1, _START_UP),
    ("streamsql/cli.py", "streamsql.printing"): (1, _START_UP),
    ("streamsql/cli.py", "streamsql.progress"): (1, _START_UP),
    ("streamsql/cli.py", "streamsql.rest.options"): (2, _START_UP),
    ("streamsql/cli.py", "streamsql.rest.serve_cli"): (1, _START_UP),
    ("streamsql/cli.py", "streamsql.rest.server"): (1, _START_UP),
    ("streamsql/cli.py", "streamsql.result"): (1, _START_UP),
    ("streamsql/cli.py", "streamsql.savepoint_cli"): (2, _START_UP),
    ("streamsql/cli.py", "streamsql.shell"): (1, _START_UP),
    ("streamsql/cli.py", "streamsql.shell.options"): (1, _START_UP),
    ("streamsql/cli.py", "streamsql.shell.statements"): (4, _START_UP),
    ("streamsql/cli.py", "streamsql.stats"): (1, _START_UP),
    ("streamsql/client_output.py", "planner.statements"): (1, _DEFERRED),
    ("streamsql/client_output.py", "planner.statements_dml"): (1, _DEFERRED),
    ("streamsql/client_output.py", "streamsql.printing"): (1, _DEFERRED),
    ("streamsql/client_output.py", "streamsql.result"): (1, _DEFERRED),
    ("streamsql/environment.py", "planner.api"): (1, _START_UP),
    ("streamsql/environment.py", "streamsql.udf"): (2, _DEFERRED),
    ("runtime/udf_registry.py", "runtime.udf_options"): (2, _START_UP),  # a function's open() reads the job's
    ("runtime/udf_registry.py", "runtime.udf_metrics"): (1, _START_UP),  # parameters and metric settings
    ("streamsql/table_config_api.py", "runtime.udf_options"): (2, _START_UP),
    ("streamsql/table_env_catalog.py", "runtime.udf_options"): (1, _START_UP),
    ("streamsql/environment.py", "planner.catalog"): (1, _START_UP),
    ("streamsql/environment.py", "streamsql.catalog_stores"): (1, _START_UP),
    ("streamsql/environment.py", "planner.table_as"): (1, _START_UP),
    ("streamsql/environment.py", "planner.catalog_objects"): (2, _START_UP),
    ("streamsql/environment.py", "planner.functions_catalog"): (1, _START_UP),
    ("streamsql/environment.py", "planner.parse"): (1, _START_UP),
    ("streamsql/environment.py", "planner.statements_functions"): (2, _START_UP),
    ("streamsql/environment.py", "planner.statements_dml"): (1, _START_UP),
    ("streamsql/environment.py", "planner.statements_materialized"): (1, _START_UP),
    ("streamsql/environment.py", "runtime.connectors.base"): (1, _START_UP),
    ("streamsql/environment.py", "runtime.connectors.filesystem_partitions"): (1, _START_UP),
    ("streamsql/environment.py", "runtime.executor.local"): (1, _START_UP),
    ("streamsql/environment.py", "runtime.executor.parallel.executor"): (1, _START_UP),
    ("streamsql/environment.py", "runtime.executor.spark"): (1, _START_UP),
    ("streamsql/environment.py", "streamsql.catalog_statements"): (3, _START_UP),
    ("streamsql/environment.py", "streamsql.common"): (1, _DEFERRED),
    ("streamsql/environment.py", "streamsql.materialized_tables"): (1, _START_UP),
    ("streamsql/environment.py", "streamsql.rest.server"): (1, _START_UP),
    ("streamsql/environment.py", "streamsql.row_level"): (1, _START_UP),
    ("streamsql/environment.py", "streamsql.table"): (1, _START_UP),
    ("streamsql/expressions.py", "planner.errors"): (1, _DEFERRED),
    ("streamsql/expressions.py", "runtime.udf_registry"): (1, _DEFERRED),
    ("streamsql/expressions.py", "streamsql.udf"): (2, _DEFERRED),
    ("streamsql/materialized_tables.py", "planner.api"): (2, _START_UP),
    ("streamsql/materialized_tables.py", "runtime.functions.datetime_patterns"): (1, _START_UP),
    ("streamsql/materialized_tables.py", "streamsql.client_output"): (1, _DEFERRED),
    ("streamsql/pipeline.py", "runtime.graph"): (1, _DEFERRED),
    ("streamsql/pipeline.py", "streamsql.unsupported"): (2, _DEFERRED),
    ("streamsql/printing.py", "runtime.render"): (1, _DEFERRED),
    ("streamsql/rest/serve_cli.py", "streamsql.environment"): (1, _DEFERRED),
    ("streamsql/rest/server.py", "planner.errors"): (1, _DEFERRED),
    ("streamsql/rest/server.py", "planner.statements"): (1, _DEFERRED),
    ("streamsql/result.py", "streamsql.common"): (1, _DEFERRED),
    ("streamsql/result.py", "streamsql.descriptors"): (2, _START_UP),
    ("streamsql/result.py", "streamsql.stats"): (2, _START_UP),
    ("streamsql/result.py", "streamsql.tableau"): (1, _START_UP),
    ("streamsql/savepoint_cli.py", "runtime.checkpoint.restore"): (1, _DEFERRED),
    ("streamsql/savepoint_cli.py", "streamsql.control"): (2, _DEFERRED),
    ("streamsql/shell/__init__.py", "streamsql.shell.app"): (1, _START_UP),
    ("streamsql/shell/completion.py", "runtime.functions.registry"): (1, _DEFERRED),
    ("streamsql/shell/completion.py", "streamsql.config"): (1, _DEFERRED),
    ("streamsql/shell/session.py", "planner.errors"): (3, _DEFERRED),
    ("streamsql/shell/session.py", "planner.parse"): (3, _DEFERRED),
    ("streamsql/shell/session.py", "planner.statements"): (2, _DEFERRED),
    ("streamsql/shell/session.py", "streamsql.printing"): (1, _DEFERRED),
    ("streamsql/shell/session.py", "streamsql.shell.pump"): (1, _DEFERRED),
    ("streamsql/shell/statements.py", "planner.parse"): (1, _DEFERRED),
    ("streamsql/shell/table_view.py", "streamsql.shell.pump"): (1, _DEFERRED),
    ("streamsql/statement_set.py", "streamsql.pipeline"): (1, _DEFERRED),
    ("streamsql/statement_set.py", "streamsql.unsupported"): (1, _DEFERRED),
    ("streamsql/table.py", "planner.parse"): (2, _DEFERRED),
    ("streamsql/table.py", "runtime.udf_registry"): (2, _DEFERRED),
    ("streamsql/table.py", "streamsql.pipeline"): (1, _START_UP),
    ("streamsql/table.py", "runtime.operators.process_table_function"): (2, _START_UP),  # to/from_changelog
    ("streamsql/table.py", "streamsql.table_flat_aggregate"): (2, _START_UP),
    ("streamsql/table.py", "streamsql.window"): (1, _DEFERRED),
    ("streamsql/table_env_api.py", "runtime.pandas_interop"): (1, _DEFERRED),
    ("streamsql/table_env_api.py", "streamsql.statement_set"): (1, _START_UP),
    ("streamsql/table_env_api.py", "streamsql.table"): (2, _START_UP),
    ("streamsql/table_env_api.py", "streamsql.table_lowering"): (1, _START_UP),
    ("streamsql/table_env_api.py", "streamsql.table_sources"): (4, _START_UP),
    ("streamsql/table_env_api.py", "streamsql.unsupported"): (1, _DEFERRED),
    ("streamsql/table_env_catalog.py", "planner.errors"): (2, _DEFERRED),
    ("streamsql/table_env_catalog.py", "planner.statements"): (1, _DEFERRED),
    ("streamsql/table_env_catalog.py", "streamsql.catalog"): (1, _START_UP),
    ("streamsql/table_env_catalog.py", "streamsql.modes"): (1, _DEFERRED),
    ("streamsql/table_env_catalog.py", "streamsql.pipeline"): (1, _START_UP),
    ("streamsql/table_flat_aggregate.py", "planner.rules.table_aggregate"): (1, _DEFERRED),
    ("streamsql/table_flat_aggregate.py", "runtime.udf_registry"): (2, _DEFERRED),
    ("streamsql/table_lowering.py", "planner.binder.expressions"): (1, _DEFERRED),
    ("streamsql/table_lowering.py", "runtime.functions.registry"): (1, _DEFERRED),
    ("streamsql/table_sources.py", "runtime.connectors.memory"): (1, _DEFERRED),
}


def _module_file(module: str) -> Path | None:
    base = ROOT.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_module(node: ast.Import | ast.ImportFrom, path: Path) -> list[str]:
    """The modules an import statement loads (`from pkg import sub` loads pkg.sub)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    module = node.module or ""
    if node.level:
        base = _module_name(path).split(".")
        if path.name != "__init__.py":
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        module = ".".join(base + ([node.module] if node.module else []))
    subs = [f"{module}.{a.name}" for a in node.names if _module_file(f"{module}.{a.name}") is not None]
    return subs or [module]


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _files() -> list[Path]:
    return [p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))]


def function_level_imports() -> Counter[tuple[str, str]]:
    """(file, module) -> how many imports of that project module sit inside functions."""
    found: Counter[tuple[str, str]] = Counter()
    for path in _files():
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


def module_level_imports() -> dict[str, dict[str, bool]]:
    """module -> {project module it loads when imported: whether it names that module}.
    Its module-level imports outside `if TYPE_CHECKING:` are named (True); the packages
    above each of them and above the module itself are loaded without being named (False):
    Python only needs them in sys.modules, initialized or not."""
    graph: dict[str, dict[str, bool]] = {}
    for path in _files():
        deps: dict[str, bool] = {}

        def add(module: str, named: bool, deps: dict[str, bool] = deps) -> None:
            parts = module.split(".")
            for i in range(1, len(parts)):
                deps.setdefault(".".join(parts[:i]), False)
            if named:
                deps[module] = True
            else:
                deps.setdefault(module, False)

        todo: list[ast.AST] = [ast.parse(path.read_text(encoding="utf-8"))]
        while todo:
            for child in ast.iter_child_nodes(todo.pop()):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) or _is_type_checking(child):
                    continue
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    for module in _imported_module(child, path):
                        if module.split(".")[0] in PROJECT:
                            add(module, True)
                elif not isinstance(child, ast.expr):
                    todo.append(child)
        name = _module_name(path)
        if "." in name:
            add(name.rsplit(".", 1)[0], False)
        graph[name] = deps
    return graph


def _reaches(graph: dict[str, dict[str, bool]], start: str, goal: str, started: set[str]) -> bool:
    """Whether importing `start` loads `goal`, given that the packages `started` are already
    in sys.modules (reaching one of them without naming it loads nothing)."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        module = todo.pop()
        if module == goal:
            return True
        if module in seen:
            continue
        seen.add(module)
        todo.extend(dep for dep, named in graph.get(module, {}).items() if named or dep not in started)
    return False


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


def test_every_reason_is_one_of_the_declared_reasons() -> None:
    assert all("cycle" not in reason for reason in REASONS)
    odd = {k: reason for k, (_, reason) in ALLOWED.items() if reason not in REASONS}
    assert not odd, f"ALLOWED entries with a reason that is not one of REASONS: {odd}"


def test_no_listed_import_closes_a_cycle() -> None:
    """Moving any listed import to module level makes no import cycle: the imported module
    does not load the importing one. When the importing module runs, the packages above it
    (and the package itself, for an `__init__`) are in sys.modules: passing through one of
    them counts only where a module names it (`from pkg import name`)."""
    graph = module_level_imports()
    cycles = []
    for file, module in ALLOWED:
        importer = _module_name(ROOT / file)
        parts = importer.split(".")
        started = {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
        if module != importer and _reaches(graph, module, importer, started):
            cycles.append((file, module))
    assert not cycles, f"function-level imports that hold an import cycle together: {cycles}"


def test_the_spark_worker_module_stays_light() -> None:
    """`_SPARK_WORKER`'s premise: runtime/executor/spark/stateful.py loads no project module
    but runtime.batch and runtime.errors at module level (its packages' `__init__`s import nothing)."""
    loaded = {m for m, named in module_level_imports()["runtime.executor.spark.stateful"].items() if named}
    assert loaded == {"runtime.batch", "runtime.errors"}, loaded
    for package in ("runtime", "runtime.executor", "runtime.executor.spark"):
        named = {m for m, n in module_level_imports()[package].items() if n}
        assert not named, (package, named)
