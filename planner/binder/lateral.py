"""UNNEST and LATERAL TABLE in FROM: `t CROSS JOIN UNNEST(t.arr) [WITH ORDINALITY] AS x(a[, pos])`,
`t, LATERAL TABLE(f(t.x)) AS T(a, b)`, `t [LEFT] JOIN LATERAL TABLE(f(x)) [AS T(...)] ON TRUE`,
and `FROM UNNEST(ARRAY[...])` → `LogicalCorrelate` (planner.rules.correlate).

UNNEST of ARRAY<T> gives one column (T's fields when T is a ROW), of MAP<K, V> two (key,
value), of MULTISET<T> one (each element repeated by its count); WITH ORDINALITY adds the
1-based position (INT NOT NULL). A LEFT join keeps left rows the function produces no row
for (function columns NULL) and, as in Flink, takes only `ON TRUE`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from planner.binder.expressions import ExprBinder, function_args, function_name
from planner.binder.query import BindContext, join_form, relation_form
from planner.binder.scope import Scope, error
from planner.binder.types import calcite_signature, plain
from planner.binder.udf_calls import coerce_args
from planner.errors import SqlValidationError, UnsupportedSqlError
from planner.functions_catalog import lookup_function
from planner.logical import LogicalFilter, LogicalNode, LogicalProject, LogicalValues
from runtime.expr.ir import Expr, InputRef, Literal
from runtime.types import INT, Field

if TYPE_CHECKING:
    from runtime.operators.correlate import CorrelateFunction


def _normalize_alias(node: exp.Expression) -> None:
    """sqlglot stores `WITH ORDINALITY AS x(a, pos)` as columns [a] + offset=pos: move the
    ordinality name back into the column list (in place; idempotent)."""
    offset = node.args.get("offset")
    alias = node.args.get("alias")
    if isinstance(offset, exp.Identifier) and isinstance(alias, exp.TableAlias):
        alias.append("columns", offset)
        node.set("offset", True)


def _alias_names(node: exp.Expression) -> tuple[str | None, list[str] | None]:
    alias = node.args.get("alias")
    if not isinstance(alias, exp.TableAlias):
        return None, None
    cols = [c.name for c in alias.columns] if alias.columns else None
    return (alias.name or None), cols


def _unnest(node: exp.Unnest, scope: Scope, sql: str | None) -> tuple[CorrelateFunction, list[Field]]:
    if len(node.expressions) != 1:
        raise error(UnsupportedSqlError, "UNNEST of several collections is not supported yet", node, sql)
    expr = ExprBinder(scope, sql, clause="UNNEST").bind(node.expressions[0])
    t = expr.type
    ordinality = bool(node.args.get("offset"))
    if t.name in ("ARRAY", "MULTISET"):
        elem = t.children[0]
        if elem.name == "ROW" and elem.field_names:
            element = "row"
            types = list(elem.children)
            names = list(elem.field_names)
        else:
            element = "scalar"
            types, names = [elem], ["EXPR$0"]
        if t.name == "MULTISET":
            element = "multiset"
    elif t.name == "MAP":
        element = "map"
        types, names = [t.children[0], t.children[1]], ["EXPR$0", "EXPR$1"]
    else:
        raise error(SqlValidationError, f"UNNEST requires an ARRAY, MAP or MULTISET argument, got {t}", node, sql)
    fields = [Field(n, plain(ty).with_nullable(True)) for n, ty in zip(names, types, strict=True)]
    if ordinality:
        fields.append(Field("ORDINALITY", INT(nullable=False)))
    from runtime.operators.correlate import UNNEST, CorrelateFunction  # start-up

    function = CorrelateFunction(UNNEST, expr=expr, ordinality=ordinality, element=element)
    return function, fields


def _udtf(node: exp.Lateral, scope: Scope, sql: str | None) -> tuple[CorrelateFunction, list[Field]]:
    call = node.this
    if isinstance(call, exp.Table) and isinstance(call.this, exp.Expression):
        call = call.this
    if not isinstance(call, exp.Func) or not isinstance(call, exp.Expression):
        raise error(UnsupportedSqlError, "LATERAL supports only TABLE(function(...))", node, sql)
    name = function_name(call)
    defn = lookup_function(name, "table")
    binder = ExprBinder(scope, sql, clause="LATERAL TABLE")
    args: list[Expr] = [binder.bind(a) for a in function_args(call)]
    if defn is None:
        sig = calcite_signature([a.type for a in args])
        raise error(SqlValidationError, f"No match found for function signature {name}({sig})", call, sql)
    args = coerce_args(args, defn.input_types)
    fields = [Field(n, t.with_nullable(True)) for n, t in zip(defn.result_names, defn.result_types, strict=True)]
    from runtime.operators.correlate import UDTF, CorrelateFunction  # start-up

    function = CorrelateFunction(UDTF, udf=defn.reference, name=name, args=tuple(args), func_type=defn.func_type)
    return function, fields


def _function(node: exp.Expression, scope: Scope, sql: str | None) -> tuple[CorrelateFunction, list[Field]]:
    _normalize_alias(node)
    if isinstance(node, exp.Unnest):
        function, fields = _unnest(node, scope, sql)
    elif isinstance(node, exp.Lateral):
        inner = node.this
        if isinstance(inner, exp.Unnest):
            _normalize_alias(inner)
            function, fields = _unnest(inner, scope, sql)
        else:
            function, fields = _udtf(node, scope, sql)
    else:
        raise error(UnsupportedSqlError, f"Unsupported FROM item: {node.sql()[:60]}", node, sql)
    _, cols = _alias_names(node)
    if cols:
        if len(cols) != len(fields):
            raise error(SqlValidationError, "List of column aliases must have same degree as table", node, sql)
        fields = [Field(c, f.type) for c, f in zip(cols, fields, strict=True)]
    return function, fields


@join_form(exp.Unnest, exp.Lateral)
def bind_lateral_join(ctx: BindContext, plan: LogicalNode, scope: Scope, join: exp.Join) -> tuple[LogicalNode, Scope]:
    """One `JOIN UNNEST(...)` / `JOIN LATERAL TABLE(...)` item of a FROM clause."""
    sql = ctx.sql
    node = join.this
    side = str(join.args.get("side") or "").upper()
    if side in ("RIGHT", "FULL"):
        raise error(UnsupportedSqlError, f"{side} JOIN with a table function is not supported", join, sql)
    function, fields = _function(node, scope, sql)
    on = join.args.get("on")
    is_true = on is None or (isinstance(on, exp.Boolean) and on.this is True)
    join_type = "LEFT" if side == "LEFT" else "INNER"
    if join_type == "LEFT" and not is_true:
        raise error(
            SqlValidationError,
            "Currently, only literal TRUE is supported as join condition for LEFT JOIN LATERAL TABLE",
            on,
            sql,
        )
    qualifier, _ = _alias_names(node)
    if qualifier is None and isinstance(node, exp.Lateral) and isinstance(node.this, exp.Func):
        qualifier = function_name(node.this)
    out_fields = tuple(plan.fields) + tuple(fields)
    from planner.rules.correlate import LogicalCorrelate  # start-up

    new_plan: LogicalNode = LogicalCorrelate(fields=out_fields, input=plan, function=function, join_type=join_type)
    new_scope = scope.concat(Scope.of(tuple(fields), qualifier, sql))
    if not is_true:
        assert on is not None
        cond = ExprBinder(new_scope, sql, clause="ON").bind(on)
        new_plan = LogicalFilter(fields=out_fields, input=new_plan, condition=cond)
    return new_plan, new_scope


@relation_form(exp.Unnest, exp.Lateral)
def bind_lateral_relation(ctx: BindContext, node: exp.Expression) -> LogicalNode:
    """`FROM UNNEST(...)` / `FROM LATERAL TABLE(f(...))` with no left side: the function
    over Calcite's one-row `VALUES (0)`, projected to the function's columns."""
    zero = Literal(0, INT(nullable=False))
    values = LogicalValues(fields=(Field("ZERO", zero.type),), rows=((zero,),))
    function, fields = _function(node, Scope([], ctx.sql), ctx.sql)
    from planner.rules.correlate import LogicalCorrelate  # start-up

    corr = LogicalCorrelate(fields=values.fields + tuple(fields), input=values, function=function)
    exprs = tuple(InputRef(i + 1, f.type) for i, f in enumerate(fields))
    return LogicalProject(fields=tuple(fields), input=corr, exprs=exprs)
