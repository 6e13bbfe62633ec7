"""Table API expressions, shaped like PyFlink's `pyflink.table.expressions`.

    from streamsql.expressions import col, lit, call, if_then_else
    orders.where(col('amount') > 10).select(col('user').upper_case.alias('u'))

Why SQL text: an Expression renders to a Flink SQL expression, and a Table to a Flink SQL
query, which goes through the one planner exactly as a SQL string does. So the Table API
and SQL share the binder (same types, same errors with the closest-name suggestion), the
optimizer, the plan EXPLAIN shows, and the runtime. Rendering takes a `RenderCtx` because a
few references depend on the operation they appear in: a group window alias (`col('w')`,
`col('w').start`), an over window alias (`.over(col('w'))`) and Python UDFs (registered
under a name in the environment's function catalog).
"""

from __future__ import annotations

import datetime
import decimal
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from runtime.types import DataType
from streamsql.expression_methods import FunctionMethods

__all__ = [
    "CURRENT_RANGE",
    "CURRENT_ROW",
    "UNBOUNDED_RANGE",
    "UNBOUNDED_ROW",
    "Expression",
    "TimeIntervalUnit",
    "TimePointUnit",
    "and_",
    "array",
    "call",
    "call_sql",
    "coalesce",
    "col",
    "concat",
    "current_date",
    "current_timestamp",
    "if_then_else",
    "lit",
    "local_timestamp",
    "map_",
    "not_",
    "null_of",
    "or_",
    "row",
    "row_interval",
    "with_columns",
]


class TimeIntervalUnit(Enum):
    """Units for `extract`, `floor` and `ceil` (PyFlink's names)."""

    YEAR = "YEAR"
    QUARTER = "QUARTER"
    MONTH = "MONTH"
    WEEK = "WEEK"
    DAY = "DAY"
    HOUR = "HOUR"
    MINUTE = "MINUTE"
    SECOND = "SECOND"
    MILLISECOND = "MILLISECOND"


class TimePointUnit(Enum):
    YEAR = "YEAR"
    MONTH = "MONTH"
    DAY = "DAY"
    HOUR = "HOUR"
    MINUTE = "MINUTE"
    SECOND = "SECOND"
    QUARTER = "QUARTER"
    WEEK = "WEEK"
    MILLISECOND = "MILLISECOND"


@dataclass
class RenderCtx:
    """What an expression's SQL depends on besides itself (see the module docstring)."""

    # alias → (window function name, time column SQL, interval SQLs): ('TUMBLE', '`ts`', ["INTERVAL ..."])
    group_windows: dict[str, tuple[str, str, list[str]]] = field(default_factory=dict)
    # alias → the OVER (...) specification text
    over_windows: dict[str, str] = field(default_factory=dict)
    # registers a Python UDF and returns the name to call it by
    register_udf: Callable[[Any], str] | None = None


def quote(name: str) -> str:
    """An identifier in backticks (Flink's quoting), so any name survives the round trip."""
    return "`" + name.replace("`", "``") + "`"


def type_sql(dt: DataType) -> str:
    """A DataType as SQL type text (time attribute markers dropped)."""
    return str(dt).replace(" *ROWTIME*", "").replace(" *PROCTIME*", "")


_INTERVAL_MS = {"SECOND": 1000, "MINUTE": 60_000, "HOUR": 3_600_000, "DAY": 86_400_000}


