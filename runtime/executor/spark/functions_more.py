"""More Flink scalar functions on Spark: time fields, parsing and formatting of timestamps,
string search / padding / case, regular-expression extraction (see expressions.py for the
contract: a builder per canonical name, `unsupported_form` for the forms refused).

Conventions of the Spark runner: TIMESTAMP values are Spark timestamps holding the wall clock
as a UTC instant (the session zone is UTC); TIMESTAMP_LTZ values hold the instant and are
turned into the wall clock of `table.local-time-zone` with `from_utc_timestamp` when a field
or a text is needed. Spark's ANSI mode raises on bad input where Flink returns NULL, so the
parsing functions use the `try_*` forms, and edge cases are written out with `when` so each
builder gives Flink's result (Flink's rules are quoted next to each one).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from runtime.executor.spark import text_time as tt
from runtime.expr.ir import Call, Literal

if TYPE_CHECKING:
    from runtime.executor.spark.expressions import Ctx

LONG_MIN = -(2**63)
# Nondeterministic functions: Spark evaluates them per task, at other instants than the local
# runner (and Flink), so a result could never be compared: refused.
NONDETERMINISTIC = {
    "current_timestamp",
    "current_row_timestamp",
    "now",
    "localtimestamp",
    "current_date",
    "current_time",
    "localtime",
    "proctime",
    "rand",
    "rand_integer",
    "uuid",
}


def _f() -> Any:
    from pyspark.sql import functions as F  # noqa: N812 - PySpark's own convention

    return F


def _str_null() -> Any:
    return _f().lit(None).cast("string")


def wall(x: Any, type_name: str, ctx: Ctx) -> Any:
    """The wall-clock timestamp of a TIMESTAMP / TIMESTAMP_LTZ / DATE value."""
    F = _f()  # noqa: N806
    if type_name == "TIMESTAMP_LTZ":
        return F.from_utc_timestamp(x, ctx.time_zone)
    if type_name == "DATE":
        return x.cast("timestamp")
    return x


# ----------------------------------------------------------------------------- time fields
MS_PER_DAY = 86_400_000


def java_div(x: Any, d: int) -> Any:
    """`x / d` for a long column and a positive literal, truncating toward zero as Java's `/`
    (Spark's `%` is Java's remainder, so `x - x % d` is a multiple of `d`)."""
    return ((x - x % d) / d).cast("long")


def truncated_days(w: Any) -> Any:
    """The epoch day Flink 2.3 sees in wall-clock timestamp `w`: its millis divided by a day's
    truncating, as Java's `/` (1969-12-31 23:59:59.999 is day 0, 1970-01-01)."""
    return java_div(_f().unix_millis(w), MS_PER_DAY)


def _time_of_day(w: Any) -> Any:
    """Millis of `w` past its truncated day (negative before 1970, as Flink 2.3)."""
    return _f().unix_millis(w) % MS_PER_DAY


def _date_of(w: Any) -> Any:
    return _f().date_from_unix_date(truncated_days(w))


# Fields with Flink 2.3's arithmetic (runtime/functions/temporal.py `_extract_fields`): the day
# is the epoch millis divided by a day's truncating and the time of day the Java remainder, so
# before 1970 the fields are not the calendar's (1969-12-31 23:59:59.999 has HOUR 0, YEAR 1970).
_FIELDS = {
    "YEAR": lambda F, w: F.year(_date_of(w)),  # noqa: N803
    "QUARTER": lambda F, w: F.quarter(_date_of(w)),  # noqa: N803
    "MONTH": lambda F, w: F.month(_date_of(w)),  # noqa: N803
    "WEEK": lambda F, w: F.weekofyear(_date_of(w)),  # noqa: N803 - ISO-8601 weeks, as Flink
    "DAY": lambda F, w: F.dayofmonth(_date_of(w)),  # noqa: N803
    "DOY": lambda F, w: F.dayofyear(_date_of(w)),  # noqa: N803
    "DOW": lambda F, w: F.dayofweek(_date_of(w)),  # noqa: N803 - 1 = Sunday, as Flink
    "HOUR": lambda F, w: java_div(_time_of_day(w), 3_600_000),  # noqa: N803
    "MINUTE": lambda F, w: java_div(_time_of_day(w), 60_000) % 60,  # noqa: N803
    "SECOND": lambda F, w: java_div(_time_of_day(w), 1000) % 60,  # noqa: N803
}
# MILLISECOND / EPOCH are left out: Calcite's definitions (milliseconds within the minute or the
# second, epoch of the wall clock or the instant) could not be pinned to Flink's here.


