"""StatementSet: several INSERTs planned and run as one job (PyFlink's StatementSet), CTAS /
RTAS among them as Flink's `addInsertSql` takes any modifying statement."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from planner.errors import UnsupportedSqlError
from planner.statements import CreateTable, Explain, InsertInto
from planner.statements import StatementSet as SetStatement
from streamsql.result import TableResult

if TYPE_CHECKING:
    from streamsql.descriptors import TableDescriptor
    from streamsql.environment import TableEnvironment
    from streamsql.pipeline import CompiledPlan, TablePipeline
    from streamsql.table import Table


class StatementSet:
    """Collects INSERTs (SQL text or Tables) and CTAS / RTAS statements; `execute()` creates
    the CTAS tables (as Flink does, first and not atomically) and runs every INSERT
    together as one job."""

    def __init__(self, env: TableEnvironment) -> None:
        self._env = env
        self._inserts: list[InsertInto | CreateTable] = []

    def add_insert_sql(self, stmt: str) -> StatementSet:
        statements = self._env.parse(stmt)
        parsed = statements[0] if len(statements) == 1 else None
        if isinstance(parsed, InsertInto) or (isinstance(parsed, CreateTable) and parsed.as_query is not None):
            self._inserts.append(parsed)
            return self
        raise UnsupportedSqlError(
            "add_insert_sql() takes exactly one INSERT or CREATE / REPLACE TABLE ... AS statement",
            sql=stmt,
            line=1,
            column=1,
        )

    def add_insert(
        self, target_path_or_descriptor: str | TableDescriptor, table: Table, overwrite: bool = False
    ) -> StatementSet:
        self._inserts.append(table.insert_into(target_path_or_descriptor, overwrite)._insert_statement)
        return self

    def add(self, table_pipeline: TablePipeline) -> StatementSet:
        """Add a pipeline made by `table.insert_into(...)`."""
        self._inserts.append(table_pipeline._insert_statement)
        return self

    def _plain_inserts(self, what: str) -> tuple[InsertInto, ...]:
        """The INSERTs, for planning without running: a CTAS's table does not exist before
        `execute()` creates it."""
        inserts = tuple(i for i in self._inserts if isinstance(i, InsertInto))
        if len(inserts) != len(self._inserts):
            ctas = next(i for i in self._inserts if isinstance(i, CreateTable))
            raise UnsupportedSqlError(
                f"StatementSet.{what}() of a set holding CREATE / REPLACE TABLE ... AS is not supported: its "
                "table is only created by execute()",
                sql=ctas.sql,
                line=1,
                column=1,
            )
        return inserts

    def explain(self, *extra_details: Any) -> str:
        details = tuple(str(getattr(d, "name", d)).upper() for d in extra_details)
        stmt = Explain(SetStatement(self._plain_inserts("explain")), details)
        return str(self._env._planner().explain(stmt))

    def print_explain(self, *extra_details: Any) -> None:
        print(self.explain(*extra_details))

    def compile_plan(self) -> CompiledPlan:
        from streamsql.pipeline import CompiledPlan

        return CompiledPlan(self._env, self._env._planner().plan_inserts(list(self._plain_inserts("compile_plan"))))

    def attach_as_datastream(self) -> None:
        from streamsql.unsupported import DATASTREAM, refuse

        refuse("StatementSet.attach_as_datastream", DATASTREAM)

    def execute(self) -> TableResult:
        if not self._inserts:
            raise UnsupportedSqlError("No statement to execute: add INSERTs with add_insert_sql / add_insert")
        items, self._inserts = self._inserts, []
        inserts = self._env.statement_set_inserts(items)
        return self._env._run_inserts(inserts) if inserts else TableResult.ok()