class Expression(FunctionMethods):
    """A Table API expression. Operators build new expressions; `_render(ctx)` gives SQL."""

    def __init__(
        self,
        render: Callable[[RenderCtx], str],
        *,
        column: str | None = None,
        agg: tuple[str, tuple[Expression, ...], bool] | None = None,
        interval: tuple[int, str] | None = None,
        rows: int | None = None,
        special: str | None = None,
        names: tuple[str, ...] = (),
        inner: Expression | None = None,
        order: str | None = None,
        udf: tuple[Any, tuple[Expression, ...]] | None = None,
    ) -> None:
        self._render_fn = render
        self._column = column  # a plain column reference: its name
        self._agg = agg  # (function, args, distinct) for aggregate calls
        self._interval = interval  # (amount, unit) of an interval literal
        self._rows = rows  # row_interval(n)
        self._special = special  # UNBOUNDED_ROW / UNBOUNDED_RANGE / CURRENT_ROW / CURRENT_RANGE
        self._names = names  # alias names
        self._inner = inner  # the aliased / ordered expression
        self._order = order  # "ASC" | "DESC" (with optional " NULLS FIRST|LAST")
        self._udf = udf  # (wrapper, args) of a Python UDF call

    # ------------------------------------------------------------------ rendering
    def _render(self, ctx: RenderCtx) -> str:
        return self._render_fn(ctx)

    def _output_name(self) -> str | None:
        """The column name a select gives this expression, when it is known without binding."""
        if self._names:
            return self._names[0]
        return self._column

    def __str__(self) -> str:
        return self._render(RenderCtx())

    def __repr__(self) -> str:
        return f"Expression({self})"

    __hash__ = object.__hash__

    # ------------------------------------------------------------------ operators
    def __add__(self, o: Any) -> Expression:
        return _bin("+", self, o)

    def __radd__(self, o: Any) -> Expression:
        return _bin("+", o, self)

    def __sub__(self, o: Any) -> Expression:
        return _bin("-", self, o)

    def __rsub__(self, o: Any) -> Expression:
        return _bin("-", o, self)

    def __mul__(self, o: Any) -> Expression:
        return _bin("*", self, o)

    def __rmul__(self, o: Any) -> Expression:
        return _bin("*", o, self)

    def __truediv__(self, o: Any) -> Expression:
        return _bin("/", self, o)

    def __rtruediv__(self, o: Any) -> Expression:
        return _bin("/", o, self)

    def __mod__(self, o: Any) -> Expression:
        return _fn("MOD", self, o)

    def __rmod__(self, o: Any) -> Expression:
        return _fn("MOD", o, self)

    def __pow__(self, o: Any) -> Expression:
        return _fn("POWER", self, o)

    def __rpow__(self, o: Any) -> Expression:
        return _fn("POWER", o, self)

    def __neg__(self) -> Expression:
        a = _e(self)
        return Expression(lambda c: f"(- {a._render(c)})")

    def __pos__(self) -> Expression:
        return self

    def __abs__(self) -> Expression:
        return _fn("ABS", self)

    def __eq__(self, o: Any) -> Expression:  # type: ignore[override]
        return _bin("=", self, o)

    def __ne__(self, o: Any) -> Expression:  # type: ignore[override]
        return _bin("<>", self, o)

    def __lt__(self, o: Any) -> Expression:
        return _bin("<", self, o)

    def __le__(self, o: Any) -> Expression:
        return _bin("<=", self, o)

    def __gt__(self, o: Any) -> Expression:
        return _bin(">", self, o)

    def __ge__(self, o: Any) -> Expression:
        return _bin(">=", self, o)

    def __and__(self, o: Any) -> Expression:
        return _bin("AND", self, o)

    def __rand__(self, o: Any) -> Expression:
        return _bin("AND", o, self)

    def __or__(self, o: Any) -> Expression:
        return _bin("OR", self, o)

    def __ror__(self, o: Any) -> Expression:
        return _bin("OR", o, self)

    def __invert__(self) -> Expression:
        # PyFlink maps `~` to isNotTrue (NULL → TRUE), not to SQL's three-valued NOT.
        return _post(self, "IS NOT TRUE")

    def __bool__(self) -> bool:
        raise TypeError(
            "an Expression has no truth value: use & | ~ instead of and/or/not, and parenthesize comparisons"
        )

    def __getitem__(self, index: Any) -> Expression:
        return self.at(index)

    def __getattr__(self, name: str) -> Expression:
        """`col('r').x` reads field x of a ROW (PyFlink's `get`)."""
        if name.startswith("_"):
            raise AttributeError(name)
        return self.get(name)

    # ------------------------------------------------------------------ naming, casting, ordering
    def alias(self, name: str, *extra_names: str) -> Expression:
        inner = self._inner if self._names and self._inner is not None else self
        return Expression(
            lambda c: f"{inner._render(c)} AS {quote(name)}",
            names=(name, *extra_names),
            inner=inner,
            agg=inner._agg,
            udf=inner._udf,
            column=inner._column,
        )

    def cast(self, data_type: DataType) -> Expression:
        a = self
        return Expression(lambda c: f"CAST({a._render(c)} AS {type_sql(data_type)})")

    def try_cast(self, data_type: DataType) -> Expression:
        a = self
        return Expression(lambda c: f"TRY_CAST({a._render(c)} AS {type_sql(data_type)})")

    @property
    def asc(self) -> Expression:
        a = self
        return Expression(lambda c: f"{a._render(c)} ASC", order="ASC", inner=a)

    @property
    def desc(self) -> Expression:
        a = self
        return Expression(lambda c: f"{a._render(c)} DESC", order="DESC", inner=a)

    @property
    def nulls_first(self) -> Expression:
        a = self
        return Expression(lambda c: f"{a._render(c)} NULLS FIRST", order="NULLS FIRST", inner=a)

    @property
    def nulls_last(self) -> Expression:
        a = self
        return Expression(lambda c: f"{a._render(c)} NULLS LAST", order="NULLS LAST", inner=a)

    # ------------------------------------------------------------------ predicates
    @property
    def is_null(self) -> Expression:
        return _post(self, "IS NULL")

    @property
    def is_not_null(self) -> Expression:
        return _post(self, "IS NOT NULL")

    @property
    def is_true(self) -> Expression:
        return _post(self, "IS TRUE")

    @property
    def is_false(self) -> Expression:
        return _post(self, "IS FALSE")

    @property
    def is_not_true(self) -> Expression:
        return _post(self, "IS NOT TRUE")

    @property
    def is_not_false(self) -> Expression:
        return _post(self, "IS NOT FALSE")

    def between(self, lower: Any, upper: Any) -> Expression:
        a, lo, hi = self, _e(lower), _e(upper)
        return Expression(lambda c: f"({a._render(c)} BETWEEN {lo._render(c)} AND {hi._render(c)})")

    def not_between(self, lower: Any, upper: Any) -> Expression:
        a, lo, hi = self, _e(lower), _e(upper)
        return Expression(lambda c: f"({a._render(c)} NOT BETWEEN {lo._render(c)} AND {hi._render(c)})")

    def in_(self, first: Any, *rest: Any) -> Expression:
        from streamsql.table import Table

        a = self
        if isinstance(first, Table):
            sub = first
            return Expression(lambda c: f"({a._render(c)} IN ({sub._sql_for(c)}))")
        items = [_e(x) for x in (first, *rest)]
        return Expression(lambda c: f"({a._render(c)} IN ({', '.join(i._render(c) for i in items)}))")

    def like(self, pattern: Any, escape: Any = None) -> Expression:
        a, p = self, _e(pattern)
        esc = "" if escape is None else f" ESCAPE {_e(escape)._render(RenderCtx())}"
        return Expression(lambda c: f"({a._render(c)} LIKE {p._render(c)}{esc})")

    def similar(self, pattern: Any) -> Expression:
        a, p = self, _e(pattern)
        return Expression(lambda c: f"({a._render(c)} SIMILAR TO {p._render(c)})")

    def is_distinct_from(self, other: Any) -> Expression:
        return _bin("IS DISTINCT FROM", self, other)

    def is_not_distinct_from(self, other: Any) -> Expression:
        return _bin("IS NOT DISTINCT FROM", self, other)

    # ------------------------------------------------------------------ conditionals
    def then(self, if_true: Any, if_false: Any) -> Expression:
        return if_then_else(self, if_true, if_false)

    def if_null(self, replacement: Any) -> Expression:
        return _fn("IFNULL", self, replacement)

    # ------------------------------------------------------------------ temporal
    @property
    def to_date(self) -> Expression:
        return _fn("TO_DATE", self)

    @property
    def to_timestamp(self) -> Expression:
        return _fn("TO_TIMESTAMP", self)

    @property
    def to_time(self) -> Expression:
        return self.cast(_types().TIME(0))

    def extract(self, unit: TimeIntervalUnit | str) -> Expression:
        a = self
        return Expression(lambda c: f"EXTRACT({_unit(unit)} FROM {a._render(c)})")

    def date_format(self, fmt: Any) -> Expression:
        return _fn("DATE_FORMAT", self, fmt)

    # interval literals: lit(10).seconds
    def _interval_of(self, unit: str, factor: int = 1) -> Expression:
        amount = getattr(self, "_literal", None)
        if not isinstance(amount, int) or isinstance(amount, bool):
            a = self
            return Expression(lambda c: f"({a._render(c)} * INTERVAL '{factor}' {unit})")
        n = amount * factor
        if unit == "MILLISECOND":
            text = f"INTERVAL '{n / 1000:.3f}' SECOND"
            return Expression(lambda c: text, interval=(n, "MILLISECOND"))
        text = f"INTERVAL '{n}' {unit}"
        return Expression(lambda c: text, interval=(n, unit))

    @property
    def years(self) -> Expression:
        return self._interval_of("YEAR")

    year = years

    @property
    def quarters(self) -> Expression:
        return self._interval_of("MONTH", 3)

    quarter = quarters

    @property
    def months(self) -> Expression:
        return self._interval_of("MONTH")

    month = months

    @property
    def weeks(self) -> Expression:
        return self._interval_of("DAY", 7)

    week = weeks

    @property
    def days(self) -> Expression:
        return self._interval_of("DAY")

    day = days

    @property
    def hours(self) -> Expression:
        return self._interval_of("HOUR")

    hour = hours

    @property
    def minutes(self) -> Expression:
        return self._interval_of("MINUTE")

    minute = minutes

    @property
    def seconds(self) -> Expression:
        return self._interval_of("SECOND")

    second = seconds

    @property
    def millis(self) -> Expression:
        return self._interval_of("MILLISECOND")

    milli = millis

    # ------------------------------------------------------------------ windows
    def _window_prop(self, fn_suffix: str) -> Expression:
        a = self

        def render(c: RenderCtx) -> str:
            w = c.group_windows.get(a._column or "")
            if w is None:
                raise _validation(
                    f"Cannot resolve window property: '{a._column}' is not the alias of a group window "
                    "of this table (use .window(Tumble...alias('w')).group_by(col('w'), ...))."
                )
            kind, time_sql, intervals = w
            return f"{kind}_{fn_suffix}({time_sql}, {', '.join(intervals)})"

        return Expression(render, names=(), column=None)

    @property
    def start(self) -> Expression:
        return self._window_prop("START")

    @property
    def end(self) -> Expression:
        return self._window_prop("END")

    @property
    def rowtime(self) -> Expression:
        return self._window_prop("ROWTIME")

    @property
    def proctime(self) -> Expression:
        return self._window_prop("PROCTIME")

    def over(self, alias: Any) -> Expression:
        a = self
        name = alias._column if isinstance(alias, Expression) else str(alias)

        def render(c: RenderCtx) -> str:
            spec = c.over_windows.get(name or "")
            if spec is None:
                raise _validation(
                    f"Over window alias '{name}' is not defined; use table.over_window(Over...alias('{name}'))"
                )
            return f"{a._render(c)} OVER {spec}"

        return Expression(render)


