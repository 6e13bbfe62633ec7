"""GROUP BY binding, Calcite-style: the aggregate's input is a pre-projection (group keys,
then aggregate arguments and FILTER conditions), its output is the keys followed by one
column per aggregate call (then, for windows, the window properties); SELECT and HAVING are
bound over that output. A sub-expression of SELECT/HAVING that equals a group key becomes a
reference to that key; any other column reference is "not being grouped".
"""

from __future__ import annotations

import json

from sqlglot import exp

from planner.binder.expressions import ExprBinder, interval_ms
from planner.binder.scope import Scope, error, uniquify
from planner.binder.types import plain
from planner.binder.udf_calls import coerce_args, udaf_params
from planner.binder.windows import check_window_spec
from planner.errors import SqlError, SqlValidationError, UnsupportedSqlError
from planner.functions_catalog import lookup_function
from planner.logical import AggCall, LogicalAggregate, LogicalNode, LogicalProject, LogicalWindowAggregate, WindowSpec
from runtime.aggregates.types import infer_aggregate, is_aggregate
from runtime.expr.ir import Call, Expr, InputRef, Literal, remap_refs
from runtime.frozen import mutable_dataclass
from runtime.functions.registry import FunctionTypeError
from runtime.types import BIGINT, DataType, Field

WINDOW_PROPS = ("window_start", "window_end", "window_time")


@mutable_dataclass
class LegacyWindow:
    """`GROUP BY TUMBLE(ts, size)` & co: the window, its time column (over the FROM scope)."""

    kind: str
    spec: WindowSpec
    time_expr: InputRef
    intervals: tuple[Literal, ...]
    node: exp.Expression


