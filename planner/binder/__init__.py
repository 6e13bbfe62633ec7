"""The binder: sqlglot query ASTs → logical plans with typed IR expressions.

Modules by concern: `scope` (names), `expressions` (scalar SQL → IR), `aggregates`
(GROUP BY, legacy windows), `windows` (window TVFs), `query` (WITH, UNION ALL, VALUES,
FROM), `select` (one SELECT block), `types` (literal and common types).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from planner.binder.query import BindContext, bind_query_node
from planner.binder.scope import error
from planner.binder.types import implicitly_castable, plain
from planner.errors import SqlValidationError, UnsupportedSqlError
from planner.logical import LogicalNode, LogicalProject, LogicalSink
from runtime.expr.ir import Call, Expr, InputRef, Literal
from runtime.types import Field

if TYPE_CHECKING:
    from planner.catalog import Catalog
    from planner.statements import InsertInto


def bind_query(query: exp.Expression, catalog: Catalog, sql: str | None = None, mode: str = "STREAMING") -> LogicalNode:
    """The logical plan of a query. `mode` is "STREAMING" or "BATCH"."""
    from planner.functions_catalog import functions_of, using_functions  # user-defined functions

    with using_functions(functions_of(catalog)):
        return bind_query_node(BindContext(catalog, sql, mode.upper()), query)


def bind_insert(stmt: InsertInto, catalog: Catalog, mode: str = "STREAMING") -> LogicalSink:
    """INSERT INTO: the query, cast to the sink's column types, into a LogicalSink."""
    from planner.catalog import CatalogTable, CatalogView

    table = catalog.lookup(stmt.table, None, stmt.sql)
    shown = ".".join(table.path)
    if isinstance(table, CatalogView):
        raise SqlValidationError(f"INSERT into view '{shown}' is not supported", sql=stmt.sql, line=1, column=1)
    assert isinstance(table, CatalogTable)
    if stmt.overwrite:
        raise UnsupportedSqlError("INSERT OVERWRITE is not supported yet", sql=stmt.sql, line=1, column=1)
    plan = bind_query(stmt.query, catalog, stmt.sql, mode)
    sink_fields = table.persisted_fields
    q_fields = plan.fields
    exprs: list[Expr | None] = [None] * len(sink_fields)
    if stmt.columns:
        names = [f.name for f in sink_fields]
        if len(stmt.columns) != len(q_fields):
            raise _mismatch(shown, q_fields, sink_fields, stmt, "Different number of columns.")
        for qi, col in enumerate(stmt.columns):
            if col not in names:
                raise SqlValidationError(f"Unknown target column '{col}'", sql=stmt.sql, line=1, column=1)
            exprs[names.index(col)] = InputRef(qi, q_fields[qi].type)
        for i, f in enumerate(sink_fields):
            if exprs[i] is None:
                if not f.type.nullable:
                    raise SqlValidationError(
                        f"Column '{f.name}' has no default value and does not allow NULLs",
                        sql=stmt.sql,
                        line=1,
                        column=1,
                    )
                exprs[i] = Literal(None, f.type)
    else:
        if len(q_fields) != len(sink_fields):
            raise _mismatch(shown, q_fields, sink_fields, stmt, "Different number of columns.")
        exprs = [InputRef(i, f.type) for i, f in enumerate(q_fields)]
    out: list[Expr] = []
    for e, f in zip(exprs, sink_fields, strict=True):
        assert e is not None
        if isinstance(e, Literal):
            out.append(e)
            continue
        if not implicitly_castable(e.type, f.type):
            raise _mismatch(
                shown,
                q_fields,
                sink_fields,
                stmt,
                f"Incompatible types for sink column '{f.name}' at position {sink_fields.index(f)}.",
            )
        same = plain(e.type).with_nullable(True) == plain(f.type).with_nullable(True)
        out.append(e if same else Call("cast", (e,), f.type.with_nullable(e.type.nullable or f.type.nullable)))
    identity = all(isinstance(e, InputRef) and e.index == i for i, e in enumerate(out)) and len(out) == len(q_fields)
    if not identity or [f.name for f in q_fields] != [f.name for f in sink_fields]:
        plan = LogicalProject(
            fields=tuple(Field(f.name, e.type) for f, e in zip(sink_fields, out, strict=True)),
            input=plan,
            exprs=tuple(out),
        )
    return LogicalSink(fields=(), input=plan, table=table.table_info(), schema=sink_fields)


def _mismatch(
    shown: str, q: tuple[Field, ...], s: tuple[Field, ...], stmt: InsertInto, cause: str
) -> SqlValidationError:
    qs = ", ".join(f"{f.name}: {plain(f.type)}" for f in q)
    ss = ", ".join(f"{f.name}: {f.type}" for f in s)
    return SqlValidationError(
        f"Column types of query result and sink for '{shown}' do not match.\nCause: {cause}\n\n"
        f"Query schema: [{qs}]\nSink schema:  [{ss}]",
        sql=stmt.sql,
        line=1,
        column=1,
    )


__all__ = ["BindContext", "bind_insert", "bind_query", "error"]
