"""One SELECT block: FROM → WHERE → GROUP BY / aggregates → HAVING → SELECT → DISTINCT.

Output names follow Flink: an alias, else a column's own name (or a niladic function's
written without parentheses, `LOCALTIME`), else `EXPR$<i>` (i = the item's position), made
unique as Calcite does (`k`, `k0`).
"""

from __future__ import annotations

from sqlglot import exp

from planner.binder import folding, ranking
from planner.binder.aggregates import AggregateScope, legacy_window
from planner.binder.expressions import ExprBinder, function_args, function_name, is_aggregate_call
from planner.binder.grouping_sets import GroupingSetsScope, grouping_items
from planner.binder.hints import StateTtlHint, check_join_hints
from planner.binder.over import bind_over, has_over
from planner.binder.qualify import bind_qualify, has_qualify
from planner.binder.query import BindContext, bind_from, query_form
from planner.binder.scope import Scope, error, uniquify
from planner.binder.subqueries import rewrite_subqueries
from planner.binder.types import plain
from planner.errors import SqlValidationError, UnsupportedSqlError
from planner.logical import (
    LogicalAggregate,
    LogicalFilter,
    LogicalNode,
    LogicalProject,
    LogicalWindowTableFunction,
)
from runtime.expr.ir import Expr, InputRef
from runtime.types import Field

_UNSUPPORTED_CLAUSES = {
    "order": "ORDER BY",
    "limit": "LIMIT",
    "offset": "OFFSET",
    "laterals": "LATERAL",
    "connect": "CONNECT BY",
}


def _items(sel: exp.Select, scope: Scope, ctx: BindContext) -> list[tuple[exp.Expression | InputRef, str | None]]:
    """Select items with `*` / `t.*` expanded: (node or column ref, explicit name)."""
    out: list[tuple[exp.Expression | InputRef, str | None]] = []
    for item in sel.expressions:
        if isinstance(item, exp.Star):
            for c in scope.star(None, item):
                out.append((InputRef(c.index, c.type), c.name))
            continue
        if isinstance(item, exp.Column) and isinstance(item.this, exp.Star):
            row_fields = _row_star(item, scope)
            if row_fields is not None:  # `r.*` / `t.r.*` of a ROW column: its fields
                out.extend(row_fields)
                continue
            for c in scope.star(item.table, item):
                out.append((InputRef(c.index, c.type), c.name))
            continue
        if isinstance(item, exp.Alias):
            out.append((item.this, item.alias))
        elif isinstance(item, exp.Column):
            out.append((item, item.name))
        elif isinstance(item, exp.Expression) and item.meta.get("bare_name"):  # `SELECT LOCALTIME`
            out.append((item, item.meta["bare_name"]))
        else:
            out.append((item, None))
    return out


def _row_star(item: exp.Column, scope: Scope) -> list[tuple[exp.Expression | InputRef, str | None]] | None:
    """The fields of a ROW column named by `r.*` or `t.r.*` (None when the qualifier is a
    table, as in a plain `t.*`)."""
    table, column = (item.db, item.table) if item.db else (None, item.table)
    if not column or (table is None and any(c.qualifier == column for c in scope.columns)):
        return None
    match = [c for c in scope.columns if c.name == column and (table is None or c.qualifier == table)]
    if len(match) != 1 or match[0].type.name != "ROW":
        return None
    return [
        (
            exp.Column(
                this=exp.to_identifier(f),
                table=exp.to_identifier(column),
                db=exp.to_identifier(table) if table else None,
            ),
            f,
        )
        for f in match[0].type.field_names
    ]


def _names(items: list[tuple[exp.Expression | InputRef, str | None]]) -> list[str]:
    return uniquify([name if name is not None else f"EXPR${i}" for i, (_, name) in enumerate(items)])


def _tvf_below(plan: LogicalNode) -> LogicalWindowTableFunction | None:
    while isinstance(plan, LogicalFilter):
        plan = plan.input
    return plan if isinstance(plan, LogicalWindowTableFunction) else None