def _field(unit: str) -> Any:
    def build(a: list[Any], c: Call, ctx: Ctx) -> Any:
        F = _f()  # noqa: N806
        return _FIELDS[unit](F, wall(a[0], c.args[0].type.name, ctx)).cast("long")

    return build


def _extract(a: list[Any], c: Call, ctx: Ctx) -> Any:
    unit = str(c.args[0].value).upper()  # type: ignore[union-attr]
    F = _f()  # noqa: N806
    return _FIELDS[unit](F, wall(a[1], c.args[1].type.name, ctx)).cast("long")


# ----------------------------------------------------------------------------- parse / format
_DEFAULT_TS = r"^(\d{4})-(\d{1,2})-(\d{1,2})(?: (\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{0,9}))?)?$"


def _to_timestamp(a: list[Any], c: Call, ctx: Ctx) -> Any:
    """With a format: the local runner's strict parse (text_time.parse_pattern). Without: Flink's default 'yyyy-[M]M-[d]d[ [H]H:[m]m:[s]s[.fraction]]' (fraction truncated to
    milliseconds); NULL when the text does not match or names no calendar instant."""
    F = _f()  # noqa: N806
    s = a[0]
    if len(a) > 1:
        ms, ok = tt.parse_pattern(s, str(c.args[1].value), lenient=False)  # type: ignore[union-attr]
        return F.when(ok, F.timestamp_millis(ms))

    def g(i: int) -> Any:
        return F.regexp_extract(s, _DEFAULT_TS, i)

    def num(i: int) -> Any:
        return F.when(g(i) == F.lit(""), F.lit(0)).otherwise(g(i).cast("int"))

    frac = F.rpad(F.substring(g(7), 1, 3), 3, "0").cast("int")
    secs = num(6).cast("decimal(16,6)") + frac.cast("decimal(16,6)") / F.lit(1000)
    # Java's SMART resolver: a day-of-month 1..31 past the month's end is its last day (Feb 30 → 29).
    month_ok = (num(2) >= 1) & (num(2) <= 12)
    day = F.when(month_ok, F.least(num(3), tt.days_in_month(num(1), num(2)))).otherwise(num(3))
    ts = F.try_make_timestamp(num(1), num(2), day, num(4), num(5), secs, F.lit("UTC"))
    ok = s.rlike(_DEFAULT_TS) & (num(3) <= 31) & (num(4) <= 23) & (num(5) <= 59) & (num(6) <= 59)
    return F.when(ok, ts)


_DEFAULT_DATE = r"^\s*(\d{1,4})-(\d{1,2})-(\d{1,2})(?:[ ].*)?$"


def _to_date(a: list[Any], c: Call, ctx: Ctx) -> Any:
    """With a format: SimpleDateFormat's lenient parse (trailing text ignored, fields roll
    over: '32.01.2024' is 2024-02-01). Without: 'yyyy-[M]M-[d]d' with an optional time part
    after a space, NULL when the day does not exist."""
    F = _f()  # noqa: N806
    s = a[0]
    if len(a) > 1:
        ms, ok = tt.parse_pattern(s, str(c.args[1].value), lenient=True)  # type: ignore[union-attr]
    else:
        rx = tt.java_regex(_DEFAULT_DATE)
        y, m, d = (F.regexp_extract(s, rx, i).cast("long") for i in (1, 2, 3))
        mc = F.least(F.greatest(m, F.lit(1)), F.lit(12))
        ok = s.rlike(rx) & (m >= 1) & (m <= 12) & (d >= 1) & (d <= tt.days_in_month(y, mc))
        ms = tt.days_from_civil(y, m, d) * tt.MS_PER_DAY
    days = F.floor(ms / F.lit(tt.MS_PER_DAY)).cast("int")
    return F.when(ok, F.date_from_unix_date(days))


_STRICT_TS = r"^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$"