# ---------------------------------------------------------------------- builders
def _types() -> Any:
    from streamsql.udf import DataTypes

    return DataTypes


def _validation(msg: str) -> Exception:
    from planner.errors import SqlValidationError

    return SqlValidationError(msg)


def _unit(unit: Any) -> str:
    return unit.value if isinstance(unit, Enum) else str(unit).upper()


def _e(v: Any) -> Expression:
    return v if isinstance(v, Expression) else lit(v)


def _bin(op: str, left: Any, right: Any) -> Expression:
    a, b = _e(left), _e(right)
    return Expression(lambda c: f"({a._render(c)} {op} {b._render(c)})")


def _post(a: Expression, suffix: str) -> Expression:
    return Expression(lambda c: f"({a._render(c)} {suffix})")


def _fn(name: str, *args: Any) -> Expression:
    exprs = [_e(a) for a in args]
    return Expression(lambda c: f"{name}({', '.join(e._render(c) for e in exprs)})")


def _agg_expr(fn: str, args: tuple[Expression, ...], distinct: bool) -> Expression:
    def render(c: RenderCtx) -> str:
        inner = ", ".join(a._render(c) for a in args)
        if fn == "COUNT" and len(args) == 1 and args[0]._column == "*":
            inner = "*"
        return f"{fn}({'DISTINCT ' if distinct else ''}{inner})"

    return Expression(render, agg=(fn, args, distinct))


