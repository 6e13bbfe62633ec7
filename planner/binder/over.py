"""OVER windows in a SELECT block: `agg(...) OVER (PARTITION BY ... ORDER BY ... frame)`,
`OVER w` with `WINDOW w AS (...)`, LAG/LEAD and ranking functions.

Binding is a rewrite of the SELECT block, so `planner.binder.select` binds the rest as
usual: every OVER call is bound over the FROM/WHERE scope into a `LogicalOverAggregate`
(planner.rules.over) placed under the SELECT projection, and the call itself is replaced
in (a copy of) the select list by a reference to its output column (`w<g>$o<i>`, Flink's
names), visible through an extended scope that hides those columns from `*`. Calls over
the same (PARTITION BY, ORDER BY, frame) form one window group (one OverAggregate).
Arguments that are not plain columns are computed by a projection under the OVER node,
as Calcite does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from planner.binder.expressions import ExprBinder, function_args, function_name, interval_ms, is_aggregate_call
from planner.binder.scope import Scope, ScopeColumn, error
from planner.binder.types import plain
from planner.binder.udf_calls import udaf_params
from planner.errors import SqlValidationError, UnsupportedSqlError
from planner.functions_catalog import lookup_function
from planner.logical import LogicalNode, LogicalProject
from runtime.aggregates.types import infer_aggregate, is_aggregate
from runtime.expr.ir import Call, Expr, InputRef, Literal
from runtime.frozen import mutable_dataclass
from runtime.functions.registry import FunctionTypeError
from runtime.types import BIGINT, DOUBLE, INT, DataType, Field

if TYPE_CHECKING:
    from planner.binder.query import BindContext
    from planner.rules.over import OverCall, OverFrame

_HIDDEN_PREFIX = "w"


@mutable_dataclass
class _OverScope(Scope):
    """The FROM scope plus the OVER output columns, which `*` does not expand to."""

    hidden: frozenset[str] = frozenset()

    def star(self, qualifier: str | None, node: exp.Expression) -> list[ScopeColumn]:
        return [c for c in super().star(qualifier, node) if not (c.qualifier is None and c.name in self.hidden)]


def has_over(sel: exp.Select) -> bool:
    """Whether a select item uses an OVER window."""
    return any(isinstance(n, exp.Window) for item in sel.expressions for n in item.walk())


def _windows_in(node: exp.Expression) -> list[exp.Window]:
    out: list[exp.Window] = []
    for n in node.walk():
        if isinstance(n, exp.Window) and not any(isinstance(p, exp.Window) for p in _parents(n)):
            out.append(n)
    return out


def _parents(n: exp.Expression) -> list[exp.Expr]:
    out: list[exp.Expr] = []
    p = n.parent
    while p is not None:
        out.append(p)
        p = p.parent
    return out


class _OverBinder:
    def __init__(self, ctx: BindContext, sel: exp.Select, plan: LogicalNode, scope: Scope) -> None:
        self.ctx = ctx
        self.sql = ctx.sql
        self.plan = plan
        self.scope = scope
        self.binder = ExprBinder(scope, ctx.sql, clause="OVER")
        self.pre: list[Expr] = [InputRef(i, f.type) for i, f in enumerate(plan.fields)]
        self.named: dict[str, exp.Window] = {}
        for w in sel.args.get("windows") or []:
            self.named[w.name] = w
        self.groups: list[tuple[tuple, list[OverCall]]] = []

    # ------------------------------------------------------------------ pieces
    def _column(self, node: exp.Expression) -> int:
        """The input index of `node`'s value (a pre-projected column when computed)."""
        e = self.binder.bind(node)
        if isinstance(e, InputRef) and e.index < len(self.plan.fields):
            return e.index
        for i, p in enumerate(self.pre):
            if p == e:
                return i
        self.pre.append(e)
        return len(self.pre) - 1

    def _spec(self, w: exp.Window) -> exp.Window:
        """The window definition `w` uses (a named window for `OVER name`)."""
        alias = w.args.get("alias")
        if alias is not None and not (w.args.get("partition_by") or w.args.get("order") or w.args.get("spec")):
            name = alias.name
            if name not in self.named:
                raise error(SqlValidationError, f"Window '{name}' not found", w, self.sql)
            return self.named[name]
        return w

    def _bound(self, value: object, side: object, w: exp.Expression, range_frame: bool) -> int | None:
        if isinstance(value, str):
            v = value.upper()
            if v == "UNBOUNDED":
                return None
            if v == "CURRENT ROW":
                return 0
            raise error(UnsupportedSqlError, f"Unsupported window frame bound '{value}'", w, self.sql)
        if isinstance(value, exp.Interval):
            amount = int(interval_ms(value, self.sql).value)
        elif isinstance(value, exp.Literal) and not value.is_string:
            amount = int(value.this)
            if range_frame:
                pass
        else:
            raise error(UnsupportedSqlError, "Window frame bounds must be literals", w, self.sql)
        return -amount if str(side or "PRECEDING").upper() == "PRECEDING" else amount

    def _frame(self, spec: exp.Window, has_order: bool) -> OverFrame:
        from planner.rules.over import OverFrame  # start-up

        ws = spec.args.get("spec")
        if ws is None:
            if has_order:
                return OverFrame("RANGE", None, 0)
            return OverFrame("ROWS", None, None)
        kind = str(ws.args.get("kind") or "ROWS").upper()
        lower = self._bound(ws.args.get("start"), ws.args.get("start_side"), spec, kind == "RANGE")
        end = ws.args.get("end")
        upper = 0 if end is None else self._bound(end, ws.args.get("end_side"), spec, kind == "RANGE")
        if isinstance(ws.args.get("start"), str) and ws.args["start"].upper() == "UNBOUNDED":
            if str(ws.args.get("start_side") or "").upper() == "FOLLOWING":
                raise error(
                    SqlValidationError,
                    "UNBOUNDED FOLLOWING cannot be specified for the lower frame boundary",
                    spec,
                    self.sql,
                )
        if (
            isinstance(end, str)
            and end.upper() == "UNBOUNDED"
            and str(ws.args.get("end_side") or "").upper() == "PRECEDING"
        ):
            raise error(
                SqlValidationError,
                "UNBOUNDED PRECEDING cannot be specified for the upper frame boundary",
                spec,
                self.sql,
            )
        return OverFrame(kind, lower, upper)

    def _call(self, fn: exp.Expression, w: exp.Window) -> OverCall:
        from planner.rules.over import OFFSET_FUNCTIONS, RANKING_FUNCTIONS, OverCall  # start-up

        name = function_name(fn)
        args = function_args(fn)
        if name in RANKING_FUNCTIONS:
            if name == "ntile":
                n = self.binder.bind(args[0]) if args else None
                if not isinstance(n, Literal) or not isinstance(n.value, int):
                    raise error(SqlValidationError, "NTILE requires an integer literal", fn, self.sql)
                return OverCall(name, (), INT(nullable=False), params=(("buckets", n.value),))
            t: DataType = DOUBLE(nullable=False) if name in ("percent_rank", "cume_dist") else BIGINT(nullable=False)
            return OverCall(name, (), t)
        if name in OFFSET_FUNCTIONS:
            value = fn.this
            col = self._column(value)
            vt = plain(self.pre[col].type).with_nullable(True)
            offset = 1
            off_node = fn.args.get("offset")
            if off_node is not None:
                off = self.binder.bind(off_node)
                if not isinstance(off, Literal) or not isinstance(off.value, int):
                    raise error(
                        UnsupportedSqlError, f"{name.upper()} offset must be an integer literal", off_node, self.sql
                    )
                offset = off.value
            params: list[tuple[str, object]] = [("offset", offset)]
            default_node = fn.args.get("default")
            if default_node is not None:
                d = self.binder.bind(default_node)
                if isinstance(d, Call) and d.name == "cast" and isinstance(d.args[0], Literal):
                    d = Literal(d.args[0].value, d.type)
                if not isinstance(d, Literal):
                    raise error(
                        UnsupportedSqlError, f"{name.upper()} default must be a literal", default_node, self.sql
                    )
                params.append(("default", d))
            return OverCall(name, (col,), vt, params=tuple(params))
        udaf = lookup_function(name, "aggregate")
        if udaf is not None and udaf.result_type is not None:  # a Python aggregate function (general or pandas)
            cols = tuple(self._column(a) for a in args)
            udf_params = udaf_params(udaf, [self.pre[c] for c in cols])
            return OverCall(name, cols, udaf.result_type.with_nullable(True), params=udf_params)
        if isinstance(fn, exp.Count) or is_aggregate(name):
            distinct = False
            if len(args) == 1 and isinstance(args[0], exp.Distinct):
                distinct = True
                args = list(args[0].expressions)
            if isinstance(fn, exp.Count) and (not args or isinstance(args[0], exp.Star)):
                args = []
            params = []
            if name == "listagg" and len(args) == 2:
                sep = self.binder.bind(args[1])
                if not isinstance(sep, Literal) or not isinstance(sep.value, str):
                    raise error(SqlValidationError, "LISTAGG's separator must be a string literal", args[1], self.sql)
                params.append(("separator", sep.value))
                args = args[:1]
            cols = tuple(self._column(a) for a in args)
            try:
                t = infer_aggregate(name, [plain(self.pre[c].type) for c in cols])
            except FunctionTypeError as e:
                raise error(SqlValidationError, str(e), fn, self.sql) from None
            return OverCall(name, cols, t, distinct=distinct, params=tuple(params))
        raise error(UnsupportedSqlError, f"{name.upper()} is not supported as an OVER window function", fn, self.sql)

    # ------------------------------------------------------------------ main
    def bind_window(self, w: exp.Window) -> tuple[int, int]:
        """Bind one OVER call; returns (group index, call index in the group)."""
        from planner.rules.over import OFFSET_FUNCTIONS, RANKING_FUNCTIONS  # start-up

        spec = self._spec(w)
        partition = tuple(self._column(p) for p in spec.args.get("partition_by") or [])
        order_node = spec.args.get("order")
        order: list[tuple[int, bool, bool]] = []
        for o in order_node.expressions if order_node is not None else []:
            asc = not o.args.get("desc")
            nf = o.args.get("nulls_first")
            order.append((self._column(o.this), asc, bool(nf) if nf is not None else asc))
        frame = self._frame(spec, bool(order))
        fn = w.this
        if isinstance(fn, (exp.IgnoreNulls, exp.RespectNulls)):
            raise error(UnsupportedSqlError, "IGNORE/RESPECT NULLS is not supported", fn, self.sql)
        if isinstance(fn, exp.Filter):
            raise error(UnsupportedSqlError, "FILTER in an OVER aggregate is not supported yet", fn, self.sql)
        call = self._call(fn, w)
        if call.name in RANKING_FUNCTIONS + OFFSET_FUNCTIONS and not order:
            raise error(SqlValidationError, f"{call.name.upper()} requires an ORDER BY in its window", w, self.sql)
        key = (partition, tuple(order), frame)
        for gi, (k, calls) in enumerate(self.groups):
            if k == key:
                if call in calls:
                    return gi, calls.index(call)
                calls.append(call)
                return gi, len(calls) - 1
        self.groups.append((key, [call]))
        return len(self.groups) - 1, 0


