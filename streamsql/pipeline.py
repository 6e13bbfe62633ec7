"""PyFlink's TablePipeline, CompiledPlan and PlanReference.

A compiled plan is the JobGraph JSON the planner produces for a set of INSERTs (the same
document a savepoint records): it can be written to a file, read back and executed without
planning the SQL again, as Flink's compiled plans are. The JSON is streamsql's own format,
not Flink's ExecNode JSON.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from planner.errors import SqlValidationError, UnsupportedSqlError
from planner.statements import Explain, InsertInto
from planner.statements_dml import CompilePlan, ExecutePlan
from streamsql.result import TableResult
from streamsql.table_config_api import PLAN_FORCE_RECOMPILE

if TYPE_CHECKING:
    from runtime.graph import JobGraph
    from streamsql.environment import TableEnvironment


def _details(extra_details: tuple[Any, ...]) -> tuple[str, ...]:
    return tuple(str(getattr(d, "name", d)).upper() for d in extra_details)


class TablePipeline:
    """`table.insert_into(path)`: an INSERT not yet run. `execute()` runs it; a
    StatementSet can `add` it to run with others."""

    def __init__(self, env: TableEnvironment, insert: InsertInto, sink_path: str) -> None:
        self._env = env
        self._insert = insert
        self._sink_path = sink_path

    def execute(self) -> TableResult:
        return self._env.execute_statement(self._insert)

    def explain(self, *extra_details: Any) -> str:
        stmt = Explain(self._insert, _details(extra_details), sql=self._insert.sql)
        return str(self._env._with_source(stmt, lambda: self._env._planner().explain(stmt)))

    def print_explain(self, *extra_details: Any) -> None:
        print(self.explain(*extra_details))

    def compile_plan(self) -> CompiledPlan:
        return CompiledPlan(self._env, self._env._planner().plan_inserts([self._insert]))

    def get_sink_identifier(self) -> str | None:
        parts = self._sink_path.split(".")
        return ".".join(["default_catalog", "default_database", *parts][-3:]) if len(parts) < 3 else self._sink_path

    @property
    def _insert_statement(self) -> InsertInto:
        return self._insert


class CompiledPlan:
    """A planned job as JSON: `as_json_string()`, `write_to_file(path)`, `execute()`."""

    def __init__(self, env: TableEnvironment, graph: JobGraph) -> None:
        self._env = env
        self._graph = graph

    def as_json_string(self) -> str:
        return self._graph.to_json()

    def as_smile_bytes(self) -> bytes:
        from streamsql.unsupported import refuse

        refuse("CompiledPlan.as_smile_bytes", "Smile is Jackson's binary JSON; use as_json_string()")

    def write_to_file(self, file: str | os.PathLike[str], ignore_if_exists: bool = True) -> None:
        if os.path.exists(file) and not ignore_if_exists:
            raise FileExistsError(f"Cannot overwrite the plan file '{file}': it exists")
        with open(file, "w", encoding="utf-8") as f:
            f.write(self.as_json_string())

    def get_flink_version(self) -> str:
        return "2.3"

    def print_json_string(self) -> None:
        print(self.as_json_string())

    def explain(self, *extra_details: Any) -> str:
        return "\n".join(f"{n.id}: {n.label or n.operator}" for n in self._graph.nodes)

    def print_explain(self, *extra_details: Any) -> None:
        print(self.explain(*extra_details))

    def execute(self) -> TableResult:
        return self._env.submit_job_graph(self._graph, self._graph.name)


class PlanReference:
    """Where a compiled plan comes from: a file or a JSON string."""

    def __init__(self, j_plan_reference: Any = None, *, json_text: str = "") -> None:
        self._json = json_text

    @staticmethod
    def from_file(path: str | os.PathLike[str]) -> PlanReference:
        with open(path, encoding="utf-8") as f:
            return PlanReference(json_text=f.read())

    @staticmethod
    def from_json_string(json_string: str) -> PlanReference:
        return PlanReference(json_text=json_string)

    @staticmethod
    def from_smile_bytes(smile_bytes: bytes) -> PlanReference:
        from streamsql.unsupported import refuse

        refuse("PlanReference.from_smile_bytes", "Smile is Jackson's binary JSON; use from_json_string()")

    def load(self, env: TableEnvironment) -> CompiledPlan:
        from runtime.graph import JobGraph

        return CompiledPlan(env, JobGraph.from_json(self._json))


def _plan_file(path: str) -> str:
    """A plan file's local path: Flink takes a path or a `file:` URI."""
    if path.startswith("file://"):
        return path[len("file://") :]
    return path[len("file:") :] if path.startswith("file:") else path


def _load(env: TableEnvironment, path: str, sql: str) -> CompiledPlan:
    try:
        return PlanReference.from_file(_plan_file(path)).load(env)
    except OSError as e:
        raise SqlValidationError(
            f"Cannot read the plan file '{path}': {e.strerror or e}.", sql=sql, line=1, column=1
        ) from None
    except (ValueError, KeyError, TypeError) as e:  # not a JobGraph JSON document
        raise SqlValidationError(
            f"The plan file '{path}' holds no plan streamsql can run: {e}",
            sql=sql,
            line=1,
            column=1,
            hint="a plan file is written by COMPILE PLAN (or CompiledPlan.write_to_file) of streamsql; "
            "Flink's ExecNode JSON plans cannot run here",
        ) from None


def run_plan_statement(env: TableEnvironment, stmt: CompilePlan | ExecutePlan) -> TableResult:
    """COMPILE [AND EXECUTE] PLAN and EXECUTE PLAN, as Flink runs them: COMPILE PLAN writes
    the plan of its INSERT / STATEMENT SET unless the file exists (IF NOT EXISTS: nothing
    happens; otherwise Flink's error, or with `table.plan.force-recompile` it is written
    again); COMPILE AND EXECUTE PLAN runs the file's plan when the file exists, else
    compiles, writes and runs; EXECUTE PLAN runs the file's plan."""
    if isinstance(stmt, ExecutePlan):
        return _load(env, stmt.path, stmt.sql).execute()
    file = _plan_file(stmt.path)
    force = bool(PLAN_FORCE_RECOMPILE.get(env.get_config()))
    if os.path.exists(file) and not force:
        if not (stmt.if_not_exists or stmt.execute):
            raise UnsupportedSqlError(
                f"Cannot overwrite the plan file '{stmt.path}'. Either manually remove the file or, if you're "
                f"debugging your job, set the option '{PLAN_FORCE_RECOMPILE.key}' to true.",
                sql=stmt.sql,
                line=1,
                column=1,
            )
        plan = _load(env, stmt.path, stmt.sql)
    else:
        plan = CompiledPlan(env, env._planner().plan_inserts(list(stmt.inserts)))  # noqa: SLF001
        parent = os.path.dirname(os.path.abspath(file))
        os.makedirs(parent, exist_ok=True)
        plan.write_to_file(file)
    return plan.execute() if stmt.execute else TableResult.ok()
