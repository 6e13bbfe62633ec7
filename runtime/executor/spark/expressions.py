"""Expression IR → PySpark Columns, one canonical function at a time.

`FUNCTIONS` is the table of supported canonical names: each maps to a builder that makes a
Spark Column with Flink's semantics for that function (NULL handling, result type, rounding),
casting to the binder's result type where Spark's own typing differs (integer division,
FLOOR of a DOUBLE, ...). A name outside the table, or a form of a supported function whose
Spark counterpart differs (a non-literal LIKE pattern, CAST of a DOUBLE to STRING, ...),
is refused by `check_expr` before the job starts, naming the function.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

from runtime.executor.spark import functions_more as more
from runtime.executor.spark import text_time as tt
from runtime.executor.spark.types import SparkUnsupportedError, check_type, spark_type
from runtime.expr.ir import Call, Expr, InputRef, Literal
from runtime.sink_constraints import not_null_violation
from runtime.types import DataType

Builder = Callable[[list[Any], Call, "Ctx"], Any]


class Ctx:
    """What a builder may need besides its arguments: the session time zone."""

    def __init__(self, time_zone: str = "UTC") -> None:
        self.time_zone = time_zone


def _f() -> Any:
    from pyspark.sql import functions as F  # noqa: N812 - PySpark's own convention

    return F


def _as(col: Any, t: DataType) -> Any:
    return col.cast(spark_type(t))


def literal(value: Any, t: DataType) -> Any:
    """A Literal's value (encoded as runtime/expr/ir.py describes) as a typed Spark Column."""
    F = _f()  # noqa: N806
    if value is None or t.name == "NULL":
        return F.lit(None) if t.name == "NULL" else F.lit(None).cast(spark_type(t))
    n = t.name
    if n == "DECIMAL":
        return F.lit(Decimal(str(value))).cast(spark_type(t))
    if n == "DATE":
        return F.lit(datetime.date(1970, 1, 1) + datetime.timedelta(days=int(value)))
    if n in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        unit = {"ms": 1000, "us": 1, "ns": 0}[t.to_arrow().unit]
        micros = int(value) // 1000 if unit == 0 else int(value) * unit
        return F.timestamp_micros(F.lit(micros))
    if n == "INTERVAL_DAY_TIME":
        return F.make_dt_interval(secs=F.lit(Decimal(int(value)) / 1000))
    if n == "INTERVAL_YEAR_MONTH":
        return F.make_ym_interval(F.lit(0), F.lit(int(value)))
    return F.lit(value).cast(spark_type(t))


# ----------------------------------------------------------------------------- builders
def _arith(op: str) -> Builder:
    def build(a: list[Any], c: Call, ctx: Ctx) -> Any:
        x, y = a
        if c.type.name in ("TIMESTAMP", "TIMESTAMP_LTZ", "DATE"):
            return x + y if op == "+" else x - y
        r = {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y}[op]()
        return _as(r, c.type)

    return build


def _divide(a: list[Any], c: Call, ctx: Ctx) -> Any:
    F = _f()  # noqa: N806
    if c.type.is_integer:  # Java integer division: truncates toward zero
        r = _as(F.call_function("div", a[0], a[1]), c.type)
    else:
        r = _as(a[0] / a[1], c.type)
    if c.args[1].type.is_integer or c.args[1].type.name == "DECIMAL":  # Flink: ArithmeticException
        return F.when(
            a[1] == 0, F.raise_error(F.lit("ArithmeticException: / by zero")).cast(spark_type(c.type))
        ).otherwise(r)
    return r


def _mod(a: list[Any], c: Call, ctx: Ctx) -> Any:
    return _as(a[0] % a[1], c.type)  # Spark's % is Java's remainder (sign of the dividend)