class AggregateScope:
    """Collects group keys and aggregate calls while SELECT/HAVING are bound."""

    def __init__(
        self,
        from_scope: Scope,
        sql: str | None,
        keys: list[Expr],
        key_types: list[DataType],
        window: LegacyWindow | None = None,
    ) -> None:
        self.from_scope = from_scope
        self.sql = sql
        self.keys = keys
        self.key_types = key_types
        self.window = window
        self.pre: list[Expr] = list(keys)
        if window is not None:
            self.pre.append(window.time_expr)
        self.aggs: list[AggCall] = []

    # ------------------------------------------------------------------ AggHandler
    def _pre_bind(self, node: exp.Expression) -> Expr | None:
        try:
            return ExprBinder(self.from_scope, self.sql, clause="GROUP BY").bind(node)
        except SqlError:
            return None

    def match_group(self, node: exp.Expression) -> Expr | None:
        if not self.keys:
            return None
        bound = self._pre_bind(node)
        if bound is None:
            return None
        for i, k in enumerate(self.keys):
            if bound == k:
                return InputRef(i, self.key_types[i])
        return None

    def ungrouped(self, node: exp.Expression) -> Exception:
        return error(SqlValidationError, f"Expression '{node.sql()}' is not being grouped", node, self.sql)

    def _pre_index(self, e: Expr) -> int:
        for i, p in enumerate(self.pre):
            if p == e and p.type.nullable == e.type.nullable:
                return i
        self.pre.append(e)
        return len(self.pre) - 1

    def aggregate(
        self,
        name: str,
        node: exp.Expression,
        call: exp.Expression,
        distinct: bool,
        filter_node: exp.Expression | None,
        args: list[exp.Expression],
    ) -> Expr:
        inner = ExprBinder(self.from_scope, self.sql, clause="aggregate argument")
        params: tuple[tuple[str, object], ...] = ()
        if name == "listagg" and len(args) == 2:
            sep = inner.bind(args[1])
            if not isinstance(sep, Literal) or not isinstance(sep.value, str):
                raise error(SqlValidationError, "LISTAGG's separator must be a string literal", args[1], self.sql)
            params = (("separator", sep.value),)
            args = args[:1]
        if name in ("json_arrayagg", "json_objectagg") and args and isinstance(args[-1], exp.Literal):
            params = (("on_null", args[-1].name),)  # the parser always spells the mode out
            args = args[:-1]
        if isinstance(node, exp.IgnoreNulls):
            if name != "array_agg":
                raise error(SqlValidationError, f"IGNORE NULLS is not allowed for {name.upper()}", node, self.sql)
            params = (("ignore_nulls", True),)
        arg_exprs = [inner.bind(a) for a in args]
        if name in ("json_arrayagg", "json_objectagg") and arg_exprs:
            # the value's type, for writing a MAP / ARRAY / ROW value as JSON (runtime.aggregates.more)
            params = (*params, ("value_type", json.dumps(plain(arg_exprs[-1].type).to_json())))
        if name == "percentile" and len(arg_exprs) > 1:
            _check_percentage(arg_exprs[1], args[1], self.sql)

        udaf = lookup_function(name, "aggregate")
        if udaf is not None:
            assert udaf.result_type is not None
            arg_exprs = coerce_args(arg_exprs, udaf.input_types)
            t = udaf.result_type.with_nullable(True)
            params = udaf_params(udaf, arg_exprs)
        elif not is_aggregate(name):
            raise error(UnsupportedSqlError, f"Aggregate function {name.upper()} is not supported yet", node, self.sql)
        else:
            try:
                t = infer_aggregate(name, [plain(a.type) for a in arg_exprs])
            except FunctionTypeError as e:
                raise error(SqlValidationError, str(e), node, self.sql) from None
        if (
            name == "sum"
            and udaf is None
            and filter_node is None
            and type(self) is AggregateScope  # grouping sets may aggregate no row into a NULL
            and (self.keys or self.window is not None)
            and arg_exprs
            and not arg_exprs[0].type.nullable
        ):
            # Calcite's AGG_SUM: a grouped SUM without FILTER keeps its argument's nullability
            t = t.with_nullable(False)
        filter_idx = None
        if filter_node is not None:
            f = inner.bind(filter_node)
            if f.type.name != "BOOLEAN":
                raise error(SqlValidationError, "FILTER expression must be of type BOOLEAN", filter_node, self.sql)
            filter_idx = self._pre_index(f)
        agg = AggCall(
            name=name,
            args=tuple(self._pre_index(a) for a in arg_exprs),
            type=t,
            distinct=distinct,
            filter=filter_idx,
            params=params,
        )
        if agg in self.aggs:
            idx = self.aggs.index(agg)
        else:
            self.aggs.append(agg)
            idx = len(self.aggs) - 1
        return InputRef(len(self.keys) + idx, t)

    def window_property(self, name: str, node: exp.Expression, args: list[exp.Expression]) -> Expr:
        kind, prop = name.split("_", 1)
        w = self.window
        if w is None or w.kind != kind.upper():
            raise error(
                SqlValidationError,
                f"Call to auxiliary group function '{name.upper()}' must have matching call to group function "
                f"'{kind.upper()}' in GROUP BY clause",
                node,
                self.sql,
            )
        if not self._same_window_call(w, args):
            raise error(
                SqlValidationError,
                f"Call to auxiliary group function '{name.upper()}' must have matching call to group function "
                f"'{kind.upper()}' in GROUP BY clause",
                node,
                self.sql,
            )
        time_t = w.time_expr.type
        if prop == "proctime":
            # a processing-time attribute of the window's result rows: the time they are
            # computed at (Flink's proctime window property), for a processing-time window
            if time_t.time_attr != "PROCTIME":
                raise error(
                    SqlValidationError,
                    f"{name.upper()} needs a window over a processing-time attribute; "
                    f"use {kind.upper()}_ROWTIME for an event-time window",
                    node,
                    self.sql,
                )
            return ExprBinder(Scope([], self.sql), self.sql, clause="SELECT").bind(
                exp.Anonymous(this="PROCTIME", expressions=[])
            )
        # Types as Flink's legacy auxiliary functions infer them: the time column's type
        # (with its nullability) for the rowtime, and for start/end too when it is a
        # TIMESTAMP; over a TIMESTAMP_LTZ, start/end are wall-clock TIMESTAMP(3) NOT NULL (in
        # the session time zone). So `TUMBLE_START(ts, ...)` of a nullable `ts` is nullable.
        if prop == "rowtime":
            t = plain(time_t).as_time_attr("ROWTIME")
            pidx = 2
        else:
            t = plain(time_t) if time_t.name == "TIMESTAMP" else DataType("TIMESTAMP", False, precision=3)
            pidx = 0 if prop == "start" else 1
        return InputRef(-1 - pidx, t)

    def _same_window_call(self, w: LegacyWindow, args: list[exp.Expression]) -> bool:
        """The auxiliary call's arguments are those of the GROUP BY window (as Calcite
        requires): the same time column and the same interval values."""
        if len(args) != 1 + len(w.intervals):
            return False
        try:
            if ExprBinder(self.from_scope, self.sql, clause="GROUP BY").bind(args[0]) != w.time_expr:
                return False
        except SqlError:
            return False
        for a, lit in zip(args[1:], w.intervals, strict=True):
            if not isinstance(a, exp.Interval) or interval_ms(a, self.sql).value != lit.value:
                return False
        return True

    # ------------------------------------------------------------------ plan
    def build(
        self, input_plan: LogicalNode, key_names: list[str], out_names: dict[int, str] | None = None
    ) -> LogicalNode:
        """The pre-projection and the aggregate node. `out_names` names aggregate output
        columns after the SELECT aliases that refer to them (as Calcite does)."""
        out_names = out_names or {}
        pre = self.pre_project(input_plan, key_names)
        return self._aggregate_node(pre, key_names, out_names)

    def grouping_function(self, name: str, node: exp.Expression, args: list[exp.Expression]) -> Expr:
        """GROUPING(k) / GROUPING_ID(k, ...) / GROUP_ID() under a plain GROUP BY: every key
        is in the (only) grouping set, so the value is 0 (BIGINT NOT NULL, as in Flink)."""
        for a in args:
            if self.match_group(a) is None:
                raise error(
                    SqlValidationError, f"Argument to {name.upper()} operator must be a grouped expression", a, self.sql
                )
        return Literal(0, BIGINT(nullable=False))

    def pre_project(self, input_plan: LogicalNode, key_names: list[str]) -> LogicalProject:
        """The aggregate's input: group keys, then aggregate arguments / FILTER columns."""
        pre_names = []
        for i, e in enumerate(self.pre):
            if i < len(key_names):
                pre_names.append(key_names[i])
            elif isinstance(e, InputRef) and 0 <= e.index < len(self.from_scope.columns):
                pre_names.append(self.from_scope.columns[e.index].name)
            else:
                pre_names.append(f"$f{i}")
        pre_names = uniquify(pre_names)
        pre_fields = tuple(Field(n, e.type) for n, e in zip(pre_names, self.pre, strict=True))
        return LogicalProject(fields=pre_fields, input=input_plan, exprs=tuple(self.pre))

    def _aggregate_node(self, pre: LogicalNode, key_names: list[str], out_names: dict[int, str]) -> LogicalNode:
        names = [out_names.get(i, key_names[i]) for i in range(len(self.keys))]
        names += [out_names.get(len(self.keys) + i, f"$f{len(self.keys) + i}") for i in range(len(self.aggs))]
        names = uniquify(names)
        out = [Field(names[i], self.key_types[i]) for i in range(len(self.keys))]
        out += [Field(names[len(self.keys) + i], a.type) for i, a in enumerate(self.aggs)]
        grouping = tuple(range(len(self.keys)))
        if self.window is None:
            return LogicalAggregate(fields=tuple(out), input=pre, grouping=grouping, aggs=tuple(self.aggs))
        time_t = self.window.time_expr.type
        out += [
            Field("window_start", DataType("TIMESTAMP", False, precision=3)),
            Field("window_end", DataType("TIMESTAMP", False, precision=3)),
            Field("window_time", plain(time_t).with_nullable(False).as_time_attr("ROWTIME")),
        ]
        return LogicalWindowAggregate(
            fields=tuple(out),
            input=pre,
            window=self.window.spec,
            time_index=len(self.keys),
            grouping=grouping,
            aggs=tuple(self.aggs),
            window_props=WINDOW_PROPS,
            legacy=True,
        )

    def finalize(self, e: Expr) -> Expr:
        """Replace window-property placeholders by their final output positions."""
        n = len(self.keys) + len(self.aggs)
        mapping = {i: i for i in range(n)}
        mapping.update({-1: n, -2: n + 1, -3: n + 2})
        return remap_refs(e, mapping)


