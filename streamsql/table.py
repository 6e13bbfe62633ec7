"""Table: an immutable query, run with `execute()` (the Table API grows here in issue 7)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from planner.statements import Explain, Query

if TYPE_CHECKING:
    import pyarrow as pa

    from streamsql.environment import TableEnvironment
    from streamsql.result import TableResult


class Table:
    def __init__(self, env: TableEnvironment, query: Query) -> None:
        self._env = env
        self._query = query

    def execute(self) -> TableResult:
        return self._env.execute_statement(self._query)

    def explain(self, *details: str) -> str:
        stmt = Explain(self._query, tuple(d.upper() for d in details), sql=self._query.sql)
        return self._env._with_source(stmt, lambda: self._env._planner().explain(stmt))

    def get_schema(self) -> Any:
        planned = self._env._with_source(self._query, lambda: self._env._planner().plan_query(self._query))
        return tuple(planned.schema)

    def print_schema(self) -> None:
        print("(")
        fields = self.get_schema()
        for i, f in enumerate(fields):
            print(f"  `{f.name}` {f.type}{',' if i < len(fields) - 1 else ''}")
        print(")")

    def to_pandas(self) -> Any:
        return self.execute().to_pandas()

    def to_arrow(self) -> pa.Table:
        return self.execute().to_arrow()