def _cmp(op: str) -> Builder:
    ops = {
        "equals": lambda x, y: x == y,
        "not_equals": lambda x, y: x != y,
        "less_than": lambda x, y: x < y,
        "less_than_or_equal": lambda x, y: x <= y,
        "greater_than": lambda x, y: x > y,
        "greater_than_or_equal": lambda x, y: x >= y,
    }

    def build(a: list[Any], c: Call, ctx: Ctx) -> Any:
        return ops[op](a[0], a[1])

    return build


def _and(a: list[Any], c: Call, ctx: Ctx) -> Any:
    out = a[0]
    for x in a[1:]:
        out = out & x
    return out


def _or(a: list[Any], c: Call, ctx: Ctx) -> Any:
    out = a[0]
    for x in a[1:]:
        out = out | x
    return out


def _case(a: list[Any], c: Call, ctx: Ctx) -> Any:
    F = _f()  # noqa: N806
    out = F.when(a[0], _as(a[1], c.type))
    i = 2
    while i + 1 < len(a):
        out = out.when(a[i], _as(a[i + 1], c.type))
        i += 2
    return out.otherwise(_as(a[-1], c.type)) if len(a) % 2 == 1 else out


def _cast(a: list[Any], c: Call, ctx: Ctx) -> Any:
    src = c.args[0].type
    dst = c.type
    x = a[0]
    F = _f()  # noqa: N806
    if dst.is_string:
        if src.name == "BOOLEAN":
            return F.upper(x.cast("string"))
        if src.name == "TIMESTAMP" or src.name == "TIMESTAMP_LTZ":
            if src.name == "TIMESTAMP_LTZ":
                x = F.from_utc_timestamp(x, ctx.time_zone)
            p = src.precision if src.precision is not None else 6
            return F.date_format(x, "yyyy-MM-dd HH:mm:ss" + ("." + "S" * min(p, 6) if p else ""))
        if src.name == "TIME":
            return tt.time_to_string(x, src)
        return x.cast("string")
    if src.name == "TIMESTAMP" and dst.name == "TIMESTAMP_LTZ":
        return F.to_utc_timestamp(x, ctx.time_zone)
    if src.name == "TIMESTAMP_LTZ" and dst.name == "TIMESTAMP":
        return F.from_utc_timestamp(x, ctx.time_zone)
    if src.name == "TIMESTAMP_LTZ" and dst.name == "DATE":
        return F.from_utc_timestamp(x, ctx.time_zone).cast("date")
    if src.name == "TIMESTAMP" and dst.name == "DATE":  # truncating, as Flink 2.3 (cast.py `_to_date`)
        return F.date_from_unix_date(more.truncated_days(x))
    if src.is_string and dst.name in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return tt.cast_to_timestamp(x, dst, ctx, strict=True)
    if src.is_string and dst.name == "DATE":
        return tt.cast_to_date(x, dst, strict=True)
    if src.is_string and dst.name == "TIME":
        return tt.cast_to_time(x, dst, strict=True)
    if src.is_string and dst.name == "BOOLEAN":
        t = F.lower(F.trim(x))
        return (
            F.when(t.isin("true", "t", "yes", "y", "1"), True)
            .when(t.isin("false", "f", "no", "n", "0"), False)
            .otherwise(F.raise_error(F.concat(F.lit("CAST: cannot cast to BOOLEAN: "), x)).cast("boolean"))
        )
    out = x.cast(spark_type(dst))
    if src.is_string:  # Flink fails on text that does not parse; Spark (non-ANSI) gives NULL
        bad = F.concat(F.lit(f"CAST: cannot parse as {dst}: '"), x, F.lit("'"))
        return F.when(x.isNotNull() & out.isNull(), F.raise_error(bad).cast(spark_type(dst))).otherwise(out)
    return out


def _try_cast(a: list[Any], c: Call, ctx: Ctx) -> Any:
    """TRY_CAST: text that is no date / timestamp gives NULL (same parse as CAST)."""
    src, dst = c.args[0].type, c.type
    if src.is_string and dst.name in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return tt.cast_to_timestamp(a[0], dst, ctx, strict=False)
    if src.is_string and dst.name == "DATE":
        return tt.cast_to_date(a[0], dst, strict=False)
    if src.is_string and dst.name == "TIME":
        return tt.cast_to_time(a[0], dst, strict=False)
    return a[0].try_cast(spark_type(dst))


