"""Subqueries in WHERE and SELECT, rewritten into joins as Flink's planner does
(Calcite's SubQueryRemoveRule + decorrelation):

- a top-level WHERE conjunct `x IN (SELECT c ...)` / `EXISTS (...)` → LEFT SEMI join;
  `NOT IN` / `NOT EXISTS` → LEFT ANTI join. `NOT IN` keeps SQL's NULL semantics: the anti
  join's condition is `x = c IS NOT FALSE` (a NULL comparison counts as a match), so a NULL
  `x` or a NULL in the subquery removes the row unless the subquery is empty; when both
  sides are NOT NULL it is the plain equi-join `x = c`.
- correlation: a subquery that is a plain `SELECT ... FROM ... WHERE ...` may reference the
  outer query's columns in WHERE conjuncts; those conjuncts become the join condition.
- a scalar subquery `(SELECT agg ...)` → LEFT join with its (one-row) result; the value is a
  hidden column of the scope. Uncorrelated subqueries that are not a global aggregate make
  the join fail at run time when they return more than one row (`single_row`). A correlated
  scalar subquery with equality correlation is decorrelated into an aggregate grouped by
  the correlated columns and LEFT-joined on them; a bare COUNT becomes COALESCE(count, 0).

`rewrite_subqueries` is called by `bind_select` right after FROM is bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlglot import exp

from planner.binder.expressions import ExprBinder, is_aggregate_call
from planner.binder.query import bind_from, bind_query_node
from planner.binder.scope import Scope, ScopeColumn, error
from planner.errors import SqlValidationError, UnsupportedSqlError
from planner.exprs import conjunction
from planner.logical import (
    LogicalAggregate,
    LogicalCalc,
    LogicalFilter,
    LogicalJoin,
    LogicalNode,
    LogicalProject,
)
from runtime.expr.ir import Call, Expr, InputRef, input_refs, remap_refs
from runtime.types import BOOLEAN, Field

if TYPE_CHECKING:
    from planner.binder.query import BindContext

_HIDDEN_PREFIX = "$subquery"


class SubqueryScope(Scope):
    """A scope with hidden columns (scalar subquery values): resolvable by the names the
    rewrite gives them, never part of `*`."""

    def star(self, qualifier: str | None, node: exp.Expression) -> list[ScopeColumn]:
        cols = super().star(qualifier, node)
        return [c for c in cols if not (c.qualifier or "").startswith(_HIDDEN_PREFIX)]

    def concat(self, other: Scope) -> Scope:
        base = super().concat(other)
        return SubqueryScope(base.columns, base.sql)


class CorrelatedScope(Scope):
    """The columns of a subquery's FROM (after) those of the outer query: names resolve in
    the subquery first, then in the outer query (SQL's scoping of correlated names)."""

    def __init__(self, outer: Scope, inner: Scope) -> None:
        combined = outer.concat(inner)
        super().__init__(combined.columns, inner.sql)
        self.outer = outer
        self.inner = inner
        self.n_outer = len(outer.columns)

    def resolve(self, column: exp.Column) -> Expr:
        try:
            ref = self.inner.resolve(column)
        except SqlValidationError:
            return self.outer.resolve(column)
        return remap_refs(ref, {i: i + self.n_outer for i in input_refs(ref)})


def _has_subquery(node: exp.Expression | None) -> bool:
    if node is None:
        return False
    for n in node.walk():
        if isinstance(n, (exp.Subquery, exp.Exists)) or (isinstance(n, exp.In) and n.args.get("query")):
            return True
    return False


def _conjuncts(node: exp.Expression) -> list[exp.Expression]:
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.And):
        return _conjuncts(node.this) + _conjuncts(node.expression)
    return [node]


def _and_all(parts: list[exp.Expression]) -> exp.Expression | None:
    out: exp.Expression | None = None
    for p in parts:
        out = p if out is None else exp.And(this=out, expression=p)
    return out


def _and(parts: Sequence[Expr]) -> Expr | None:
    out: Expr | None = None
    for p in parts:
        out = conjunction(out, p)
    return out


def _is_simple(sel: exp.Expression) -> bool:
    """A plain SELECT-FROM-WHERE (what correlation is supported for)."""
    if not isinstance(sel, exp.Select) or sel.args.get("with_") or sel.args.get("with"):
        return False
    for key in ("group", "having", "distinct", "order", "limit", "offset", "qualify", "windows"):
        if sel.args.get(key):
            return False
    return (sel.args.get("from_") or sel.args.get("from")) is not None


