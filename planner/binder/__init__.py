"""The binder: sqlglot query ASTs → logical plans with typed IR expressions.

Modules by concern: `scope` (names), `expressions` (scalar SQL → IR), `aggregates`
(GROUP BY, legacy windows), `windows` (window TVFs), `query` (WITH, UNION ALL, VALUES,
FROM, and the dispatch to the forms below), `select` (one SELECT block), `setops` (UNION,
INTERSECT, EXCEPT), `windows` (window TVFs), `lateral` (UNNEST, LATERAL TABLE), `types`
(literal and common types). The modules owning a query form or FROM item register it with
`query` when imported; this package imports them all, so binding always sees every form.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from sqlglot import exp

from planner.binder import lateral, select, setops, windows  # noqa: F401 - they register their forms
from planner.binder.expressions import BINDING_MODE
from planner.binder.query import BindContext, bind_query_node
from planner.binder.scope import error
from planner.binder.types import implicitly_castable, plain
from planner.catalog_objects import CatalogTable, CatalogView
from planner.errors import SqlValidationError, UnsupportedSqlError
from planner.functions_catalog import functions_of, using_functions
from planner.logical import LogicalFilter, LogicalNode, LogicalProject, LogicalSink
from planner.table_options import check_table_options
from runtime.connectors.base import get_connector
from runtime.errors import ConnectorError
from runtime.expr.ir import Call, Expr, InputRef, Literal
from runtime.sink_constraints import not_null_action, type_length_action
from runtime.types import BOOLEAN, STRING, Field

if TYPE_CHECKING:
    from planner.catalog import Catalog
    from planner.statements import InsertInto


def bind_query(query: exp.Expression, catalog: Catalog, sql: str | None = None, mode: str = "STREAMING") -> LogicalNode:
    """The logical plan of a query. `mode` is "STREAMING" or "BATCH"."""
    token = BINDING_MODE.set(mode.upper())
    try:
        with using_functions(functions_of(catalog)):
            return bind_query_node(BindContext(catalog, sql, mode.upper()), query)
    finally:
        BINDING_MODE.reset(token)


def bind_insert(
    stmt: InsertInto, catalog: Catalog, mode: str = "STREAMING", config: Mapping[str, str] | None = None
) -> LogicalSink:
    """INSERT INTO: the query, cast to the sink's column types, into a LogicalSink.

    The values are converted as Flink's sink does (runtime.sink_constraints): implicit casts
    only; CHAR/VARCHAR/BINARY/VARBINARY lengths kept (type-length enforcer IGNORE) or cut
    and padded (TRIM_PAD); a nullable value into a NOT NULL column fails the job on a NULL
    (not-null enforcer ERROR) or drops the row (DROP)."""
    table = catalog.lookup(stmt.table, None, stmt.sql)
    shown = ".".join(table.path)
    if isinstance(table, CatalogView):
        raise SqlValidationError(f"INSERT into view '{shown}' is not supported", sql=stmt.sql, line=1, column=1)
    assert isinstance(table, CatalogTable)
    check_unbucketed_sink(table, stmt.sql)
    if stmt.sink_options:
        table = replace(table, options={**table.options, **stmt.sink_options})
    if stmt.overwrite:
        check_overwrite(table, mode, stmt.sql)
    sink_fields = table.persisted_fields
    if stmt.partition:
        stmt = _with_static_partition(stmt, table.partitioned_by, [f.name for f in sink_fields])
    plan = bind_query(stmt.query, catalog, stmt.sql, mode)
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
    length_action = type_length_action(config)
    not_null = not_null_action(config)
    drop: list[Expr] = []  # DROP: IS NOT NULL conditions of the NOT NULL columns
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
        out.append(_sink_value(e, f, length_action, not_null, drop))
    if drop:
        cond: Expr = drop[0] if len(drop) == 1 else Call("and", tuple(drop), BOOLEAN(nullable=False))
        plan = LogicalFilter(fields=plan.fields, input=plan, condition=cond)
    identity = all(isinstance(e, InputRef) and e.index == i for i, e in enumerate(out)) and len(out) == len(q_fields)
    if not identity or [f.name for f in q_fields] != [f.name for f in sink_fields]:
        plan = LogicalProject(
            fields=tuple(Field(f.name, e.type) for f, e in zip(sink_fields, out, strict=True)),
            input=plan,
            exprs=tuple(out),
        )
    check_table_options(table, sink=True)
    return LogicalSink(fields=(), input=plan, table=table.table_info(), schema=sink_fields)


def check_unbucketed_sink(table: CatalogTable, sql: str | None) -> None:
    """A table with DISTRIBUTED BY / INTO cannot be written: no streamsql connector writes
    buckets (Flink's SupportsBucketing), so this is Flink's error for such a sink."""
    if table.distribution is None:
        return
    shown = ".".join(table.path)
    raise UnsupportedSqlError(
        f"Table '{shown}' is distributed into buckets, but the underlying DynamicTableSink doesn't "
        "implement the SupportsBucketing interface.",
        sql=sql,
        line=1,
        column=1,
        hint="streamsql's connectors write no buckets: write to a table without DISTRIBUTED BY / INTO "
        "(ALTER TABLE ... DROP DISTRIBUTION removes it); reading a distributed table works.",
    )


def check_overwrite(table: CatalogTable, mode: str, sql: str | None) -> None:
    """INSERT OVERWRITE needs a sink that can be overwritten (Flink's SupportsOverwrite:
    here the filesystem connector), in BATCH mode (Flink's filesystem sink refuses it in
    streaming mode)."""

    try:
        factory = get_connector(table.connector)
    except ConnectorError:
        return  # an unknown connector is reported where the sink is built
    if factory.prepare_overwrite is None:
        raise SqlValidationError(
            "INSERT OVERWRITE requires that the underlying DynamicTableSink of table "
            f"'{'.'.join(table.path)}' implements the SupportsOverwrite interface.",
            sql=sql,
            line=1,
            column=1,
        )
    if mode.upper() != "BATCH":
        raise UnsupportedSqlError(
            "Streaming mode not support overwrite.",
            sql=sql,
            line=1,
            column=1,
            flink_class="java.lang.IllegalStateException",
        )


_LENGTH_TYPES = ("CHAR", "VARCHAR", "BINARY", "VARBINARY")


def _sink_value(e: Expr, f: Field, length_action: str, not_null: str, drop: list[Expr]) -> Expr:
    """The query value `e` converted for sink column `f` (see `bind_insert`)."""
    src, dst = plain(e.type), f.type
    keep_length = (
        length_action == "IGNORE"
        and src.name in _LENGTH_TYPES
        and dst.name in _LENGTH_TYPES
        and (src.name in ("CHAR", "VARCHAR")) == (dst.name in ("CHAR", "VARCHAR"))
    )  # same family, another length: written as is (Flink's default IGNORE)
    if src.with_nullable(True) != plain(dst).with_nullable(True) and not keep_length:
        e = Call("cast", (e,), dst.with_nullable(src.nullable or dst.nullable))
    if not dst.nullable and e.type.nullable:
        if not_null == "DROP":
            drop.append(Call("is_not_null", (e,), BOOLEAN(nullable=False)))
        else:
            e = Call("enforce_not_null", (e, Literal(f.name, STRING(nullable=False))), e.type.not_null())
    return e


def _with_static_partition(stmt: InsertInto, partition_keys: tuple[str, ...], names: list[str]) -> InsertInto:
    """INSERT ... PARTITION (k = v): the query gets the static values as trailing columns
    and the statement an explicit column list ending with the partition keys."""
    import dataclasses

    static = dict(stmt.partition)
    for key in static:
        if key not in partition_keys:
            raise SqlValidationError(
                f"Static partition column '{key}' is not a partition key of the table "
                f"(PARTITIONED BY ({', '.join(partition_keys)}))",
                sql=stmt.sql,
                line=1,
                column=1,
            )
    target = list(stmt.columns) if stmt.columns else [n for n in names if n not in static]
    query = exp.select(exp.Star(), *(exp.alias_(v, k, quoted=True) for k, v in static.items())).from_(
        exp.Subquery(this=stmt.query, alias=exp.TableAlias(this=exp.to_identifier("__static_partition")))
    )
    return dataclasses.replace(stmt, query=query, columns=(*target, *static), partition=())


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
