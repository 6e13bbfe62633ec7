"""Binding of `FOR SYSTEM_TIME AS OF <left time attribute>` on a join's right table.

The right relation is wrapped in a `LogicalSnapshot` (Calcite's name) carrying the period
expression and the primary key of the versioned table (when the table declares one); the
physical rule in `planner.rules.time_joins` turns the enclosing `LogicalJoin` into an
event-time `TemporalJoin` or a processing-time `LookupJoin`, or refuses it as Flink does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from planner.binder.expressions import ExprBinder
from planner.binder.scope import Scope, error, node_position
from planner.catalog_objects import CatalogTable
from planner.errors import SqlValidationError
from planner.logical import LogicalNode
from runtime.expr.ir import InputRef

if TYPE_CHECKING:
    from planner.binder.query import BindContext


def _primary_key(ctx: BindContext, table: exp.Table) -> tuple[int, ...] | None:
    """Indices (into the table's columns) of the declared PRIMARY KEY, if any."""

    parts = tuple(p for p in (table.catalog, table.db, table.name) if p)
    if len(parts) == 1 and ctx.cte(parts[0]) is not None:
        return None
    obj = ctx.catalog.get(parts)
    if not isinstance(obj, CatalogTable) or not obj.primary_key:
        return None
    names = [c.name for c in obj.columns]
    return tuple(names.index(k) for k in obj.primary_key)


def bind_snapshot(
    ctx: BindContext, table: exp.Table, version: exp.Expression, right: LogicalNode, scope: Scope, left_width: int
) -> LogicalNode:
    """`right` as of the period in `version` (bound over the join's combined scope; it may
    only reference a time attribute of the left side)."""
    period = ExprBinder(scope, ctx.sql, clause="FOR SYSTEM_TIME AS OF").bind(version.expression)

    if not isinstance(period, InputRef) or period.index >= left_width or period.type.time_attr is None:
        raise error(
            SqlValidationError,
            "Temporal table join currently only supports 'FOR SYSTEM_TIME AS OF' left table's time attribute field",
            version,
            ctx.sql,
        )
    pk = _primary_key(ctx, table)
    from planner.rules.time_joins import LogicalSnapshot  # start-up

    return LogicalSnapshot(
        fields=right.fields,
        input=right,
        period=period,
        primary_key=pk,
        table_name=table.name,
        line_col=_position(version),
    )


def _position(node: exp.Expression) -> tuple[int | None, int | None]:
    return node_position(node)