def _is(kind: str) -> Builder:
    def build(a: list[Any], c: Call, ctx: Ctx) -> Any:
        F = _f()  # noqa: N806
        x = a[0]
        return {
            "is_null": lambda: x.isNull(),
            "is_not_null": lambda: x.isNotNull(),
            "is_true": lambda: F.coalesce(x, F.lit(False)),
            "is_not_true": lambda: ~F.coalesce(x, F.lit(False)),
            "is_false": lambda: F.coalesce(~x, F.lit(False)),
            "is_not_false": lambda: ~F.coalesce(~x, F.lit(False)),
        }[kind]()

    return build


def _greatest_least(fn: str) -> Builder:
    def build(a: list[Any], c: Call, ctx: Ctx) -> Any:
        # Flink: NULL when any argument is NULL (Spark's GREATEST skips NULLs).
        F = _f()  # noqa: N806
        any_null = a[0].isNull()
        for x in a[1:]:
            any_null = any_null | x.isNull()
        args = [_as(x, c.type) for x in a]
        return F.when(any_null, F.lit(None).cast(spark_type(c.type))).otherwise(getattr(F, fn)(*args))

    return build


def _trim(fn: str) -> Builder:
    def build(a: list[Any], c: Call, ctx: Ctx) -> Any:
        F = _f()  # noqa: N806
        chars = a[1] if len(a) > 1 else F.lit(" ")
        return getattr(F, fn)(a[0], chars)

    return build


def _substring(a: list[Any], c: Call, ctx: Ctx) -> Any:
    F = _f()  # noqa: N806
    length = a[2] if len(a) > 2 else F.lit(2**31 - 1)
    return a[0].substr(a[1].cast("int"), length.cast("int"))


def _like(a: list[Any], c: Call, ctx: Ctx) -> Any:
    F = _f()  # noqa: N806
    if len(a) > 2:
        return F.like(a[0], a[1], a[2])
    # Flink's LIKE has no escape character unless one is given; Spark's default is '\'.
    return F.like(a[0], a[1], F.lit("\u0001"))


def _unary(fn: str, cast_result: bool = True) -> Builder:
    def build(a: list[Any], c: Call, ctx: Ctx) -> Any:
        r = getattr(_f(), fn)(*a)
        return _as(r, c.type) if cast_result else r

    return build


def _round(fn: str) -> Builder:
    def build(a: list[Any], c: Call, ctx: Ctx) -> Any:
        F = _f()  # noqa: N806
        digits = int(c.args[1].value) if len(c.args) > 1 else 0  # type: ignore[union-attr]
        if fn == "round":
            return _as(F.round(a[0], digits), c.type)
        # TRUNCATE: toward zero at `digits` decimals.
        scale = Decimal(10) ** digits
        x = a[0].cast("decimal(38,10)") if not c.args[0].type.name == "DECIMAL" else a[0]
        shifted = x * F.lit(scale)
        truncated = F.when(shifted < 0, F.ceil(shifted)).otherwise(F.floor(shifted)) / F.lit(scale)
        return _as(truncated, c.type)

    return build


def _coalesce(a: list[Any], c: Call, ctx: Ctx) -> Any:
    return _f().coalesce(*[_as(x, c.type) for x in a])


def _enforce_not_null(a: list[Any], c: Call, ctx: Ctx) -> Any:
    """The sink's NOT NULL enforcer (ERROR): the value, or the job fails with Flink's message."""
    F = _f()  # noqa: N806
    message = str(not_null_violation(str(c.args[1].value)))  # type: ignore[union-attr]
    return F.when(a[0].isNull(), F.raise_error(F.lit(message)).cast(spark_type(c.type))).otherwise(a[0])


