"""Binding of ranking functions and ORDER BY / OFFSET / FETCH (LIMIT).

Two entry points, both called first thing by `bind_select`:

- `bind_order_limit`: a SELECT with ORDER BY / LIMIT / OFFSET / FETCH is bound without
  those clauses, then a `LogicalSort` goes on top. ORDER BY items resolve to output
  columns (by ordinal, by output name, or by an equal select expression); anything else
  is added as a hidden select item and projected away after the sort (as Calcite does).
- `bind_ranking_select`: a SELECT projecting `ROW_NUMBER()/RANK()/DENSE_RANK() OVER
  (PARTITION BY .. ORDER BY ..)` is bound with that item replaced by a placeholder and
  the partition/order expressions appended as hidden items; a `LogicalRank` (unbounded)
  then computes the number and a projection puts it where the item was. The outer
  `WHERE rn <= N` of a subquery, CTE or view stays an ordinary filter; the optimizer rule
  `planner.rules.ranking.absorb_rank_filter` folds it into the rank's range.

Other OVER calls are left to the OVER binder: only the ranking item is taken out here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from sqlglot import exp

from planner.binder.query import BindContext, bind_query_node
from planner.binder.scope import error
from planner.errors import SqlValidationError, UnsupportedSqlError
from planner.logical import LogicalNode, LogicalProject
from runtime.expr.ir import InputRef
from runtime.types import Field

_RANKING = {exp.RowNumber: "ROW_NUMBER", exp.Rank: "RANK", exp.DenseRank: "DENSE_RANK"}
_HIDDEN = "$rank$"

# planner.binder.select.bind_select, passed in by its caller (which is that function).
SelectBinder = Callable[[BindContext, exp.Select], LogicalNode]


def ranking_type(node: exp.Expression) -> str | None:
    """ROW_NUMBER / RANK / DENSE_RANK when `node` is that function with OVER (...)."""
    if isinstance(node, exp.Alias):
        node = node.this
    if not isinstance(node, exp.Window) or node.args.get("spec") is not None or node.args.get("alias") is not None:
        return None  # frames and named windows (`OVER w`) are the OVER binder's
    for cls, name in _RANKING.items():
        if isinstance(node.this, cls):
            return name
    return None


def has_ranking_item(sel: exp.Select) -> bool:
    return any(ranking_type(e) is not None for e in sel.expressions)


def has_order_limit(sel: exp.Expression) -> bool:
    return any(sel.args.get(k) is not None for k in ("order", "limit", "offset"))


# ---------------------------------------------------------------------- ranking
def bind_ranking_select(ctx: BindContext, sel: exp.Select, bind_select: SelectBinder) -> LogicalNode:
    """A SELECT with a ranking function item: inner select, LogicalRank, projection.
    `bind_select` binds the inner SELECT (`planner.binder.select`, which calls this)."""
    from planner.rules.ranking import LogicalRank, SortKey, rank_field  # start-up

    pos = next(i for i, e in enumerate(sel.expressions) if ranking_type(e) is not None)
    item = sel.expressions[pos]
    rank_type = ranking_type(item)
    assert rank_type is not None
    window: exp.Window = item.this if isinstance(item, exp.Alias) else item
    if sel.args.get("distinct") is not None:
        raise error(UnsupportedSqlError, "SELECT DISTINCT with a ranking function is not supported", sel, ctx.sql)
    order = window.args.get("order")
    if order is None or not order.expressions:
        raise error(
            SqlValidationError,
            f"Function '{rank_type}()' requires an ORDER BY clause in its window specification",
            window,
            ctx.sql,
        )
    inner = sel.copy()
    # Several ranking items bind recursively (the inner select still holds the others),
    # so each level's placeholder and hidden names carry the level: a shared name would
    # make the inner level take the outer's placeholder for its own.
    tag = f"{_HIDDEN}{_level(sel)}$"
    placeholder = exp.alias_(exp.Literal.number(0), f"{tag}r")
    exprs = list(inner.expressions)
    exprs[pos] = placeholder
    partition = list(window.args.get("partition_by") or [])
    ordered = list(order.expressions)
    n_hidden = len(partition) + len(ordered)
    for j, e in enumerate(partition + [o.this for o in ordered]):
        exprs.append(exp.alias_(e.copy(), f"{tag}{j}"))
    inner.set("expressions", exprs)
    plan = bind_select(ctx, inner)
    width = len(plan.fields) - n_hidden
    hidden = _reuse_columns(plan, width)
    pos = [f.name for f in plan.fields].index(f"{tag}r")
    name = item.alias if isinstance(item, exp.Alias) else f"EXPR${pos}"
    # The rank's input: the select columns without the placeholder, then the hidden
    # partition/order columns that are not copies of select columns.
    keep = [i for i in range(width) if i != pos] + sorted({h for h in hidden if h >= width})
    mapping = {old: new for new, old in enumerate(keep)}
    if isinstance(plan, LogicalProject):
        below: LogicalNode = LogicalProject(
            fields=tuple(plan.fields[i] for i in keep), input=plan.input, exprs=tuple(plan.exprs[i] for i in keep)
        )
    else:
        refs = tuple(InputRef(i, plan.fields[i].type) for i in keep)
        below = LogicalProject(fields=tuple(plan.fields[i] for i in keep), input=plan, exprs=refs)
    keys = tuple(mapping[h] for h in hidden[: len(partition)])
    sort = tuple(
        SortKey(mapping[i], bool(o.args.get("desc")), _nulls_first(o))
        for i, o in zip(hidden[len(partition) :], ordered, strict=True)
    )
    rank = LogicalRank(
        fields=below.fields + (rank_field(name),),
        input=below,
        partition_keys=keys,
        order=sort,
        rank_type=rank_type,
    )
    rank_ref = InputRef(len(below.fields), rank.fields[-1].type)
    out_exprs = [rank_ref if i == pos else InputRef(mapping[i], plan.fields[i].type) for i in range(width)]
    names = [name if i == pos else plan.fields[i].name for i in range(width)]
    fields = tuple(Field(nm, e.type) for nm, e in zip(names, out_exprs, strict=True))
    if keep[: width - 1] == list(range(width - 1)) and pos == width - 1 and len(keep) == width - 1:
        return replace(rank, fields=fields)  # already in select order
    return LogicalProject(fields=fields, input=rank, exprs=tuple(out_exprs))


def _level(sel: exp.Select) -> int:
    """How many enclosing ranking levels already rewrote `sel` (their placeholders)."""
    return sum(
        1
        for e in sel.expressions
        if isinstance(e, exp.Alias) and e.alias.startswith(_HIDDEN) and e.alias.endswith("$r")
    )


def _reuse_columns(plan: LogicalNode, width: int) -> list[int]:
    """The column of each hidden partition/order item: an earlier select column computing
    the same expression when there is one (so projection pushdown drops the copy)."""
    out = list(range(width, len(plan.fields)))
    if isinstance(plan, LogicalProject):
        for j, col in enumerate(out):
            for i in range(width):
                if plan.exprs[i] == plan.exprs[col] and plan.fields[i].type == plan.fields[col].type:
                    out[j] = i
                    break
    return out


def _nulls_first(o: exp.Ordered) -> bool:
    """Flink's default null ordering: ASC → NULLS FIRST, DESC → NULLS LAST (sqlglot fills
    `nulls_first` with exactly that default when the query does not say)."""
    nf = o.args.get("nulls_first")
    if nf is None:
        return not o.args.get("desc")
    return bool(nf)


# ---------------------------------------------------------------------- ORDER BY / LIMIT
def _int_clause(ctx: BindContext, node: exp.Expression | None, what: str) -> int | None:
    if node is None:
        return None
    if isinstance(node, exp.Fetch):
        value = node.args.get("count")
    elif isinstance(node, (exp.Limit, exp.Offset)):
        value = node.args.get("expression")
    else:
        value = node
    if value is None:
        return None
    if (
        isinstance(node, exp.Limit)
        and isinstance(value, exp.Column)
        and not value.table
        and value.name.upper() == "ALL"
    ):
        return None  # `LIMIT ALL`: no limit (Calcite)
    if isinstance(value, exp.Literal) and not value.is_string and value.this.isdigit():
        return int(value.this)
    raise error(SqlValidationError, f"{what} must be a non-negative integer literal", value, ctx.sql)


def _output_names(sel: exp.Select) -> list[str | None]:
    out: list[str | None] = []
    for e in sel.expressions:
        if isinstance(e, exp.Alias):
            out.append(e.alias)
        elif isinstance(e, exp.Column) and not isinstance(e.this, exp.Star):
            out.append(e.name)
        else:
            out.append(None)
    return out


def bind_order_limit(ctx: BindContext, sel: exp.Select, bind_select: SelectBinder) -> LogicalNode:
    """SELECT ... ORDER BY ... OFFSET ... FETCH/LIMIT: the select, then a LogicalSort.
    `bind_select` binds the SELECT without them (`planner.binder.select`, which calls this)."""
    from planner.rules.ranking import LogicalSort, SortKey  # start-up

    order = sel.args.get("order")
    offset = _int_clause(ctx, sel.args.get("offset"), "OFFSET") or 0
    fetch = _int_clause(ctx, sel.args.get("limit"), "FETCH / LIMIT")
    stripped = sel.copy()
    for key in ("order", "limit", "offset"):
        stripped.set(key, None)
    ordered = list(order.expressions) if order is not None else []
    plan = bind_select(ctx, stripped)
    names = [f.name for f in plan.fields]
    has_star = any(
        isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star)) for e in sel.expressions
    )
    items = list(stripped.expressions)
    resolved: list[int | None] = []
    for o in ordered:
        e = o.this
        idx: int | None = None
        if isinstance(e, exp.Literal) and not e.is_string:
            k = int(e.this)
            if not 1 <= k <= len(names):
                raise error(SqlValidationError, f"Ordinal out of range: {k}", e, ctx.sql)
            idx = k - 1
        elif isinstance(e, exp.Column) and not e.table and e.name in names:
            idx = names.index(e.name)
        elif not has_star:
            for i, item in enumerate(items):
                body = item.this if isinstance(item, exp.Alias) else item
                if body == e:
                    idx = i
                    break
        resolved.append(idx)
    width = len(plan.fields)
    if any(r is None for r in resolved):
        if sel.args.get("distinct") is not None:
            bad = ordered[resolved.index(None)].this
            raise error(SqlValidationError, "Expression is not in the select clause", bad, ctx.sql)
        extra = [o.this for o, r in zip(ordered, resolved, strict=True) if r is None]
        stripped.set("expressions", items + [exp.alias_(e.copy(), f"{_HIDDEN}o{j}") for j, e in enumerate(extra)])
        plan = bind_select(ctx, stripped)
        next_hidden = iter(range(width, len(plan.fields)))
        resolved = [r if r is not None else next(next_hidden) for r in resolved]
    keys = tuple(
        SortKey(r, bool(o.args.get("desc")), _nulls_first(o))
        for o, r in zip(ordered, resolved, strict=True)
        if r is not None
    )
    if not keys and offset == 0 and fetch is None:
        return plan  # `LIMIT ALL` alone: nothing to sort or cut
    node: LogicalNode = LogicalSort(fields=plan.fields, input=plan, order=keys, offset=offset, fetch=fetch)
    if len(plan.fields) > width:
        exprs = tuple(InputRef(i, plan.fields[i].type) for i in range(width))
        node = LogicalProject(fields=plan.fields[:width], input=node, exprs=exprs)
    return node


def bind_query_order_limit(ctx: BindContext, node: exp.Expression) -> LogicalNode:
    """ORDER BY / LIMIT / OFFSET on a set operation: sort its result; ORDER BY items must
    name an output column (by name or ordinal), as in Calcite."""
    from planner.rules.ranking import LogicalSort, SortKey  # start-up

    stripped = node.copy()
    for key in ("order", "limit", "offset"):
        stripped.set(key, None)
    plan = bind_query_node(ctx, stripped)
    names = [f.name for f in plan.fields]
    order = node.args.get("order")
    keys: list[SortKey] = []
    for o in list(order.expressions) if order is not None else []:
        e = o.this
        if isinstance(e, exp.Literal) and not e.is_string and 1 <= int(e.this) <= len(names):
            idx = int(e.this) - 1
        elif isinstance(e, exp.Column) and e.name in names:
            idx = names.index(e.name)
        else:
            raise error(SqlValidationError, "ORDER BY of a set operation must name an output column", e, ctx.sql)
        keys.append(SortKey(idx, bool(o.args.get("desc")), _nulls_first(o)))
    offset = _int_clause(ctx, node.args.get("offset"), "OFFSET") or 0
    fetch = _int_clause(ctx, node.args.get("limit"), "FETCH / LIMIT")
    return LogicalSort(fields=plan.fields, input=plan, order=tuple(keys), offset=offset, fetch=fetch)