def _unix_timestamp(a: list[Any], c: Call, ctx: Ctx) -> Any:
    """Epoch seconds of a 'yyyy-MM-dd HH:mm:ss' text read in the session zone. Flink parses
    with a lenient SimpleDateFormat: fields overflow into the next one (Feb 30 is Mar 1),
    which the calendar arithmetic below reproduces; text not starting with a digit gives
    Long.MIN_VALUE. Other text (a lenient parse of a partial form) is not reproduced: the
    job fails naming the function rather than guess."""
    F = _f()  # noqa: N806
    s = a[0]

    def num(i: int) -> Any:
        return F.regexp_extract(s, _STRICT_TS, i).cast("int")

    month_start = F.add_months(F.make_date(num(1), F.lit(1), F.lit(1)), num(2) - 1)
    day = F.date_add(month_start, num(3) - 1)
    secs = F.unix_seconds(day.cast("timestamp")) + num(4) * 3600 + num(5) * 60 + num(6)
    local = F.timestamp_seconds(secs)
    epoch = F.unix_seconds(F.to_utc_timestamp(local, ctx.time_zone))
    msg = F.concat(
        F.lit("UNIX_TIMESTAMP: the Spark runner does not reproduce Java's lenient parse of '"), s, F.lit("'")
    )
    return (
        F.when(s.isNull(), F.lit(None).cast("long"))
        .when(s.rlike(_STRICT_TS), epoch)
        .when(~s.rlike(r"^[0-9]"), F.lit(LONG_MIN).cast("long"))
        .otherwise(F.raise_error(msg).cast("long"))
    )


def _from_unixtime(a: list[Any], c: Call, ctx: Ctx) -> Any:
    """Epoch seconds (floored) as the session zone's wall clock, formatted."""
    F = _f()  # noqa: N806
    pattern = str(c.args[1].value) if len(c.args) > 1 else "yyyy-MM-dd HH:mm:ss"  # type: ignore[union-attr]
    ts = F.from_utc_timestamp(F.timestamp_seconds(F.floor(a[0]).cast("long")), ctx.time_zone)
    return F.date_format(ts, pattern)


def _to_timestamp_ltz(a: list[Any], c: Call, ctx: Ctx) -> Any:
    """TIMESTAMP_LTZ from epoch seconds (precision 0) or milliseconds (3, the default); a
    fractional value is floored to whole milliseconds, as the local runner does."""
    F = _f()  # noqa: N806
    precision = int(c.args[1].value) if len(c.args) > 1 else 3  # type: ignore[union-attr]
    scale = 1000 if precision == 0 else 1
    x = a[0]
    if c.args[0].type.is_integer:
        ms = x.cast("long") * F.lit(scale)
    else:
        ms = F.floor(x.cast("double") * F.lit(float(scale))).cast("long")
    return F.timestamp_millis(ms)


# Pattern letter runs meaning the same in Java's SimpleDateFormat (Flink) and Spark's
# DateTimeFormatter-based patterns (English text), at these lengths.
DATE_PATTERN_RUNS = {"yyyy", "yy", "MM", "MMM", "MMMM", "dd", "HH", "hh", "mm", "ss", "SSS", "a", "EEE", "EEEE"}


def pattern_ok(pattern: str) -> bool:
    """True when every letter run of `pattern` (outside quotes) is in DATE_PATTERN_RUNS."""
    runs: list[str] = []
    quoted = False
    for ch in pattern:
        if ch == "'":
            quoted = not quoted
            runs.append("'")
        elif quoted or not ch.isalpha():
            runs.append(" ")
        elif runs and runs[-1][-1] == ch:
            runs[-1] += ch
        else:
            runs.append(ch)
    return not quoted and all(not r[0].isalpha() or r in DATE_PATTERN_RUNS for r in runs)


# ----------------------------------------------------------------------------- strings
def _regexp_extract(a: list[Any], c: Call, ctx: Ctx) -> Any:
    """Group k of the first match (Java regex on both sides); NULL when nothing matches or
    the group did not take part in the match (Spark's regexp_extract gives '' for both,
    `regexp_instr` tells them apart: 0 when the group has no position)."""
    F = _f()  # noqa: N806
    pattern = str(c.args[1].value)  # type: ignore[union-attr]
    k = int(c.args[2].value) if len(c.args) > 2 else 0  # type: ignore[union-attr]
    if k < 0 or k > re.compile(pattern).groups:
        return _str_null()
    s = a[0]
    found = s.rlike(pattern) & (F.regexp_instr(s, F.lit(pattern), F.lit(k)) > 0)
    return F.when(found, F.regexp_extract(s, pattern, k))


def _locate(a: list[Any], c: Call, ctx: Ctx) -> Any:
    """1-based position of the needle in the text at or after `start` (1 if the needle is
    ''), 0 if absent or `start` is past the end + 1; a start below 1 counts as 1 (Java's
    indexOf); Spark's locate returns 0 for a start below 1."""
    F = _f()  # noqa: N806
    needle, hay = a[0], a[1]
    start = F.greatest(a[2].cast("int"), F.lit(1)) if len(a) > 2 else F.lit(1)
    pos = F.call_function("locate", needle, hay, start).cast("int")
    any_null = needle.isNull() | hay.isNull() | (a[2].isNull() if len(a) > 2 else F.lit(False))
    return (
        F.when(any_null, F.lit(None).cast("int"))  # Flink: NULL if any argument is NULL (Spark: 0 for a NULL start)
        .when(start > F.char_length(hay) + 1, F.lit(0))
        .when(hay == F.lit(""), F.when(needle == F.lit(""), F.lit(1)).otherwise(F.lit(0)))  # Spark: 1 for ''
        .otherwise(pos)
    )