def _if(a: list[Any], c: Call, ctx: Ctx) -> Any:
    return _f().when(a[0], _as(a[1], c.type)).otherwise(_as(a[2], c.type))


def _in(a: list[Any], c: Call, ctx: Ctx) -> Any:
    return a[0].isin(*a[1:])


FUNCTIONS: dict[str, Builder] = {
    "plus": _arith("+"),
    "minus": _arith("-"),
    "times": _arith("*"),
    "divide": _divide,
    "mod": _mod,
    "negate": lambda a, c, ctx: _as(-a[0], c.type),
    "equals": _cmp("equals"),
    "not_equals": _cmp("not_equals"),
    "less_than": _cmp("less_than"),
    "less_than_or_equal": _cmp("less_than_or_equal"),
    "greater_than": _cmp("greater_than"),
    "greater_than_or_equal": _cmp("greater_than_or_equal"),
    "and": _and,
    "or": _or,
    "not": lambda a, c, ctx: ~a[0],
    "is_null": _is("is_null"),
    "is_not_null": _is("is_not_null"),
    "is_true": _is("is_true"),
    "is_not_true": _is("is_not_true"),
    "is_false": _is("is_false"),
    "is_not_false": _is("is_not_false"),
    "is_distinct_from": lambda a, c, ctx: ~a[0].eqNullSafe(a[1]),
    "is_not_distinct_from": lambda a, c, ctx: a[0].eqNullSafe(a[1]),
    "case": _case,
    "cast": _cast,
    "try_cast": lambda a, c, ctx: _try_cast(a, c, ctx),
    "in": _in,
    "like": _like,
    "concat": lambda a, c, ctx: _f().concat(*a),
    "upper": _unary("upper", False),
    "lower": _unary("lower", False),
    "char_length": lambda a, c, ctx: _as(_f().char_length(a[0]), c.type),
    "btrim": _trim("btrim"),
    "ltrim": _trim("ltrim"),
    "rtrim": _trim("rtrim"),
    "substring": _substring,
    "coalesce": _coalesce,
    "ifnull": _coalesce,
    "enforce_not_null": _enforce_not_null,
    "if": _if,
    "nullif": lambda a, c, ctx: _f().nullif(a[0], a[1]),
    "greatest": _greatest_least("greatest"),
    "least": _greatest_least("least"),
    "abs": _unary("abs"),
    "floor": lambda a, c, ctx: _floor_ceil("floor", a[0], c),
    "ceil": lambda a, c, ctx: _floor_ceil("ceil", a[0], c),
    "sign": _unary("signum"),
    "sqrt": _unary("sqrt"),
    "exp": _unary("exp"),
    "power": lambda a, c, ctx: _as(_f().pow(a[0].cast("double"), a[1].cast("double")), c.type),
    "round": _round("round"),
    "truncate": _round("truncate"),
    "dot": lambda a, c, ctx: a[0].getField(str(c.args[1].value)),  # type: ignore[union-attr]
    "replace": lambda a, c, ctx: _f().replace(a[0], a[1], a[2]),
    "regexp_replace": lambda a, c, ctx: _f().regexp_replace(a[0], a[1], a[2]),
    "split_index": lambda a, c, ctx: _split_index(a, c),
    "date_format": lambda a, c, ctx: _date_format(a, c, ctx),
    "timestampdiff": lambda a, c, ctx: _timestampdiff(a, c),
    "ln": lambda a, c, ctx: _ln(a[0]),
    "log10": lambda a, c, ctx: _ln(a[0], "log10"),
    "log2": lambda a, c, ctx: _ln(a[0], "log2"),
    "log": lambda a, c, ctx: _ln(a[0]) if len(a) == 1 else _ln(a[1]) / _ln(a[0]),
}


FUNCTIONS.update(more.BUILDERS)


