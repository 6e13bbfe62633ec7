"""StatementSet: several INSERTs planned and run as one job (PyFlink's StatementSet)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from planner.errors import UnsupportedSqlError
from planner.statements import Explain, InsertInto
from planner.statements import StatementSet as SetStatement

if TYPE_CHECKING:
    from streamsql.descriptors import TableDescriptor
    from streamsql.environment import TableEnvironment
    from streamsql.pipeline import CompiledPlan, TablePipeline
    from streamsql.result import TableResult
    from streamsql.table import Table


class StatementSet:
    """Collects INSERTs (SQL text or Tables); `execute()` runs them together."""

    def __init__(self, env: TableEnvironment) -> None:
        self._env = env
        self._inserts: list[InsertInto] = []

    def add_insert_sql(self, stmt: str) -> StatementSet:
        statements = self._env.parse(stmt)
        if len(statements) != 1 or not isinstance(statements[0], InsertInto):
            raise UnsupportedSqlError("add_insert_sql() takes exactly one INSERT statement", sql=stmt, line=1, column=1)
        self._inserts.append(statements[0])
        return self

    def add_insert(
        self, target_path_or_descriptor: str | TableDescriptor, table: Table, overwrite: bool = False
    ) -> StatementSet:
        self._inserts.append(table.insert_into(target_path_or_descriptor, overwrite)._insert_statement)
        return self

    def add(self, table_pipeline: TablePipeline) -> StatementSet:
        """Add a pipeline made by `table.insert_into(...)`."""
        self._inserts.append(table_pipeline._insert_statement)
        return self

    def explain(self, *extra_details: Any) -> str:
        details = tuple(str(getattr(d, "name", d)).upper() for d in extra_details)
        stmt = Explain(SetStatement(tuple(self._inserts)), details)
        return str(self._env._planner().explain(stmt))

    def print_explain(self, *extra_details: Any) -> None:
        print(self.explain(*extra_details))

    def compile_plan(self) -> CompiledPlan:
        from streamsql.pipeline import CompiledPlan

        return CompiledPlan(self._env, self._env._planner().plan_inserts(self._inserts))

    def attach_as_datastream(self) -> None:
        from streamsql.unsupported import DATASTREAM, refuse

        refuse("StatementSet.attach_as_datastream", DATASTREAM)

    def execute(self) -> TableResult:
        if not self._inserts:
            raise UnsupportedSqlError("No statement to execute: add INSERTs with add_insert_sql / add_insert")
        inserts, self._inserts = self._inserts, []
        return self._env._run_inserts(inserts)
