"""Set operations: UNION [ALL], INTERSECT [ALL], EXCEPT [ALL].

sqlglot already parses with SQL's precedence (INTERSECT binds tighter than UNION and
EXCEPT, both left-associative), so this module only types the branches: the result
columns take the left branch's names and the least restrictive common type of each column
pair (Flink's type widening), and every branch is cast to those types. UNION ALL keeps
its skeleton binding (`_bind_union`, a flat `LogicalUnion`) and its time attributes
(`types.set_operation_type`: a column that is a rowtime in every input stays one, so
windows, OVER, MATCH_RECOGNIZE and interval joins run over the union); the
other forms become a `LogicalSetOp` (planner.rules.setops), planned as Flink does with a
counting GroupAggregate.
"""

from __future__ import annotations

from sqlglot import exp

from planner.binder import ranking
from planner.binder.query import BindContext, _cast_to, bind_query_node, query_form
from planner.binder.scope import error
from planner.binder.types import common_type, plain, set_operation_type
from planner.errors import SqlValidationError, UnsupportedSqlError
from planner.logical import LogicalNode, LogicalUnion
from runtime.types import Field

_KINDS: dict[type, str] = {exp.Union: "UNION", exp.Intersect: "INTERSECT", exp.Except: "EXCEPT"}


@query_form(exp.Union, exp.Intersect, exp.Except)
def bind_set_query(ctx: BindContext, node: exp.Expression) -> LogicalNode:
    """A set operation, with its ORDER BY / LIMIT if it has one (`ranking`)."""
    if ranking.has_order_limit(node):
        return ranking.bind_query_order_limit(ctx, node)
    return bind_set_operation(ctx, node)


def bind_set_operation(ctx: BindContext, node: exp.Expression) -> LogicalNode:
    """Bind `node` (an exp.Union / exp.Intersect / exp.Except)."""
    from planner.rules.setops import LogicalSetOp  # start-up

    kind = _KINDS[type(node)]
    distinct = node.args.get("distinct") is not False
    if kind == "UNION" and not distinct:
        return _bind_union(ctx, node)  # type: ignore[arg-type]
    for key in ("order", "limit", "offset"):
        if node.args.get(key) is not None:
            raise error(UnsupportedSqlError, f"{key.upper()} is not supported yet", node.args[key], ctx.sql)
    left = bind_query_node(ctx, node.this)
    right = bind_query_node(ctx, node.expression)
    what = f"{kind}{'' if distinct else ' ALL'}"
    if len(left.fields) != len(right.fields):
        raise error(SqlValidationError, f"Column count mismatch in {what}", node.expression, ctx.sql)
    fields = []
    for lf, rf in zip(left.fields, right.fields, strict=True):
        t = common_type([lf.type, rf.type])
        if t is None:
            raise error(
                SqlValidationError,
                f"Type mismatch in column of {what}: {lf.type} and {rf.type} have no common type",
                node,
                ctx.sql,
            )
        # Flink plans these as aggregations over the union: their keys are no time attributes.
        fields.append(Field(lf.name, plain(t)))
    out = tuple(fields)
    children = (_cast_to(left, out), _cast_to(right, out))
    return LogicalSetOp(fields=out, children=children, kind=kind, all=not distinct)


def _bind_union(ctx: BindContext, node: exp.Union) -> LogicalNode:
    if node.args.get("distinct") is not False:
        raise error(UnsupportedSqlError, "UNION (DISTINCT) is not supported yet; use UNION ALL", node, ctx.sql)
    for key in ("order", "limit", "offset"):
        if node.args.get(key) is not None:
            raise error(UnsupportedSqlError, f"{key.upper()} is not supported yet", node.args[key], ctx.sql)
    left = bind_query_node(ctx, node.this)
    right = bind_query_node(ctx, node.expression)
    if len(left.fields) != len(right.fields):
        raise error(SqlValidationError, "Column count mismatch in UNION ALL", node.expression, ctx.sql)
    types = []
    for lf, rf in zip(left.fields, right.fields, strict=True):
        t = set_operation_type([lf.type, rf.type])
        if t is None:
            raise error(
                SqlValidationError,
                f"Type mismatch in column of UNION ALL: {lf.type} and {rf.type} have no common type",
                node,
                ctx.sql,
            )
        types.append(t)
    fields = tuple(Field(lf.name, t) for lf, t in zip(left.fields, types, strict=True))
    children = tuple(_cast_to(c, fields, time_attrs=True) for c in (left, right))
    # Flatten nested UNION ALLs.
    flat: list[LogicalNode] = []
    for c in children:
        if isinstance(c, LogicalUnion):
            flat.extend(c.children)
        else:
            flat.append(c)
    return LogicalUnion(fields=fields, children=tuple(flat))