@query_form(exp.Select)
def bind_select(ctx: BindContext, sel: exp.Select) -> LogicalNode:
    sql = ctx.sql

    if ranking.has_order_limit(sel):
        return ranking.bind_order_limit(ctx, sel, bind_select)
    if has_qualify(sel):
        return bind_qualify(ctx, sel, bind_select)
    if ranking.has_ranking_item(sel):
        return ranking.bind_ranking_select(ctx, sel, bind_select)
    for key, what in _UNSUPPORTED_CLAUSES.items():
        v = sel.args.get(key)
        if v:
            node = v[0] if isinstance(v, list) else v
            raise error(UnsupportedSqlError, f"{what} is not supported yet", node, sql)
    from_clause = sel.args.get("from_") or sel.args.get("from")
    plan, scope = bind_from(ctx, from_clause, sel.args.get("joins"))

    ttl_hint = StateTtlHint.parse(sel, sql or "")
    from_item, join_items = (from_clause.this if from_clause is not None else None), list(sel.args.get("joins") or [])
    check_join_hints(sel, sql or "", from_item, join_items)
    if ttl_hint is not None:
        plan = ttl_hint.apply_joins(plan, from_item, join_items)

    plan, scope, sel = rewrite_subqueries(ctx, sel, plan, scope)
    if sel.args.get("match") is not None:
        from planner.binder.match_recognize import bind_match_recognize

        plan, scope = bind_match_recognize(ctx, plan, scope, sel.args["match"])

    where = sel.args.get("where")
    if where is not None:
        cond = ExprBinder(scope, sql, clause="WHERE").bind(where.this)
        if cond.type.name not in ("BOOLEAN", "NULL"):
            raise error(SqlValidationError, "WHERE clause must be a condition", where.this, sql)
        plan = LogicalFilter(fields=plan.fields, input=plan, condition=cond)

    if has_over(sel):  # OVER windows: planner.binder.over (issue 3)
        sel, plan, scope = bind_over(ctx, sel, plan, scope)
    items = _items(sel, scope, ctx)
    names = _names(items)
    group = sel.args.get("group")
    having = sel.args.get("having")
    is_agg = (
        group is not None
        or having is not None
        or any(isinstance(n, exp.Expression) and is_aggregate_call(n) for n, _ in items)
    )
    if is_agg:
        plan, exprs = _bind_aggregate(ctx, plan, scope, items, names, group, having)
        if ttl_hint is not None:
            plan = ttl_hint.apply_aggregate(plan, from_item, join_items)
    else:
        binder = ExprBinder(scope, sql, clause="SELECT")
        exprs = folding.reducer_handoffs([n if isinstance(n, InputRef) else binder.bind(n) for n, _ in items])
    fields = tuple(Field(n, e.type) for n, e in zip(names, exprs, strict=True))
    plan = LogicalProject(fields=fields, input=plan, exprs=tuple(exprs))
    if sel.args.get("distinct") is not None:
        if sel.args["distinct"].args.get("on"):
            raise error(UnsupportedSqlError, "DISTINCT ON is not supported", sel.args["distinct"], sql)
        out = tuple(Field(f.name, plain(f.type)) for f in plan.fields)
        plan = LogicalAggregate(fields=out, input=plan, grouping=tuple(range(len(fields))), aggs=())
        if ttl_hint is not None:
            plan = ttl_hint.apply_aggregate(plan, from_item, join_items)
    if ttl_hint is not None:
        ttl_hint.check()
    return plan


def _bind_aggregate(
    ctx: BindContext,
    plan: LogicalNode,
    scope: Scope,
    items: list[tuple[exp.Expression | InputRef, str | None]],
    names: list[str],
    group: exp.Group | None,
    having: exp.Having | None,
) -> tuple[LogicalNode, list[Expr]]:
    sql = ctx.sql
    group_binder = ExprBinder(scope, sql, clause="GROUP BY")
    keys: list[Expr] = []
    key_names: list[str] = []
    window = None
    group_exprs, group_sets = grouping_items(group)
    item_keys: list[int] = []
    for g in group_exprs:
        if isinstance(g, exp.Func) and function_name(g) in ("tumble", "hop", "session"):
            if window is not None:
                raise error(SqlValidationError, "GROUP BY may contain only one group window", g, sql)
            if group_sets is not None:
                raise error(UnsupportedSqlError, "GROUPING SETS with a group window are not supported yet", g, sql)
            window = legacy_window(g, function_name(g), function_args(g), scope, sql, ctx.mode)
            continue
        if isinstance(g, exp.Literal) and not g.is_string:
            raise error(UnsupportedSqlError, "GROUP BY ordinal is not supported", g, sql)
        k = group_binder.bind(g)
        if k not in keys:
            keys.append(k)
            key_names.append(g.name if isinstance(g, exp.Column) else f"$f{len(keys) - 1}")
        item_keys.append(keys.index(k))
    # Key output types: time attributes are lost, except window_time of a window TVF
    # that the optimizer fuses into a WindowAggregate.
    tvf = _tvf_below(plan)
    n_in = len(tvf.input.fields) if tvf is not None else -1
    key_refs = {k.index for k in keys if isinstance(k, InputRef)}
    fused = tvf is not None and {n_in, n_in + 1} <= key_refs
    key_types = []
    for k in keys:
        keep = fused and isinstance(k, InputRef) and k.index == n_in + 2
        key_types.append(k.type if keep else plain(k.type))
    aggscope: AggregateScope
    if group_sets is None:
        aggscope = AggregateScope(scope, sql, keys, key_types, window)
    else:
        sets = [frozenset(item_keys[i] for i in s) for s in group_sets]
        aggscope = GroupingSetsScope(scope, sql, keys, key_types, sets, group)
    post = ExprBinder(Scope([], sql), sql, clause="SELECT", agg=aggscope)
    exprs: list[Expr] = []
    for n, _ in items:
        if isinstance(n, InputRef):
            # `*` under GROUP BY: each column must be a key.
            for i, k in enumerate(keys):
                if k == n:
                    exprs.append(InputRef(i, key_types[i]))
                    break
            else:
                raise error(SqlValidationError, "Expression '*' is not being grouped", group or None, sql)
        else:
            exprs.append(post.bind(n))
    having_expr = None
    if having is not None:
        having_expr = ExprBinder(Scope([], sql), sql, clause="HAVING", agg=aggscope).bind(having.this)
    out_names: dict[int, str] = {}
    for e, out_name in zip(exprs, names, strict=True):
        if isinstance(e, InputRef) and e.index >= 0 and e.index not in out_names:
            out_names[e.index] = out_name
    agg_plan = aggscope.build(plan, key_names, out_names)
    exprs = [aggscope.finalize(e) for e in exprs]
    if having_expr is not None:
        having_expr = aggscope.finalize(having_expr)
        agg_plan = LogicalFilter(fields=agg_plan.fields, input=agg_plan, condition=having_expr)
    return agg_plan, exprs