def legacy_window(
    node: exp.Expression, name: str, args: list[exp.Expression], scope: Scope, sql: str | None, mode: str
) -> LegacyWindow:
    """Bind `TUMBLE(ts, size)`, `HOP(ts, slide, size)`, `SESSION(ts, gap)` in GROUP BY."""
    kind = name.upper()
    binder = ExprBinder(scope, sql, clause="GROUP BY")
    if not args:
        raise error(SqlValidationError, f"Invalid number of arguments to function '{kind}'", node, sql)
    time_expr = binder.bind(args[0])
    if not isinstance(time_expr, InputRef) or time_expr.type.name not in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        raise error(SqlValidationError, "Window can only be defined over a time attribute column.", args[0], sql)
    if mode == "STREAMING" and time_expr.type.time_attr is None:
        raise error(SqlValidationError, "Window can only be defined over a time attribute column.", args[0], sql)
    intervals = []
    for a in args[1:]:
        if not isinstance(a, exp.Interval):
            raise error(UnsupportedSqlError, f"{kind} window parameters must be interval literals", a, sql)
        intervals.append(interval_ms(a, sql))
    ms = [int(i.value) for i in intervals]
    if kind == "TUMBLE" and len(ms) in (1, 2):
        spec = WindowSpec("TUMBLE", size_ms=ms[0], offset_ms=ms[1] if len(ms) > 1 else None)
    elif kind == "HOP" and len(ms) in (2, 3):
        spec = WindowSpec("HOP", size_ms=ms[1], slide_ms=ms[0], offset_ms=ms[2] if len(ms) > 2 else None)
    elif kind == "SESSION" and len(ms) == 1:
        spec = WindowSpec("SESSION", gap_ms=ms[0])
    else:
        raise error(SqlValidationError, f"Invalid number of arguments to function '{kind}'", node, sql)

    check_window_spec(spec, node, sql)
    # Flink rejects legacy SESSION windows and windows over TIMESTAMP_LTZ in batch mode;
    # streamsql runs them with the same semantics as in streaming (minus late-row drops).
    return LegacyWindow(kind, spec, time_expr, tuple(intervals), node)


def _check_percentage(e: Expr, node: exp.Expression, sql: str | None) -> None:
    """PERCENTILE's percentage (or each of an ARRAY of them) must be in [0, 1]: Flink
    rejects a literal outside at validation ("Invalid input arguments")."""
    from decimal import Decimal, InvalidOperation

    items = e.args if isinstance(e, Call) and e.name == "array" else (e,)
    for item in items:
        if not isinstance(item, Literal) or item.value is None:
            continue
        try:
            v = Decimal(str(item.value))
        except InvalidOperation:
            continue
        if not Decimal(0) <= v <= Decimal(1):
            raise error(
                SqlValidationError,
                f"Invalid input arguments. The percentage of PERCENTILE must be between 0.0 and 1.0, got {item.value}",
                node,
                sql,
            )