def _floor_ceil(fn: str, x: Any, c: Call) -> Any:
    """Java's Math.floor / ceil on FLOAT / DOUBLE: a zero result keeps the argument's sign
    (FLOOR(-0.0) = -0.0, CEIL(-0.5) = -0.0) and values beyond 2^52 (already integral), NaN and
    infinities come back unchanged; Spark's FLOOR returns a BIGINT and loses all three."""
    F = _f()  # noqa: N806
    if c.type.name not in ("FLOAT", "DOUBLE"):
        return _as(getattr(F, fn)(x), c.type)
    d = x.cast("double")
    r = getattr(F, fn)(d).cast("double")
    whole = F.isnan(d) | (F.abs(d) >= F.lit(4503599627370496.0))
    return _as(F.when(whole, d).when(r == 0, d * F.lit(0.0)).otherwise(r), c.type)


def _split_index(a: list[Any], c: Call) -> Any:
    """Commons-Lang's whole-separator split keeping empty parts (Spark's `split` with limit
    -1 over the quoted separator); NULL beyond the last part, for a negative index and ''."""
    F = _f()  # noqa: N806
    sep, idx = c.args[1].value, int(c.args[2].value)  # type: ignore[union-attr]
    if idx < 0:
        return F.lit(None).cast("string")
    parts = F.split(a[0], "\\Q" + str(sep) + "\\E", -1)
    return F.when(a[0] == F.lit(""), F.lit(None).cast("string")).otherwise(F.get(parts, idx))


def _date_format(a: list[Any], c: Call, ctx: Ctx) -> Any:
    F = _f()  # noqa: N806
    x = a[0]
    if c.args[0].type.is_string:  # Flink: the text must hold 'yyyy-MM-dd HH:mm:ss' (lenient), else NULL
        ms, ok = tt.parse_pattern(x, "yyyy-MM-dd HH:mm:ss", lenient=True)
        x = F.when(ok, F.timestamp_millis(ms))
    if c.args[0].type.name == "TIMESTAMP_LTZ":
        x = F.from_utc_timestamp(x, ctx.time_zone)
    return F.date_format(x, str(c.args[1].value))  # type: ignore[union-attr]


_UNIT_MS = {
    "MILLISECOND": 1,
    "SECOND": 1000,
    "MINUTE": 60_000,
    "HOUR": 3_600_000,
    "DAY": 86_400_000,
    "WEEK": 604_800_000,
}


def _timestampdiff(a: list[Any], c: Call) -> Any:
    """Whole units from a to b, truncated toward zero (wall-clock milliseconds: TIMESTAMP and
    DATE only, so no zone is involved)."""
    F = _f()  # noqa: N806
    unit = _UNIT_MS[str(c.args[0].value).upper()]  # type: ignore[union-attr]
    ms = [F.unix_millis(x.cast("timestamp")) for x in a[1:]]
    diff = ms[1] - ms[0]
    return _as(F.signum(diff).cast("long") * F.floor(F.abs(diff) / F.lit(unit)).cast("long"), c.type)


def _ln(x: Any, fn: str = "ln") -> Any:
    """Java's Math.log / log10: NaN below 0, -Infinity at 0 (Spark returns NULL for both)."""
    F = _f()  # noqa: N806
    v = x.cast("double")
    return F.when(v < 0, F.lit(float("nan"))).when(v == 0, F.lit(float("-inf"))).otherwise(getattr(F, fn)(v))