def col(name: str) -> Expression:
    """A column reference; `col('*')` selects all columns."""
    if name == "*":
        return Expression(lambda c: "*", column="*")
    return Expression(lambda c: _col_sql(c, name), column=name)


def _col_sql(c: RenderCtx, name: str) -> str:
    w = c.group_windows.get(name)
    if w is not None:  # the group window itself, in group_by(col('w'), ...)
        kind, time_sql, intervals = w
        return f"{kind}({time_sql}, {', '.join(intervals)})"
    return quote(name)


def _literal_sql(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            text = "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
            return f"CAST('{text}' AS DOUBLE)"
        r = repr(v)
        return r.upper() if "e" in r else f"{r}E0"
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    if isinstance(v, datetime.datetime):
        return f"TIMESTAMP '{v.isoformat(sep=' ')}'"
    if isinstance(v, datetime.date):
        return f"DATE '{v.isoformat()}'"
    if isinstance(v, datetime.time):
        return f"TIME '{v.isoformat()}'"
    if isinstance(v, (list, tuple)):
        return "ARRAY[" + ", ".join(_literal_sql(x) for x in v) + "]"
    if isinstance(v, dict):
        return "MAP[" + ", ".join(f"{_literal_sql(k)}, {_literal_sql(x)}" for k, x in v.items()) + "]"
    raise TypeError(f"cannot use {type(v).__name__} value {v!r} as a literal")


def lit(v: Any, data_type: DataType | None = None) -> Expression:
    """A literal (typed like the same SQL literal; `data_type` casts it)."""
    if isinstance(v, Expression):
        return v
    text = _literal_sql(v)
    if data_type is not None:
        text = f"CAST({text} AS {type_sql(data_type)})"
    e = Expression(lambda c: text)
    e._literal = v  # type: ignore[attr-defined] # for interval literals: lit(10).seconds
    return e


def null_of(data_type: DataType) -> Expression:
    return lit(None, data_type)


def call(f: Any, *args: Any) -> Expression:
    """A call of a built-in or registered function by name, or of a Python UDF object."""
    if not isinstance(f, str):
        return udf_call(f, args)
    name = f
    exprs = [_e(a) for a in args]
    return Expression(lambda c: f"{name}({', '.join(e._render(c) for e in exprs)})")


def call_sql(sql_expression: str) -> Expression:
    """A SQL expression given as text (Flink's `callSql`)."""
    return Expression(lambda c: f"({sql_expression})")


def udf_call(wrapper: Any, args: tuple[Any, ...]) -> Expression:
    """A call of a Python UDF: registered in the environment's catalog when the expression is
    used, then called by that name."""
    exprs = tuple(_e(a) for a in args)

    def render(c: RenderCtx) -> str:
        if c.register_udf is None:
            name = getattr(wrapper, "__name__", "udf")
        else:
            name = c.register_udf(wrapper)
        return f"{name}({', '.join(e._render(c) for e in exprs)})"

    kind = getattr(_spec(wrapper), "kind", "scalar")
    return Expression(render, udf=(wrapper, exprs), agg=("UDAF", exprs, False) if kind == "aggregate" else None)


def _spec(wrapper: Any) -> Any:
    from runtime.udf_registry import SPEC_ATTR

    return getattr(wrapper, SPEC_ATTR, None)


def if_then_else(condition: Any, if_true: Any, if_false: Any) -> Expression:
    c_, t, f = _e(condition), _e(if_true), _e(if_false)
    return Expression(lambda c: f"(CASE WHEN {c_._render(c)} THEN {t._render(c)} ELSE {f._render(c)} END)")


def and_(first: Any, *rest: Any) -> Expression:
    out = _e(first)
    for r in rest:
        out = _bin("AND", out, r)
    return out


def or_(first: Any, *rest: Any) -> Expression:
    out = _e(first)
    for r in rest:
        out = _bin("OR", out, r)
    return out


def not_(expression: Any) -> Expression:
    a = _e(expression)
    return Expression(lambda c: f"(NOT {a._render(c)})")


def row(*args: Any) -> Expression:
    return _fn("ROW", *args)


def array(*args: Any) -> Expression:
    exprs = [_e(a) for a in args]
    return Expression(lambda c: "ARRAY[" + ", ".join(e._render(c) for e in exprs) + "]")


def map_(key: Any, value: Any, *rest: Any) -> Expression:
    exprs = [_e(a) for a in (key, value, *rest)]
    if len(exprs) % 2:
        raise ValueError("map_ takes key, value pairs")
    return Expression(lambda c: "MAP[" + ", ".join(e._render(c) for e in exprs) + "]")


def concat(first: Any, *rest: Any) -> Expression:
    return _fn("CONCAT", first, *rest)


def coalesce(*args: Any) -> Expression:
    return _fn("COALESCE", *args)


def current_timestamp() -> Expression:
    return Expression(lambda c: "CURRENT_TIMESTAMP")


def current_date() -> Expression:
    return Expression(lambda c: "CURRENT_DATE")


def local_timestamp() -> Expression:
    return Expression(lambda c: "LOCALTIMESTAMP")


def row_interval(rows: int) -> Expression:
    """A count of rows for over windows: `Over...preceding(row_interval(2))`."""
    return Expression(lambda c: str(rows), rows=rows)


def with_columns(*names: Any) -> list[Expression]:
    """PyFlink's with_columns(col('a'), col('b')): the columns as a list (ranges unsupported)."""
    return [n if isinstance(n, Expression) else col(str(n)) for n in names]


UNBOUNDED_ROW = Expression(lambda c: "UNBOUNDED", special="UNBOUNDED_ROW")
UNBOUNDED_RANGE = Expression(lambda c: "UNBOUNDED", special="UNBOUNDED_RANGE")
CURRENT_ROW = Expression(lambda c: "CURRENT ROW", special="CURRENT_ROW")
CURRENT_RANGE = Expression(lambda c: "CURRENT ROW", special="CURRENT_RANGE")


def to_expressions(items: tuple[Any, ...]) -> list[Expression]:
    """Arguments of select & co: Expressions, or strings taken as SQL expression text."""
    out: list[Expression] = []
    for it in items:
        if isinstance(it, Expression):
            out.append(it)
        elif isinstance(it, str):
            out.append(col(it) if it.isidentifier() else call_sql_plain(it))
        elif isinstance(it, (list, tuple)):
            out.extend(to_expressions(tuple(it)))
        else:
            raise TypeError(f"expected an Expression, got {type(it).__name__}")
    return out


def call_sql_plain(text: str) -> Expression:
    """Unparenthesized SQL text (it may hold `AS alias` or a list)."""
    return Expression(lambda c: text)


def _install_udf_call_hook() -> None:
    """Calling a UDF wrapper with Expression arguments builds a call expression (PyFlink's
    `my_udf(col('a'))`), while plain Python values still call the function directly."""
    from streamsql.udf import UserDefinedFunctionWrapper

    original = UserDefinedFunctionWrapper.__call__
    if getattr(original, "_streamsql_expr_hook", False):
        return

    def __call__(self: Any, *args: Any) -> Any:  # noqa: N807
        if any(isinstance(a, Expression) for a in args):
            return udf_call(self, args)
        return original(self, *args)

    __call__._streamsql_expr_hook = True  # type: ignore[attr-defined]
    UserDefinedFunctionWrapper.__call__ = __call__  # type: ignore[method-assign]


_install_udf_call_hook()