def _is_global_aggregate(plan: LogicalNode) -> bool:
    """Whether `plan` is an aggregate without GROUP BY (exactly one row), under
    projections/filters."""
    while isinstance(plan, (LogicalProject, LogicalCalc)) or (
        isinstance(plan, LogicalFilter) and not isinstance(plan.input, LogicalAggregate)
    ):
        plan = plan.input
    return isinstance(plan, LogicalAggregate) and not plan.grouping


class _Rewriter:
    def __init__(self, ctx: BindContext, plan: LogicalNode, scope: Scope) -> None:
        self.ctx = ctx
        self.plan = plan
        self.scope: Scope = SubqueryScope(scope.columns, scope.sql)
        self.count = 0

    # ------------------------------------------------------------------ helpers
    def _bind_sub(self, sub: exp.Expression) -> LogicalNode | None:
        """The subquery bound on its own, or None when it references outer columns."""

        try:
            return bind_query_node(self.ctx, sub)
        except SqlValidationError as e:
            if "not found" in str(e):
                return None
            raise

    def _correlated_from(self, sel: exp.Select) -> tuple[LogicalNode, Scope, list[exp.Expression]]:
        """Bind a simple subquery's FROM and its uncorrelated WHERE conjuncts; return the
        plan, the inner scope and the correlated conjuncts (still AST)."""

        inner, iscope = bind_from(self.ctx, sel.args.get("from_") or sel.args.get("from"), sel.args.get("joins"))
        local: list[Expr] = []
        correlated: list[exp.Expression] = []
        where = sel.args.get("where")
        for c in _conjuncts(where.this) if where is not None else []:
            if _has_subquery(c):
                raise error(
                    UnsupportedSqlError,
                    "Nested subqueries in a correlated subquery are not supported yet",
                    c,
                    self.ctx.sql,
                )
            try:
                local.append(ExprBinder(iscope, self.ctx.sql, clause="WHERE").bind(c))
            except SqlValidationError as e:
                if "not found" not in str(e):
                    raise
                correlated.append(c)
        cond = _and(local)
        if cond is not None:
            inner = LogicalFilter(fields=inner.fields, input=inner, condition=cond)
        return inner, iscope, correlated

    def _join(self, right: LogicalNode, kind: str, cond: Expr | None, single_row: bool = False) -> None:
        from planner.rules.joins import LogicalScalarJoin  # start-up

        if kind in ("SEMI", "ANTI"):
            self.plan = LogicalJoin(fields=self.plan.fields, left=self.plan, right=right, kind=kind, condition=cond)
            return
        fields = self.plan.fields + tuple(Field(f.name, f.type.with_nullable(True)) for f in right.fields)
        if single_row:
            self.plan = LogicalScalarJoin(
                fields=fields, left=self.plan, right=right, kind=kind, condition=cond, single_row=True
            )
        else:
            self.plan = LogicalJoin(fields=fields, left=self.plan, right=right, kind=kind, condition=cond)

    # ------------------------------------------------------------------ IN / EXISTS
    def semi_anti(self, conj: exp.Expression) -> bool:
        """Rewrite a WHERE conjunct that is [NOT] IN / [NOT] EXISTS; False if it is not."""
        node = conj
        negated = False
        while isinstance(node, exp.Paren):
            node = node.this
        if isinstance(node, exp.Not):
            negated = True
            node = node.this
            while isinstance(node, exp.Paren):
                node = node.this
        if isinstance(node, exp.Exists):
            self._exists(node, negated)
            return True
        if isinstance(node, exp.In) and node.args.get("query") is not None:
            self._in(node, negated)
            return True
        return False

    def _exists(self, node: exp.Exists, negated: bool) -> None:
        sub = node.this
        while isinstance(sub, (exp.Subquery, exp.Paren)):
            sub = sub.this
        kind = "ANTI" if negated else "SEMI"
        plan = self._bind_sub(sub)
        if plan is not None:
            self._join(plan, kind, None)
            return
        if not _is_simple(sub):
            raise error(UnsupportedSqlError, "This correlated subquery is not supported yet", node, self.ctx.sql)
        inner, iscope, correlated = self._correlated_from(sub)  # type: ignore[arg-type]
        cscope = CorrelatedScope(self.scope, iscope)
        binder = ExprBinder(cscope, self.ctx.sql, clause="WHERE")
        self._join(inner, kind, _and([binder.bind(c) for c in correlated]))

    def _in(self, node: exp.In, negated: bool) -> None:
        sub = node.args["query"]
        while isinstance(sub, (exp.Subquery, exp.Paren)):
            sub = sub.this
        outer_binder = ExprBinder(self.scope, self.ctx.sql, clause="WHERE")
        lhs_nodes = node.this.expressions if isinstance(node.this, exp.Tuple) else [node.this]
        lhs = [outer_binder.bind(x) for x in lhs_nodes]
        nl = len(self.plan.fields)
        plan = self._bind_sub(sub)
        extra: list[Expr] = []
        if plan is not None:
            right = plan
            rhs: list[Expr] = [InputRef(nl + i, f.type) for i, f in enumerate(right.fields)]
        else:
            if not _is_simple(sub) or any(isinstance(e, exp.Star) for e in sub.expressions):
                raise error(UnsupportedSqlError, "This correlated subquery is not supported yet", node, self.ctx.sql)
            inner, iscope, correlated = self._correlated_from(sub)  # type: ignore[arg-type]
            item_binder = ExprBinder(iscope, self.ctx.sql, clause="SELECT")
            items = [item_binder.bind(e.this if isinstance(e, exp.Alias) else e) for e in sub.expressions]
            width = len(inner.fields)
            exprs = tuple(InputRef(i, f.type) for i, f in enumerate(inner.fields)) + tuple(items)
            fields = inner.fields + tuple(Field(f"$in{i}", e.type) for i, e in enumerate(items))
            right = LogicalProject(fields=fields, input=inner, exprs=exprs)
            rhs = [InputRef(nl + width + i, e.type) for i, e in enumerate(items)]
            cscope = CorrelatedScope(self.scope, iscope)
            binder = ExprBinder(cscope, self.ctx.sql, clause="WHERE")
            extra = [binder.bind(c) for c in correlated]
        if len(rhs) != len(lhs):
            raise error(
                SqlValidationError, "Values passed to IN operator must have compatible types", node, self.ctx.sql
            )
        conds: list[Expr] = []
        for a, b in zip(lhs, rhs, strict=True):
            eq = outer_binder.call("equals", [a, b], node)
            if negated and (a.type.nullable or b.type.nullable):
                eq = Call("is_not_false", (eq,), BOOLEAN(nullable=False))
            conds.append(eq)
        self._join(right, "ANTI" if negated else "SEMI", _and(conds + extra))

    # ------------------------------------------------------------------ scalar
    def scalar(self, node: exp.Subquery) -> exp.Expression:
        """Join the scalar subquery in and return the AST that reads its value."""
        sub = node.this
        while isinstance(sub, (exp.Subquery, exp.Paren)):
            sub = sub.this
        plan = self._bind_sub(sub)
        if plan is not None:
            if len(plan.fields) != 1:
                raise error(
                    SqlValidationError,
                    "Cannot apply '$SCALAR_QUERY' to a subquery with more than one column",
                    node,
                    self.ctx.sql,
                )
            self._join(plan, "LEFT", None, single_row=not _is_global_aggregate(plan))
            return self._hidden(plan.fields[0])
        return self._correlated_scalar(node, sub)

    def _hidden(self, f: Field, wrap_count: bool = False) -> exp.Expression:
        qualifier = f"{_HIDDEN_PREFIX}{self.count}"
        self.count += 1
        index = len(self.plan.fields) - 1
        col = ScopeColumn(qualifier, "v", index, f.type.with_nullable(True))
        self.scope = SubqueryScope(list(self.scope.columns) + [col], self.scope.sql)
        ref: exp.Expression = exp.column("v", table=qualifier)
        if wrap_count:
            ref = exp.Coalesce(this=ref, expressions=[exp.Literal.number(0)])
        return ref

    def _correlated_scalar(self, node: exp.Subquery, sub: exp.Expression) -> exp.Expression:
        unsupported = error(
            UnsupportedSqlError, "This correlated scalar subquery is not supported yet", node, self.ctx.sql
        )
        if not _is_simple(sub) or len(sub.expressions) != 1:
            raise unsupported
        item = sub.expressions[0]
        value = item.this if isinstance(item, exp.Alias) else item
        if not is_aggregate_call(value):
            raise unsupported
        _, iscope = bind_from(self.ctx, sub.args.get("from_") or sub.args.get("from"), sub.args.get("joins"))
        where = sub.args.get("where")
        local: list[exp.Expression] = []
        keys: list[tuple[exp.Expression, exp.Expression]] = []  # (inner, outer)
        for c in _conjuncts(where.this) if where is not None else []:
            try:
                ExprBinder(iscope, self.ctx.sql, clause="WHERE").bind(c)
                local.append(c)
                continue
            except SqlValidationError as e:
                if "not found" not in str(e):
                    raise
            if not isinstance(c, exp.EQ):
                raise unsupported
            sides = [c.this, c.expression]
            inner_side = None
            for s in sides:
                try:
                    ExprBinder(iscope, self.ctx.sql, clause="WHERE").bind(s)
                    inner_side = s
                    break
                except SqlValidationError:
                    continue
            if inner_side is None:
                raise unsupported
            outer_side = sides[1] if inner_side is sides[0] else sides[0]
            keys.append((inner_side, outer_side))
        rewritten = sub.copy()
        new_where = _and_all([c.copy() for c in local])
        rewritten.set("where", exp.Where(this=new_where) if new_where is not None else None)
        rewritten.set(
            "expressions",
            [exp.alias_(k.copy(), f"$k{i}") for i, (k, _) in enumerate(keys)] + [item.copy()],
        )
        rewritten.set("group", exp.Group(expressions=[k.copy() for k, _ in keys]))
        plan = bind_query_node(self.ctx, rewritten)
        nl = len(self.plan.fields)
        outer_binder = ExprBinder(self.scope, self.ctx.sql, clause="WHERE")
        conds = [
            outer_binder.call("equals", [outer_binder.bind(o), InputRef(nl + i, plan.fields[i].type)], node)
            for i, (_, o) in enumerate(keys)
        ]
        self._join(plan, "LEFT", _and(conds))
        return self._hidden(plan.fields[-1], wrap_count=isinstance(value, exp.Count))