# Forms of supported functions whose Spark counterpart differs: refused by check_expr.
def _unsupported_form(c: Call) -> str | None:
    if c.name == "like" and not all(isinstance(x, Literal) for x in c.args[1:]):
        return "LIKE with a non-literal pattern"
    if c.name in ("cast", "try_cast"):
        src, dst = c.args[0].type, c.type
        if dst.is_string and src.name in ("FLOAT", "DOUBLE", "ARRAY", "MAP", "ROW", "BINARY", "VARBINARY"):
            return f"CAST of {src} to STRING (Java's number/collection text differs from Spark's)"
        if dst.name in ("TIMESTAMP", "TIMESTAMP_LTZ") and src.is_string and (dst.precision or 6) > 6:
            return f"CAST of a string to {dst} (Spark timestamps carry microseconds)"
        if src.name == "DATE" and dst.name == "TIMESTAMP_LTZ":
            return "CAST of DATE to TIMESTAMP_LTZ"
    if c.name == "sha2" and not (isinstance(c.args[1], Literal) and c.args[1].value in (0, 224, 256, 384, 512)):
        return "SHA2 with a bit length that is not a literal 224, 256, 384 or 512"
    if c.name == "hex" and not (c.args[0].type.is_integer or c.args[0].type.is_string):
        return f"HEX of {c.args[0].type}"
    if c.name == "replace" and not (isinstance(c.args[1], Literal) and c.args[1].value):
        return "REPLACE with a non-literal or empty search string (Spark leaves the text unchanged for '')"
    if c.name == "regexp_replace":
        pat, rep = c.args[1], c.args[2]
        if not (isinstance(pat, Literal) and isinstance(rep, Literal)) or "$" in str(rep.value or ""):
            return "REGEXP_REPLACE with a non-literal pattern or replacement, or one holding '$'"
        if "\\" in str(rep.value or ""):
            return "REGEXP_REPLACE with a backslash in the replacement"
    if c.name == "split_index":
        sep, idx = c.args[1], c.args[2]
        if not (isinstance(sep, Literal) and isinstance(idx, Literal)) or not isinstance(sep.value, str):
            return "SPLIT_INDEX with a non-literal (or character-code) separator or index"
        if sep.value == "" or "\\E" in sep.value or idx.value is None:
            return "SPLIT_INDEX with an empty separator"
    if c.name == "dot" and not isinstance(c.args[1], Literal):
        return "ROW field access by a computed name"
    if c.name == "timestampdiff":
        unit = c.args[0]
        if not isinstance(unit, Literal) or str(unit.value).upper() not in _UNIT_MS:
            return "TIMESTAMPDIFF with a unit other than MILLISECOND / SECOND / MINUTE / HOUR / DAY / WEEK"
        if any(x.type.name not in ("TIMESTAMP", "DATE") for x in c.args[1:]):
            return "TIMESTAMPDIFF of TIMESTAMP_LTZ values"
    if c.name == "date_format":
        pat = c.args[1]
        arg_t = c.args[0].type
        if not (arg_t.name in ("TIMESTAMP", "TIMESTAMP_LTZ") or arg_t.is_string) or not isinstance(pat, Literal):
            return "DATE_FORMAT of a non-timestamp or with a non-literal pattern"
        if pat.value is None or not more.pattern_ok(str(pat.value)):
            return (
                f"DATE_FORMAT pattern {pat.value!r} (only {' '.join(sorted(more.DATE_PATTERN_RUNS))}, quoted text "
                "and punctuation mean the same in Java and Spark)"
            )
    if c.name in ("log10", "log2", "log", "ln", "power", "sqrt", "exp") and c.type.name != "DOUBLE":
        return f"{c.name.upper()} returning {c.type}"
    if c.name in ("round", "truncate") and len(c.args) > 1 and not isinstance(c.args[1], Literal):
        return f"{c.name.upper()} with a non-literal scale"
    if c.name in ("round", "truncate") and c.args[0].type.name in ("FLOAT", "DOUBLE") and c.name == "truncate":
        return "TRUNCATE of a floating-point value"
    if c.name in ("plus", "minus") and c.type.name in ("TIMESTAMP", "TIMESTAMP_LTZ", "DATE"):
        if not any(isinstance(a, Literal) for a in c.args):
            return f"{c.name} of a time value and a non-literal interval"
    return more.unsupported_form(c)


