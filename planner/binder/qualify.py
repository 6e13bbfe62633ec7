"""Binding of QUALIFY: the filter on window (OVER) results of a SELECT block.

Flink 2.x parses Calcite's QUALIFY (its Top-N page writes Top-N and deduplication as
`SELECT ..., ROW_NUMBER() OVER (...) AS rownum FROM t QUALIFY rownum <= N`). It means the
same as the nested form `SELECT <items> FROM (SELECT <items>, ROW_NUMBER() OVER (...) ...)
WHERE <condition>`, and is bound as that:

- the SELECT is bound without QUALIFY, with hidden items appended for every OVER call of
  the condition and for every column the condition reads that is not a select item's
  name (so `QUALIFY ROW_NUMBER() OVER (...) = 1` works without the number in the output);
- the condition, its OVER calls and hidden columns replaced by references to those
  items, is bound over the SELECT's output columns (select aliases are visible, as in
  Calcite) and becomes a `LogicalFilter`;
- a projection drops the hidden items.

A ranking number filtered this way is then a Top-N or deduplication exactly like the
nested form: the optimizer rule `planner.rules.ranking.absorb_rank_filter` folds the
filter into the rank's range. ORDER BY / LIMIT apply after QUALIFY (`bind_order_limit`
runs first and binds the SELECT with its QUALIFY).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from planner.binder.expressions import ExprBinder
from planner.binder.query import BindContext
from planner.binder.scope import Scope, error
from planner.errors import SqlValidationError
from planner.logical import LogicalFilter, LogicalNode, LogicalProject
from runtime.expr.ir import InputRef

_HIDDEN = "$qualify$"

# planner.binder.select.bind_select, passed in by its caller (which is that function).
SelectBinder = Callable[[BindContext, exp.Select], LogicalNode]


def has_qualify(sel: exp.Select) -> bool:
    return sel.args.get("qualify") is not None


def _select_names(sel: exp.Select) -> set[str]:
    """Names the select items give their columns explicitly (aliases and plain columns)."""
    out: set[str] = set()
    for e in sel.expressions:
        if isinstance(e, exp.Alias):
            out.add(e.alias)
        elif isinstance(e, exp.Column) and not isinstance(e.this, exp.Star):
            out.add(e.name)
    return out


def bind_qualify(ctx: BindContext, sel: exp.Select, bind_select: SelectBinder) -> LogicalNode:
    """SELECT ... QUALIFY <condition>: the SELECT with hidden items, a filter, a projection."""
    qualify = sel.args["qualify"]
    cond = qualify.this.copy()
    if not any(isinstance(n, exp.Window) for n in cond.walk()) and not _refers_to_over_item(sel, cond):
        raise error(
            SqlValidationError,
            f"QUALIFY expression '{qualify.this.sql()}' must contain a window function",
            qualify.this,
            ctx.sql,
        )
    inner = sel.copy()
    inner.set("qualify", None)
    items = list(inner.expressions)
    names = _select_names(sel)
    hidden: list[exp.Expression] = []

    def hide(node: exp.Expression) -> exp.Expression:
        name = f"{_HIDDEN}{len(hidden)}"
        hidden.append(exp.Alias(this=node.copy(), alias=exp.to_identifier(name, quoted=True)))
        return exp.column(name, quoted=True)

    def replace(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Window):
            return hide(node)
        if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
            if not node.table and node.name in names:
                return node  # a select item's name: an output column
            return hide(node)
        return node

    cond = cond.transform(replace, copy=False)
    inner.set("expressions", items + hidden)
    plan = bind_select(ctx, inner)
    width = len(plan.fields) - len(hidden)
    scope = Scope.of(plan.fields, None, ctx.sql)
    condition = ExprBinder(scope, ctx.sql, clause="QUALIFY").bind(cond)
    if condition.type.name not in ("BOOLEAN", "NULL"):
        raise error(SqlValidationError, "QUALIFY clause must be a condition", qualify.this, ctx.sql)
    node: LogicalNode = LogicalFilter(fields=plan.fields, input=plan, condition=condition)
    if hidden:
        exprs = tuple(InputRef(i, plan.fields[i].type) for i in range(width))
        node = LogicalProject(fields=plan.fields[:width], input=node, exprs=exprs)
    return node


def _refers_to_over_item(sel: exp.Select, cond: exp.Expression) -> bool:
    """Whether `cond` names a select item that is an OVER call (`... AS rn ... QUALIFY rn = 1`)."""
    over_names = {
        e.alias
        for e in sel.expressions
        if isinstance(e, exp.Alias) and any(isinstance(n, exp.Window) for n in e.walk())
    }
    return any(isinstance(n, exp.Column) and not n.table and n.name in over_names for n in cond.walk())
