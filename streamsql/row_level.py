"""DELETE and UPDATE (Flink's row-level modification), BATCH mode only.

Flink runs them on sinks that implement SupportsRowLevelDelete / SupportsRowLevelUpdate,
whose "remaining rows" / "all rows" modes rewrite the table with the rows that stay. That is
what streamsql does, on every sink that can be overwritten (the filesystem connector):

    DELETE FROM t WHERE c   =>  INSERT OVERWRITE t SELECT * FROM t WHERE (c) IS NOT TRUE
    UPDATE t SET x = e WHERE c
                            =>  INSERT OVERWRITE t
                                SELECT CASE WHEN (c) IS TRUE THEN e ELSE x END AS x, ... FROM t

The rows flow through the engine like any batch job (vectorized), and the job is answered
as an INSERT is (job id, or with `table.dml-sync` the completion message). In streaming
mode, and on sinks that cannot be overwritten, the statement fails with Flink's error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from planner.catalog_objects import CatalogTable, quoted
from planner.catalog_store import CatalogError
from planner.errors import SqlValidationError
from planner.statements import InsertInto
from planner.statements_dml import Delete, Update
from runtime.connectors.base import get_connector
from streamsql.result import TableResult

if TYPE_CHECKING:
    from streamsql.environment import TableEnvironment

_ABILITY = {
    "delete": "org.apache.flink.table.connector.sink.abilities.SupportsRowLevelDelete",
    "update": "org.apache.flink.table.connector.sink.abilities.SupportsRowLevelUpdate",
}


def run(env: TableEnvironment, stmt: Delete | Update) -> TableResult:
    what = "DELETE" if isinstance(stmt, Delete) else "UPDATE"
    table = env.catalog.lookup(stmt.table, None, stmt.sql)
    if not isinstance(table, CatalogTable):
        raise SqlValidationError(
            f"{what} on view {quoted(table.path)} is not supported", sql=stmt.sql, line=1, column=1
        )
    if env.is_streaming:
        raise CatalogError(
            f"{what} statement is not supported for streaming mode now.",
            "org.apache.flink.table.api.TableException",
            sql=stmt.sql,
            line=1,
            column=1,
        )
    if get_connector(table.connector).prepare_overwrite is None:
        op = what.lower()
        raise CatalogError(
            f"Can't perform {op} operation of the table {'.'.join(table.path)} because the corresponding dynamic "
            f"table sink has not yet implemented {_ABILITY[op]}.",
            "java.lang.UnsupportedOperationException",
            sql=stmt.sql,
            line=1,
            column=1,
        )
    source = exp.Table(
        this=exp.to_identifier(table.path[2], quoted=True),
        db=exp.to_identifier(table.path[1], quoted=True),
        catalog=exp.to_identifier(table.path[0], quoted=True),
    )
    persisted = [f.name for f in table.persisted_fields]
    if isinstance(stmt, Delete):
        query = exp.select(*[exp.column(n, quoted=True) for n in persisted]).from_(source)
        if stmt.where is not None:
            query = query.where(exp.not_(_is_true(stmt.where)))
        else:
            query = query.where(exp.false())
    else:
        assigned = dict(stmt.assignments)
        unknown = [c for c in assigned if c not in persisted]
        if unknown:
            raise SqlValidationError(f"Unknown target column '{unknown[0]}'", sql=stmt.sql, line=1, column=1)
        columns: list[exp.Expression] = []  # the table's values after the update
        for n in persisted:
            col = exp.column(n, quoted=True)
            if n not in assigned:
                columns.append(col)
                continue
            value = assigned[n].copy()
            if stmt.where is not None:
                value = exp.Case(ifs=[exp.If(this=_is_true(stmt.where), true=value)], default=col)
            columns.append(exp.Alias(this=value, alias=exp.to_identifier(n, quoted=True)))
        query = exp.select(*columns).from_(source)
    insert = InsertInto(table=table.path, query=query, columns=tuple(persisted), overwrite=True, sql=stmt.sql)
    return env._run_inserts([insert])  # noqa: SLF001 - the session's job submission


def _is_true(condition: exp.Expression) -> exp.Expression:
    return exp.Is(this=exp.Paren(this=condition.copy()), expression=exp.true())