def check_expr(e: Expr, where: str) -> None:
    """Raise SparkUnsupportedError unless every call in `e` is in FUNCTIONS (in a form
    whose Spark counterpart has Flink's semantics)."""
    check_type(e.type, where)  # type: ignore[union-attr]
    if isinstance(e, Call):
        if e.name in more.NONDETERMINISTIC:
            raise SparkUnsupportedError(
                f"{where}: function {e.name.upper()} is nondeterministic (Spark evaluates it at other instants "
                "than the local runner), so the Spark runner refuses it"
            )
        if e.name not in FUNCTIONS:
            raise SparkUnsupportedError(
                f"{where}: function {e.name.upper()} is not supported by the Spark runner "
                "(see docs/spark.md for the functions it maps)"
            )
        reason = _unsupported_form(e)
        if reason:
            raise SparkUnsupportedError(f"{where}: {reason} is not supported by the Spark runner")
        for a in e.args:
            if isinstance(a, Literal) and a.type.name in ("INTERVAL_DAY_TIME", "INTERVAL_YEAR_MONTH"):
                continue
            if _text_time_to_text(e, a):
                check_expr(a.args[0], where)  # type: ignore[union-attr]
                continue
            check_expr(a, where)


def _text_time_to_text(e: Call, a: Expr) -> bool:
    """Whether `e` is CAST(CAST / TRY_CAST(text AS TIME) AS STRING): Spark has no TIME type,
    but this TIME never leaves the expression, carried as milliseconds (text_time.cast_to_time)."""
    return (
        e.name == "cast"
        and e.type.is_string
        and isinstance(a, Call)
        and a.name in ("cast", "try_cast")
        and a.type.name == "TIME"
        and a.args[0].type.is_string
    )


def nondeterministic_call(e: Expr) -> str | None:
    """The name of a nondeterministic function `e` calls (None: none). Spark evaluates such a
    function at other instants than the local runner, whichever code evaluates it."""
    if isinstance(e, Call):
        if e.name in more.NONDETERMINISTIC or (e.name == "unix_timestamp" and not e.args):
            return e.name
        for a in e.args:
            found = nondeterministic_call(a)
            if found:
                return found
    return None


def runtime_calc_refusal(exprs: Sequence[Expr], where: str) -> str | None:
    """Why expressions the Spark mapping does not cover cannot run as streamsql's own Calc
    inside Spark either (None: they can): a nondeterministic function, or a Python UDF
    (Spark's Python workers do not have the session's functions)."""
    for e in exprs:
        name = nondeterministic_call(e)
        if name:
            return (
                f"{where}: function {name.upper()} is nondeterministic (Spark evaluates it at other instants "
                "than the local runner), so the Spark runner refuses it"
            )
        if _calls(e, "python_udf"):
            return f"{where}: a Python UDF (Spark's Python workers do not have the session's functions)"
    return None


def _calls(e: Expr, name: str) -> bool:
    return isinstance(e, Call) and (e.name == name or any(_calls(a, name) for a in e.args))


def to_column(e: Expr, cols: list[Any], ctx: Ctx) -> Any:
    """The Spark Column computing `e` over input columns `cols` (one Column per index)."""
    if isinstance(e, InputRef):
        return cols[e.index]
    if isinstance(e, Literal):
        return literal(e.value, e.type)
    args = [to_column(a, cols, ctx) for a in e.args]
    return FUNCTIONS[e.name](args, e, ctx)


def supported_functions() -> list[str]:
    return sorted(FUNCTIONS)


# Aggregates of the variance family, as Spark functions (GroupAggregate and OVER).
VARIANCE_FUNCS = {
    "stddev_pop": lambda F: F.stddev_pop,  # noqa: N803
    "stddev_samp": lambda F: F.stddev_samp,  # noqa: N803
    "stddev": lambda F: F.stddev_samp,  # noqa: N803
    "var_pop": lambda F: F.var_pop,  # noqa: N803
    "var_samp": lambda F: F.var_samp,  # noqa: N803
    "variance": lambda F: F.var_samp,  # noqa: N803
}
