"""Set operations: UNION [ALL], INTERSECT [ALL], EXCEPT [ALL].

sqlglot already parses with SQL's precedence (INTERSECT binds tighter than UNION and
EXCEPT, both left-associative), so this module only types the branches: the result
columns take the left branch's names and the least restrictive common type of each column
pair (Flink's type widening), and every branch is cast to those types. UNION ALL keeps
its skeleton binding (`planner.binder.query._bind_union`, a flat `LogicalUnion`); the
other forms become a `LogicalSetOp` (planner.rules.setops), planned as Flink does with a
counting GroupAggregate.
"""

from __future__ import annotations

from sqlglot import exp

from planner.binder.query import BindContext, _bind_union, _cast_to, bind_query_node
from planner.binder.scope import error
from planner.binder.types import common_type, plain
from planner.errors import SqlValidationError, UnsupportedSqlError
from planner.logical import LogicalNode
from planner.rules.setops import LogicalSetOp
from runtime.types import Field

_KINDS: dict[type, str] = {exp.Union: "UNION", exp.Intersect: "INTERSECT", exp.Except: "EXCEPT"}


def bind_set_operation(ctx: BindContext, node: exp.Expression) -> LogicalNode:
    """Bind `node` (an exp.Union / exp.Intersect / exp.Except)."""
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
        # The result of a set operation is computed, so no time attribute survives it.
        fields.append(Field(lf.name, plain(t)))
    out = tuple(fields)
    children = (_cast_to(left, out), _cast_to(right, out))
    return LogicalSetOp(fields=out, children=children, kind=kind, all=not distinct)