def _pad(fn: str) -> Any:
    def build(a: list[Any], c: Call, ctx: Ctx) -> Any:
        """Flink: NULL for a negative length or an empty pad, the text cut to the length."""
        F = _f()  # noqa: N806
        n = a[1].cast("int")
        out = F.call_function(fn, a[0], n, a[2])
        return F.when((n < 0) | (a[2] == F.lit("")), _str_null()).otherwise(out)

    return build


def _initcap(a: list[Any], c: Call, ctx: Ctx) -> Any:
    """Calcite's INITCAP: words are runs of ASCII letters and digits; a word's first letter
    upper-cased, the rest lower-cased, other characters unchanged (Spark's INITCAP splits on
    spaces only). Per character with `transform` (evaluated in the JVM)."""
    F = _f()  # noqa: N806
    chars = F.split(a[0], "")

    def one(ch: Any, i: Any) -> Any:
        prev = F.when(i > 0, F.element_at(chars, i)).otherwise(F.lit(""))
        starts = ~prev.rlike("^[A-Za-z0-9]$")
        letter = ch.rlike("^[A-Za-z]$")
        return F.when(letter & starts, F.upper(ch)).when(letter, F.lower(ch)).otherwise(ch)

    out = F.array_join(F.transform(chars, one), "")
    return F.when(a[0] == F.lit(""), F.lit("")).otherwise(out)


def _chr(a: list[Any], c: Call, ctx: Ctx) -> Any:
    """The character with code (n & 0xFF); '' for a negative code (Spark's CHR: the same)."""
    F = _f()  # noqa: N806
    return F.call_function("chr", a[0].cast("long"))


_ADD_MS = {"MILLISECOND": 1, "SECOND": 1000, "MINUTE": 60_000, "HOUR": 3_600_000, "DAY": 86_400_000}
_ADD_MS["WEEK"] = 7 * _ADD_MS["DAY"]
_ADD_MONTHS = {"MONTH": 1, "QUARTER": 3, "YEAR": 12}


def _timestampadd(a: list[Any], c: Call, ctx: Ctx) -> Any:
    """x plus n units: fixed units on the instant (epoch ms), months on the wall clock with
    the day clamped to the month's end (Calcite's addMonths, as Spark's add_months)."""
    F = _f()  # noqa: N806
    unit = str(c.args[0].value).upper()  # type: ignore[union-attr]
    n, x = a[1].cast("long"), a[2]
    tname = c.args[2].type.name
    if unit in _ADD_MS:
        step = n * F.lit(_ADD_MS[unit])
        if tname == "DATE":
            return F.date_add(x, F.floor(step / F.lit(86_400_000)).cast("int"))
        return F.timestamp_millis(F.unix_millis(x) + step)
    months = (n * F.lit(_ADD_MONTHS[unit])).cast("int")
    if tname == "DATE":
        return F.add_months(x, months)
    w = wall(x, tname, ctx)
    day = F.add_months(w.cast("date"), months).cast("timestamp")
    moved = F.timestamp_millis(F.unix_millis(day) + F.unix_millis(w) - F.unix_millis(w.cast("date").cast("timestamp")))
    return F.to_utc_timestamp(moved, ctx.time_zone) if tname == "TIMESTAMP_LTZ" else moved


def _sha2(a: list[Any], c: Call, ctx: Ctx) -> Any:
    """SHA2(s, bits) for a literal bit length (check_expr refuses the others): Spark's sha2
    hashes the UTF-8 bytes to lower-case hex, as Flink (0 means 256 in both)."""
    bits = int(c.args[1].value)  # type: ignore[union-attr]
    return _f().sha2(a[0].cast("binary"), bits)


def _hex(a: list[Any], c: Call, ctx: Ctx) -> Any:
    """HEX: Spark's hex of a BIGINT is Long.toHexString upper-cased (two's complement for
    negatives) and of a string the upper-case hex of its UTF-8 bytes, as Flink's."""
    x = a[0].cast("long") if c.args[0].type.is_integer else a[0]
    return _f().hex(x)