def _replace_scalars(node: exp.Expression, rw: _Rewriter) -> exp.Expression:
    """Replace every scalar subquery in `node` (not inside another subquery; IN/EXISTS
    outside a top-level WHERE conjunct are left for the binder to reject)."""
    if isinstance(node, exp.Subquery):
        return rw.scalar(node)
    if isinstance(node, (exp.Exists, exp.Select)) or (isinstance(node, exp.In) and node.args.get("query")):
        return node
    for key, value in list(node.args.items()):
        if isinstance(value, exp.Expression):
            node.set(key, _replace_scalars(value, rw))
        elif isinstance(value, list):
            node.set(key, [_replace_scalars(v, rw) if isinstance(v, exp.Expression) else v for v in value])
    return node


def rewrite_subqueries(
    ctx: BindContext, sel: exp.Select, plan: LogicalNode, scope: Scope
) -> tuple[LogicalNode, Scope, exp.Select]:
    """Joins for the subqueries of `sel`'s WHERE and SELECT list; returns the new FROM
    plan, its scope (with hidden scalar columns) and `sel` with the subqueries replaced."""
    where = sel.args.get("where")
    if not (_has_subquery(where) or any(_has_subquery(e) for e in sel.expressions)):
        return plan, scope, sel
    sel = sel.copy()
    rw = _Rewriter(ctx, plan, scope)
    where = sel.args.get("where")
    deferred: list[exp.Expression] = []
    if where is not None:
        keep = []
        for c in _conjuncts(where.this):
            if _is_semi_anti(c):
                deferred.append(c)
            else:
                keep.append(_replace_scalars(c, rw))
        new_where = _and_all(keep)
        sel.set("where", exp.Where(this=new_where) if new_where is not None else None)
    sel.set("expressions", [_replace_scalars(e, rw) for e in sel.expressions])
    for c in deferred:
        rw.semi_anti(c)
    return rw.plan, rw.scope, sel


def _is_semi_anti(c: exp.Expression) -> bool:
    node = c
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Not):
        node = node.this
        while isinstance(node, exp.Paren):
            node = node.this
    return isinstance(node, exp.Exists) or (isinstance(node, exp.In) and node.args.get("query") is not None)
