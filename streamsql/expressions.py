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
from dataclasses import field
from enum import Enum
from typing import Any, Protocol, runtime_checkable

from runtime.frozen import mutable_dataclass
from runtime.types import DataType
from streamsql.expression_enums import JsonOnNull, TimeIntervalUnit, TimePointUnit
from streamsql.expression_methods import FunctionMethods
from streamsql.sql_text import quote

__all__ = [
    "CURRENT_RANGE",
    "JsonOnNull",
    "atan2",
    "concat_ws",
    "convert_tz",
    "current_database",
    "current_time",
    "current_watermark",
    "date_format",
    "descriptor",
    "e",
    "from_unixtime",
    "json",
    "json_array",
    "json_array_agg",
    "json_object",
    "json_object_agg",
    "json_string",
    "local_time",
    "log",
    "negative",
    "pi",
    "rand",
    "rand_integer",
    "range_",
    "source_watermark",
    "temporal_overlaps",
    "timestamp_diff",
    "to_date",
    "to_timestamp",
    "to_timestamp_ltz",
    "unix_timestamp",
    "uuid",
    "without_columns",
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


@mutable_dataclass
class RenderCtx:
    """What an expression's SQL depends on besides itself (see the module docstring)."""

    # alias → (window function name, time column SQL, interval SQLs): ('TUMBLE', '`ts`', ["INTERVAL ..."])
    group_windows: dict[str, tuple[str, str, list[str]]] = field(default_factory=dict)
    # alias → the OVER (...) specification text
    over_windows: dict[str, str] = field(default_factory=dict)
    # registers a Python UDF and returns the name to call it by
    register_udf: Callable[[Any], str] | None = None


def type_sql(dt: DataType) -> str:
    """A DataType as SQL type text (time attribute markers dropped)."""
    return str(dt).replace(" *ROWTIME*", "").replace(" *PROCTIME*", "")


_INTERVAL_MS = {"SECOND": 1000, "MINUTE": 60_000, "HOUR": 3_600_000, "DAY": 86_400_000}


@runtime_checkable
class SubqueryTable(Protocol):
    """What `Expression.in_` needs of a Table (streamsql.table.Table) on its right side: its
    query as SQL. A protocol, so this module does not import streamsql.table (which builds
    on expressions)."""

    def _sql_for(self, ctx: RenderCtx | None = None) -> str: ...


# A RenderCtx group window of this kind renders `w.start` / `w.end` / `w.rowtime` /
# `w.proctime` as a column `<time_sql><property>` of the input: the select after a window
# `aggregate(...)` reads the properties the windowed select computed (streamsql.table).
WINDOW_PROPERTY_COLUMNS = "$columns"


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

    def __getattr__(self, name: str) -> Any:
        """An unknown method name is an error naming PyFlink's closest method (a ROW's field
        is read with `get('x')`, as in PyFlink): taking it as a field access would turn a
        typo into "'Expression' object is not callable" far from the mistake."""
        if name.startswith("_"):
            raise AttributeError(name)
        import difflib

        known = sorted(n for n in dir(type(self)) if not n.startswith("_"))
        close = difflib.get_close_matches(name, known, n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise AttributeError(
            f"'Expression' object has no attribute '{name}'.{hint} (A ROW field is read with .get('{name}').)"
        )

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

    def between(self, lower_bound: Any, upper_bound: Any) -> Expression:
        a, lo, hi = self, _e(lower_bound), _e(upper_bound)
        return Expression(lambda c: f"({a._render(c)} BETWEEN {lo._render(c)} AND {hi._render(c)})")

    def not_between(self, lower_bound: Any, upper_bound: Any) -> Expression:
        a, lo, hi = self, _e(lower_bound), _e(upper_bound)
        return Expression(lambda c: f"({a._render(c)} NOT BETWEEN {lo._render(c)} AND {hi._render(c)})")

    def in_(self, first_element_or_table: Any, *remaining_elements: Any) -> Expression:
        a = self
        first, rest = first_element_or_table, remaining_elements
        if isinstance(first, SubqueryTable):
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

    def if_null(self, null_replacement: Any) -> Expression:
        return _fn("IFNULL", self, null_replacement)

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

    def extract(self, time_interval_unit: TimeIntervalUnit | str) -> Expression:
        a = self
        return Expression(lambda c: f"EXTRACT({_unit(time_interval_unit)} FROM {a._render(c)})")

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
            if kind == WINDOW_PROPERTY_COLUMNS:  # computed below and passed up as columns `<prefix><suffix>`
                return quote(f"{time_sql}{fn_suffix.lower()}")
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


def and_(predicate0: Any, predicate1: Any = None, *predicates: Any) -> Expression:
    out = _e(predicate0)
    for r in (predicate1, *predicates) if predicate1 is not None else predicates:
        out = _bin("AND", out, r)
    return out


def or_(predicate0: Any, predicate1: Any = None, *predicates: Any) -> Expression:
    out = _e(predicate0)
    for r in (predicate1, *predicates) if predicate1 is not None else predicates:
        out = _bin("OR", out, r)
    return out


def not_(expression: Any) -> Expression:
    a = _e(expression)
    return Expression(lambda c: f"(NOT {a._render(c)})")


def row(head: Any, *tail: Any) -> Expression:
    return _fn("ROW", head, *tail)


def array(head: Any, *tail: Any) -> Expression:
    exprs = [_e(a) for a in (head, *tail)]
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


def range_(start: str | int, end: str | int) -> Expression:
    """A range of columns for `with_columns` / `without_columns`: by 1-based position or by
    name, both ends included (PyFlink's `range_`)."""
    e = Expression(lambda c: f"range_({start!r}, {end!r})")
    e._range = (start, end)  # type: ignore[attr-defined]
    return e


def _selection(without: bool, items: tuple[Any, ...]) -> Expression:
    def render(c: RenderCtx) -> str:
        raise _validation("with_columns / without_columns can only be used where a table's columns are listed")

    e = Expression(render)
    e._selection = (without, items)  # type: ignore[attr-defined]
    return e


def with_columns(head: Any, *tails: Any) -> Expression:
    """These columns (names, `col`s, 1-based positions or `range_`s), in this order."""
    return _selection(False, (head, *tails))


def without_columns(head: Any, *tails: Any) -> Expression:
    """Every column of the input except these (names, `col`s, positions or `range_`s)."""
    return _selection(True, (head, *tails))


def _select_columns(items: tuple[Any, ...], columns: list[str]) -> list[str]:
    """The column names a with_columns / without_columns item list stands for."""

    def index_of(v: str | int) -> int:
        if isinstance(v, int):
            if not 1 <= v <= len(columns):
                raise _validation(f"column index {v} is out of range: the input has {len(columns)} columns")
            return v - 1
        if v not in columns:
            raise _validation(f"Column '{v}' not found; the input has columns {', '.join(columns)}")
        return columns.index(v)

    out: list[str] = []
    for it in items:
        rng = getattr(it, "_range", None) if isinstance(it, Expression) else None
        if rng is not None:
            lo, hi = index_of(rng[0]), index_of(rng[1])
            out.extend(columns[lo : hi + 1])
        elif isinstance(it, Expression) and it._column is not None:
            out.append(columns[index_of(it._column)])
        elif isinstance(it, (str, int)):
            out.append(columns[index_of(it)])
        else:
            raise _validation(f"with_columns / without_columns take names, col()s, positions or range_()s, not {it}")
    return out


def current_database() -> Expression:
    return Expression(lambda c: "CURRENT_DATABASE()")


def current_time() -> Expression:
    return Expression(lambda c: "CURRENT_TIME")


def local_time() -> Expression:
    return Expression(lambda c: "LOCALTIME")


def current_watermark(rowtimeAttribute: Any) -> Expression:  # noqa: N803 - PyFlink's parameter name
    return _fn("CURRENT_WATERMARK", rowtimeAttribute)


def source_watermark() -> Expression:
    """SOURCE_WATERMARK(): the watermark strategy of the source (used in a schema's watermark)."""
    return Expression(lambda c: "SOURCE_WATERMARK()")


def temporal_overlaps(
    left_time_point: Any, left_temporal: Any, right_time_point: Any, right_temporal: Any
) -> Expression:
    a, b, c_, d = (_e(x) for x in (left_time_point, left_temporal, right_time_point, right_temporal))
    return Expression(lambda c: f"(({a._render(c)}, {b._render(c)}) OVERLAPS ({c_._render(c)}, {d._render(c)}))")


def date_format(timestamp: Any, format: Any) -> Expression:  # noqa: A002 - PyFlink's parameter name
    return _fn("DATE_FORMAT", timestamp, format)


def timestamp_diff(time_point_unit: TimePointUnit, time_point1: Any, time_point2: Any) -> Expression:
    a, b = _e(time_point1), _e(time_point2)
    return Expression(lambda c: f"TIMESTAMPDIFF({_unit(time_point_unit)}, {a._render(c)}, {b._render(c)})")


def convert_tz(date_str: Any, tz_from: Any, tz_to: Any) -> Expression:
    return _fn("CONVERT_TZ", date_str, tz_from, tz_to)


def from_unixtime(unixtime: Any, format: Any = None) -> Expression:  # noqa: A002
    return _fn("FROM_UNIXTIME", unixtime) if format is None else _fn("FROM_UNIXTIME", unixtime, format)


def unix_timestamp(date_str: Any = None, format: Any = None) -> Expression:  # noqa: A002
    if date_str is None:
        return Expression(lambda c: "UNIX_TIMESTAMP()")
    return _fn("UNIX_TIMESTAMP", date_str) if format is None else _fn("UNIX_TIMESTAMP", date_str, format)


def to_date(date_str: Any, format: Any = None) -> Expression:  # noqa: A002
    return _fn("TO_DATE", date_str) if format is None else _fn("TO_DATE", date_str, format)


def to_timestamp(timestamp_str: Any, format: Any = None) -> Expression:  # noqa: A002
    return _fn("TO_TIMESTAMP", timestamp_str) if format is None else _fn("TO_TIMESTAMP", timestamp_str, format)


def to_timestamp_ltz(*args: Any) -> Expression:
    """TO_TIMESTAMP_LTZ(numeric, precision) or TO_TIMESTAMP_LTZ(string[, format[, time zone]])."""
    if not 1 <= len(args) <= 3:
        raise TypeError(f"to_timestamp_ltz takes 1 to 3 arguments ({len(args)} given)")
    return _fn("TO_TIMESTAMP_LTZ", *args)


def pi() -> Expression:
    return Expression(lambda c: "PI()")


def e() -> Expression:
    return Expression(lambda c: "E()")


def rand(seed: Any = None) -> Expression:
    return Expression(lambda c: "RAND()") if seed is None else _fn("RAND", seed)


def rand_integer(bound: Any, seed: Any = None) -> Expression:
    return _fn("RAND_INTEGER", bound) if seed is None else _fn("RAND_INTEGER", seed, bound)


def atan2(y: Any, x: Any) -> Expression:
    return _fn("ATAN2", y, x)


def negative(v: Any) -> Expression:
    a = _e(v)
    return Expression(lambda c: f"(- {a._render(c)})")


def concat_ws(separator: Any, first: Any, *others: Any) -> Expression:
    return _fn("CONCAT_WS", separator, first, *others)


def uuid() -> Expression:
    return Expression(lambda c: "UUID()")


def log(v: Any, base: Any = None) -> Expression:
    return _fn("LOG", v) if base is None else _fn("LOG", base, v)


def json(value: Any) -> Expression:
    """JSON(value): a string taken as raw JSON inside json_object / json_array."""
    return _fn("JSON", value)


def json_string(value: Any) -> Expression:
    return _fn("JSON_STRING", value)


def json_object(on_null: JsonOnNull = JsonOnNull.NULL, *args: Any) -> Expression:
    """JSON_OBJECT(KEY k VALUE v, ... {NULL|ABSENT} ON NULL) from alternating keys and values."""
    if len(args) % 2:
        raise TypeError("json_object takes key, value pairs after on_null")
    pairs = [(_e(args[i]), _e(args[i + 1])) for i in range(0, len(args), 2)]
    return Expression(
        lambda c: (
            "JSON_OBJECT("
            + ", ".join(f"KEY {k._render(c)} VALUE {v._render(c)}" for k, v in pairs)
            + f"{' ' if pairs else ''}{on_null.value} ON NULL)"
        )
    )


def json_array(on_null: JsonOnNull = JsonOnNull.ABSENT, *args: Any) -> Expression:
    items = [_e(a) for a in args]
    return Expression(
        lambda c: (
            "JSON_ARRAY(" + ", ".join(i._render(c) for i in items) + f"{' ' if items else ''}{on_null.value} ON NULL)"
        )
    )


def json_object_agg(on_null: JsonOnNull, key_expr: Any, value_expr: Any) -> Expression:
    k, v = _e(key_expr), _e(value_expr)

    def render(c: RenderCtx) -> str:
        return f"JSON_OBJECTAGG(KEY {k._render(c)} VALUE {v._render(c)} {on_null.value} ON NULL)"

    return Expression(render, agg=("JSON_OBJECTAGG", (k, v), False))


def json_array_agg(on_null: JsonOnNull, item_expr: Any) -> Expression:
    i = _e(item_expr)

    def render(c: RenderCtx) -> str:
        return f"JSON_ARRAYAGG({i._render(c)} {on_null.value} ON NULL)"

    return Expression(render, agg=("JSON_ARRAYAGG", (i,), False))


def descriptor(*column_names: str) -> Expression:
    """DESCRIPTOR(col, ...): the time column argument of a window table function."""
    return Expression(lambda c: "DESCRIPTOR(" + ", ".join(quote(n) for n in column_names) + ")")


UNBOUNDED_ROW = Expression(lambda c: "UNBOUNDED", special="UNBOUNDED_ROW")
UNBOUNDED_RANGE = Expression(lambda c: "UNBOUNDED", special="UNBOUNDED_RANGE")
CURRENT_ROW = Expression(lambda c: "CURRENT ROW", special="CURRENT_ROW")
CURRENT_RANGE = Expression(lambda c: "CURRENT ROW", special="CURRENT_RANGE")


def to_expressions(items: tuple[Any, ...], columns: Callable[[], list[str]] | None = None) -> list[Expression]:
    """Arguments of select & co: Expressions, or strings taken as SQL expression text.
    `columns` gives the input's column names, for `with_columns` / `without_columns`."""
    out: list[Expression] = []
    for it in items:
        sel = getattr(it, "_selection", None) if isinstance(it, Expression) else None
        if sel is not None:
            if columns is None:
                raise _validation("with_columns / without_columns can only be used where a table's columns are listed")
            names = columns()
            picked = _select_columns(sel[1], names)
            out.extend(col(n) for n in ([n for n in names if n not in picked] if sel[0] else picked))
        elif isinstance(it, Expression):
            out.append(it)
        elif isinstance(it, str):
            out.append(col(it) if it.isidentifier() else call_sql_plain(it))
        elif isinstance(it, (list, tuple)):
            out.extend(to_expressions(tuple(it), columns))
        else:
            raise TypeError(f"expected an Expression, got {type(it).__name__}")
    return out


def call_sql_plain(text: str) -> Expression:
    """Unparenthesized SQL text (it may hold `AS alias` or a list)."""
    return Expression(lambda c: text, special="SQL_TEXT")


def with_default_names(exprs: list[Expression]) -> list[Expression]:
    """Flink's Table API names each unnamed expression of a projection `EXPR$0`, `EXPR$1`,
    ... counting only the unnamed ones (SQL instead numbers them by their position in the
    SELECT list); column references keep their column's name."""
    out: list[Expression] = []
    n = 0
    for e in exprs:
        if e._names or e._column is not None or e._special is not None or e._order is not None:
            out.append(e)
        else:
            out.append(e.alias(f"EXPR${n}"))
            n += 1
    return out


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