BUILDERS: dict[str, Any] = {
    "sha2": _sha2,
    "hex": _hex,
    "bin": lambda a, c, ctx: _f().bin(a[0].cast("long")),  # Long.toBinaryString in both
    "hour": _field("HOUR"),
    "minute": _field("MINUTE"),
    "second": _field("SECOND"),
    "year": _field("YEAR"),
    "quarter": _field("QUARTER"),
    "month": _field("MONTH"),
    "week": _field("WEEK"),
    "dayofyear": _field("DOY"),
    "dayofmonth": _field("DAY"),
    "dayofweek": _field("DOW"),
    "extract": _extract,
    "to_timestamp": _to_timestamp,
    "to_date": _to_date,
    "unix_timestamp": _unix_timestamp,
    "from_unixtime": _from_unixtime,
    "to_timestamp_ltz": _to_timestamp_ltz,
    "regexp_extract": _regexp_extract,
    "concat_ws": lambda a, c, ctx: _concat_ws(a),
    "position": _locate,
    "locate": _locate,
    "lpad": _pad("lpad"),
    "rpad": _pad("rpad"),
    "initcap": _initcap,
    "chr": _chr,
    "timestampadd": _timestampadd,
}


def _concat_ws(a: list[Any]) -> Any:
    """Flink: NULL arguments skipped, NULL only for a NULL separator (Spark's concat_ws takes
    the separator as a column through `call_function`)."""
    F = _f()  # noqa: N806
    return F.call_function("concat_ws", *a)


def unsupported_form(c: Call) -> str | None:
    """Why this form of a function in BUILDERS differs on Spark (None when it does not)."""
    args = c.args
    name = c.name
    if name in ("hour", "minute", "second", "year", "quarter", "month", "week", "dayofyear", "dayofmonth"):
        if args[0].type.name not in ("TIMESTAMP", "TIMESTAMP_LTZ", "DATE"):
            return f"{name.upper()} of a {args[0].type.name} value"
    if name == "dayofweek" and args[0].type.name not in ("TIMESTAMP", "TIMESTAMP_LTZ", "DATE"):
        return f"DAYOFWEEK of a {args[0].type.name} value"
    if name == "extract":
        unit = args[0]
        if not isinstance(unit, Literal) or str(unit.value).upper() not in _FIELDS:
            return f"EXTRACT unit {getattr(unit, 'value', '?')} (mapped: {', '.join(sorted(_FIELDS))})"
        if args[1].type.name not in ("TIMESTAMP", "TIMESTAMP_LTZ", "DATE"):
            return f"EXTRACT from a {args[1].type.name} value"
    if name in ("to_timestamp", "to_date") and len(args) > 1:
        reason = tt.pattern_reason(args[1].value if isinstance(args[1], Literal) else None)
        if reason:
            return f"{name.upper()} with {reason}"
    if name == "unix_timestamp":
        if not args:
            return "UNIX_TIMESTAMP() (the current time is nondeterministic)"
        if len(args) > 1 and not (isinstance(args[1], Literal) and args[1].value == "yyyy-MM-dd HH:mm:ss"):
            return "UNIX_TIMESTAMP with a format other than 'yyyy-MM-dd HH:mm:ss'"
    if name == "to_timestamp_ltz":
        if not (args[0].type.is_integer or args[0].type.name in ("FLOAT", "DOUBLE", "DECIMAL")):
            return "TO_TIMESTAMP_LTZ of a string (Java's DateTimeFormatter parse is not reproduced)"
        if len(args) > 1 and not (isinstance(args[1], Literal) and args[1].value in (0, 3)):
            return "TO_TIMESTAMP_LTZ with a precision other than a literal 0 or 3"
    if name == "from_unixtime" and len(args) > 1:
        if not isinstance(args[1], Literal) or not pattern_ok(str(args[1].value)):
            return "FROM_UNIXTIME with a non-literal format or one whose letters differ between Java and Spark"
    if name == "regexp_extract":
        if not all(isinstance(x, Literal) for x in args[1:]) or args[1].value is None:  # type: ignore[union-attr]
            return "REGEXP_EXTRACT with a non-literal pattern or group"
        try:
            re.compile(str(args[1].value))  # type: ignore[union-attr]
        except re.error:
            return "REGEXP_EXTRACT with a pattern that cannot be checked before the job runs"
    if name == "timestampadd":
        unit = args[0]
        if not isinstance(unit, Literal) or str(unit.value).upper() not in (*_ADD_MS, *_ADD_MONTHS):
            return "TIMESTAMPADD with this unit"
    return None