def bind_over(
    ctx: BindContext, sel: exp.Select, plan: LogicalNode, scope: Scope
) -> tuple[exp.Select, LogicalNode, Scope]:
    """Rewrite `sel`'s OVER calls into a LogicalOverAggregate on `plan`: returns the
    rewritten select (windows replaced by column references), the plan and its scope."""
    from planner.rules.over import LogicalOverAggregate, OverGroup  # start-up

    sel = sel.copy()
    if sel.args.get("group") is not None or sel.args.get("having") is not None:
        raise error(UnsupportedSqlError, "OVER windows together with GROUP BY are not supported yet", sel, ctx.sql)
    b = _OverBinder(ctx, sel, plan, scope)
    located: list[tuple[exp.Window, int, int]] = []
    for item in sel.expressions:
        for w in _windows_in(item):
            gi, ci = b.bind_window(w)
            located.append((w, gi, ci))
    groups = tuple(OverGroup(partition=k[0], order=k[1], frame=k[2], calls=tuple(calls)) for k, calls in b.groups)
    base = plan
    if len(b.pre) > len(plan.fields):
        names = [f.name for f in plan.fields] + [f"$f{i}" for i in range(len(plan.fields), len(b.pre))]
        base = LogicalProject(
            fields=tuple(Field(n, e.type) for n, e in zip(names, b.pre, strict=True)), input=plan, exprs=tuple(b.pre)
        )
    out_fields = list(base.fields)
    offsets = []
    for gi, g in enumerate(groups):
        offsets.append(len(out_fields))
        for ci, c in enumerate(g.calls):
            out_fields.append(Field(f"w{gi}$o{ci}", c.type))
    over = LogicalOverAggregate(fields=tuple(out_fields), input=base, groups=groups)
    direct = {id(item): i for i, item in enumerate(sel.expressions)}
    for w, gi, ci in located:
        ref: exp.Expr = exp.column(exp.to_identifier(f"w{gi}$o{ci}", quoted=True))
        if id(w) in direct:  # an unaliased select item keeps Calcite's name EXPR$<i>
            ref = exp.alias_(ref, f"EXPR${direct[id(w)]}", quoted=True)
        w.replace(ref)
    if any(is_aggregate_call(item) for item in sel.expressions):
        raise error(UnsupportedSqlError, "OVER windows together with aggregates are not supported yet", sel, ctx.sql)
    sel.set("windows", None)
    hidden = {f.name for f in out_fields[len(plan.fields) :]}
    cols = list(scope.columns)
    for i in range(len(base.fields), len(out_fields)):
        cols.append(ScopeColumn(None, out_fields[i].name, i, out_fields[i].type))
    return sel, over, _OverScope(cols, ctx.sql, frozenset(hidden))
