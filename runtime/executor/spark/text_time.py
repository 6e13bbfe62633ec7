"""Text → DATE / TIMESTAMP / TIME on Spark with the local runner's (Flink's) rules.

Spark's own parsers (`CAST`, `to_timestamp`, `to_date`) accept other text than Flink's
(ISO 'T' forms, trailing zones, different leniency) and read Java patterns with
DateTimeFormatter rules, so none of them is used. Instead the text is cut into its fields
with the *same* regular expressions the local runner uses (runtime/functions/cast.py and
datetime_patterns.py, written for RE2, rewritten here for Java's regex engine: numbered
groups, `\\z` for the end of the text) and the calendar is computed with plain integer
arithmetic (`days_from_civil`, Howard Hinnant's algorithm): no Spark date function decides
validity or range, so both runners agree on every edge (Feb 29, month 13, '0000', trailing
text, whitespace) by construction.

- `cast_to_timestamp` / `cast_to_date`: CAST (invalid text fails the job naming the value,
  as Flink's CAST does) and TRY_CAST (NULL); TIMESTAMP_LTZ reads the wall clock in
  `table.local-time-zone`. `cast_to_time` / `time_to_string`: CAST(CAST(text AS TIME) AS
  STRING), the TIME carried as milliseconds (Spark has no TIME type).
- `parse_pattern`: a Java date pattern (SimpleDateFormat lenient for TO_DATE and
  DATE_FORMAT of a string, strict for TO_TIMESTAMP), wall-clock epoch milliseconds + validity.
"""

from __future__ import annotations

import datetime
import re
from typing import TYPE_CHECKING, Any

from runtime.functions import datetime_patterns as dp
from runtime.functions.cast import (
    _CAST_TS_RE,
    _JAVA_TRIM,
    _LENIENT_DATE_RE,
    _TIME_MAIN_RE,
    _TIME_SPLIT_MINUS,
    _TIME_SPLIT_PLUS,
    _TIME_ZONE_RE,
)
from runtime.types import DataType

if TYPE_CHECKING:
    from runtime.executor.spark.expressions import Ctx

MS_PER_DAY = 86_400_000
# Letters whose parse is ported below (the others are refused before the job runs).
PARSE_LETTERS = set("yMLdDHkhKmsSaEGzZXx")


def _f() -> Any:
    from pyspark.sql import functions as F  # noqa: N812 - PySpark's own convention

    return F


def java_regex(rx: str) -> str:
    """An RE2 / Python regex of this module's shape as a Java regex: named groups become
    numbered ones (their order is kept), a final `$` becomes `\\z` (Java's `$` also matches
    before a trailing line break)."""
    rx = re.sub(r"\(\?P<\w+>", "(", rx)
    return rx[:-1] + r"\z" if rx.endswith("$") and not rx.endswith(r"\$") else rx


def _div(a: Any, b: int) -> Any:
    """Floor division of a long column by a positive constant (exact below 2^53)."""
    return _f().floor(a / _f().lit(b)).cast("long")


def days_from_civil(y: Any, m: Any, d: Any) -> Any:
    """Epoch day of (year, month, day) as long columns; months and days beyond their range
    roll over (2024-13-01 is 2025-01-01, Jan 32 is Feb 1), as datetime_patterns does."""
    F = _f()  # noqa: N806
    months = y.cast("long") * 12 + (m.cast("long") - 1)
    yy = _div(months, 12)
    mm = months - yy * 12 + 1  # 1..12
    y2 = yy - F.when(mm <= 2, F.lit(1)).otherwise(F.lit(0))
    era = _div(y2, 400)
    yoe = y2 - era * 400
    mp = F.when(mm > 2, mm - 3).otherwise(mm + 9)
    doy = _div(mp * 153 + 2, 5)
    doe = yoe * 365 + _div(yoe, 4) - _div(yoe, 100) + doy
    return era * 146097 + doe - 719468 + d.cast("long") - 1


def days_in_month(y: Any, m: Any) -> Any:
    """Days of month m (1..12) of proleptic Gregorian year y (a small expression: these
    columns grow Spark's generated code quickly)."""
    F = _f()  # noqa: N806
    leap = ((y % 4 == 0) & (y % 100 != 0)) | (y % 400 == 0)
    feb = F.when(leap, F.lit(29)).otherwise(F.lit(28))
    return F.when(m == 2, feb).when(m.isin(4, 6, 9, 11), F.lit(30)).otherwise(F.lit(31))


def _int(col: Any, default: int = 0) -> Any:
    """Digits as a long ('' or unparsable → default), at most 12 digits as the local runner."""
    F = _f()  # noqa: N806
    return F.coalesce(F.substring(col, 1, 12).cast("long"), F.lit(default).cast("long"))


def _trim(x: Any) -> Any:
    """Java's String.trim(): every char up to U+0020 off both ends (cast.py `_JAVA_TRIM`)."""
    return _f().regexp_replace(x, _JAVA_TRIM, "")


def _bad_text(x: Any, dst: DataType, spark_t: Any) -> Any:
    """Fails the job on text CAST cannot read, with the text of Flink's exception as the local
    runner words it (cast.py `_fail`)."""
    F = _f()  # noqa: N806
    if spark_t == "timestamp":
        head, tail = "java.time.format.DateTimeParseException: Text '", "' could not be parsed"
    else:
        head, tail = "java.time.DateTimeException: For input string: '", "'."
    return F.raise_error(F.concat(F.lit(head), x, F.lit(tail))).cast(spark_t)


# ----------------------------------------------------------------------------- CAST
def cast_to_timestamp(x: Any, dst: DataType, ctx: Ctx, strict: bool) -> Any:
    """CAST(text AS TIMESTAMP(p) / TIMESTAMP_LTZ(p)) as the local runner (cast.py
    `_parse_cast_timestamp`, Flink's DEFAULT_TIMESTAMP_FORMATTER): `_CAST_TS_RE` on the
    untrimmed text (one space before the time, no 'T', both colons, an empty time number
    reads 0), then java.time's SMART resolver: a day 1..31 past the month's end is its last
    day ('2024-02-30' is 2024-02-29), 24:00:00 is the next midnight, an hour above 23 or a
    minute / second above 59 is invalid. The fraction is truncated to the precision."""
    F = _f()  # noqa: N806
    rx = java_regex(_CAST_TS_RE)

    def g(i: int) -> Any:
        return F.regexp_extract(x, rx, i)

    y, mo, d, h, mi, s = (_int(g(i)) for i in range(1, 7))
    frac9 = _int(F.rpad(g(7), 9, "0"))
    unit = dst.to_arrow().unit
    per = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 10**3}[unit]  # Spark carries microseconds
    end_of_day = (h == 24) & (mi == 0) & (s == 0) & (frac9 == 0)
    ok = x.rlike(rx) & (mo >= 1) & (mo <= 12) & (d >= 1) & (d <= 31) & ((h <= 23) | end_of_day)
    ok = ok & (mi <= 59) & (s <= 59)
    mc = F.least(F.greatest(mo, F.lit(1)), F.lit(12))
    day = F.least(d, days_in_month(y, mc))  # SMART: the month's last day
    days = days_from_civil(y, mc, day) + F.when(end_of_day, F.lit(1)).otherwise(F.lit(0))
    hour = F.when(end_of_day, F.lit(0)).otherwise(h)
    micros = days * 86_400_000_000 + ((hour * 60 + mi) * 60 + s) * 1_000_000 + _div(frac9, per) * (per // 1000)
    ts = F.timestamp_micros(micros)
    if dst.name == "TIMESTAMP_LTZ":
        ts = F.to_utc_timestamp(ts, ctx.time_zone)
    out = F.when(ok, ts)
    if strict:
        return F.when(x.isNotNull() & ~F.coalesce(ok, F.lit(False)), _bad_text(x, dst, "timestamp")).otherwise(out)
    return out


_DATE_RE = java_regex(_LENIENT_DATE_RE)


def cast_to_date(x: Any, dst: DataType, strict: bool) -> Any:
    """CAST(text AS DATE) as Flink's DateTimeUtils.parseDate (cast.py `_parse_date`): text
    after a space is ignored, month and day may be left out ('12' is 0012-01-01), no sign,
    years 0..9999 (proleptic Gregorian, year 0 a leap year)."""
    F = _f()  # noqa: N806
    t = F.regexp_replace(_trim(x), r"^(\S[^ ]*) .*$", "$1")

    def g(i: int) -> Any:
        return F.regexp_extract(t, _DATE_RE, i)

    y = g(1).cast("long")  # beyond a long: NULL, invalid
    mo = F.when(g(2) == F.lit(""), F.lit(1).cast("long")).otherwise(g(2).cast("long"))
    d = F.when(g(3) == F.lit(""), F.lit(1).cast("long")).otherwise(g(3).cast("long"))
    ok = (
        t.rlike(_DATE_RE)
        & y.isNotNull()
        & mo.isNotNull()
        & d.isNotNull()
        & (y >= 0)
        & (y <= 9999)
        & (mo >= 1)
        & (mo <= 12)
        & (d >= 1)
    )
    yc = F.coalesce(F.least(F.greatest(y, F.lit(0)), F.lit(9999)), F.lit(0).cast("long"))
    mc = F.coalesce(F.least(F.greatest(mo, F.lit(1)), F.lit(12)), F.lit(1).cast("long"))
    ok = ok & (d <= days_in_month(yc, mc))
    out = F.when(ok, F.date_from_unix_date(days_from_civil(yc, mc, F.coalesce(d, F.lit(1))).cast("int")))
    if strict:
        return F.when(x.isNotNull() & ~F.coalesce(ok, F.lit(False)), _bad_text(x, dst, "date")).otherwise(out)
    return out


def cast_to_time(x: Any, dst: DataType, strict: bool) -> Any:
    """CAST(text AS TIME(p)) as the local runner (cast.py `_parse_time`, Flink's
    DateTimeUtils.parseTime): milliseconds as an int column, not cut to a day ('123' is 123
    hours, '12:60' is 13:00), truncated to the precision. Spark has no TIME type, so this
    column only ever feeds `time_to_string` (expressions.check_expr allows nothing else)."""
    F = _f()  # noqa: N806
    minus_rx, plus_rx = java_regex(_TIME_SPLIT_MINUS), java_regex(_TIME_SPLIT_PLUS)
    main_rx, zone_rx = java_regex(_TIME_MAIN_RE), java_regex(_TIME_ZONE_RE)
    has_minus = x.rlike(minus_rx)
    has_plus = ~has_minus & x.rlike(plus_rx)
    main = F.when(has_minus, F.regexp_extract(x, minus_rx, 1)).when(has_plus, F.regexp_extract(x, plus_rx, 1))
    main = main.otherwise(x)
    zone = F.when(has_minus, F.regexp_extract(x, minus_rx, 2)).when(has_plus, F.regexp_extract(x, plus_rx, 2))
    zone = zone.otherwise(F.lit("0"))
    sign = F.when(has_minus, F.lit(-1)).otherwise(F.lit(1)).cast("long")
    ok = main.rlike(main_rx) & zone.rlike(zone_rx)
    # a colon / dot of the zone part while the time part lacks it spans the sign (refused)
    has_s = F.length(F.regexp_extract(main, main_rx, 3)) > 0
    has_f = has_s & main.contains(".")
    ok = ok & ~(zone.contains(":") & ~has_s) & ~(zone.contains(".") & has_s & ~has_f)

    def num(text: Any, rx: str, i: int) -> tuple[Any, Any]:
        """The digits as a long, and whether they overflow Java's int (Integer.parseInt)."""
        d = F.regexp_replace(F.regexp_extract(text, rx, i), r"^0+(\d)", "$1")
        too_long = F.length(d) > 10
        v = F.when((d == F.lit("")) | too_long, F.lit(0)).otherwise(d).cast("long")
        return v, too_long | (v > F.lit(2**31 - 1))

    (h, oh), (mi, om), (sec, os_) = (num(main, main_rx, i) for i in (1, 2, 3))
    (zh, ozh), (zm, ozm) = (num(zone, zone_rx, i) for i in (1, 2))
    ok = ok & ~(oh | om | os_ | ozh | ozm)
    # the fraction as Flink's parseFraction: Java trim, three characters as hundreds, tens and
    # ones (a non-digit counts 0), plus one when the fourth is '5' or above
    frac = F.rpad(F.regexp_replace(F.regexp_extract(main, main_rx, 4), _JAVA_TRIM, ""), 4, "\x00")
    milli: Any = F.lit(0).cast("long")
    for i, weight in enumerate((100, 10, 1), start=1):
        ch = F.substring(frac, i, 1)
        milli = milli + F.when(ch.rlike("^[0-9]$"), ch.cast("long")).otherwise(F.lit(0)) * weight
    milli = milli + F.when(F.substring(frac, 4, 1) >= F.lit("5"), F.lit(1)).otherwise(F.lit(0))
    total = (h + sign * zh) * 3_600_000 + (mi + sign * zm) * 60_000 + sec * 1000 + milli
    total = F.pmod(total + F.lit(2**31), F.lit(2**32)) - F.lit(2**31)  # Java int arithmetic
    step = 10 ** (3 - min(3, 0 if dst.precision is None else dst.precision))
    ms = (total - total % F.lit(step)).cast("int")  # Spark's % keeps the sign: toward zero
    out = F.when(ok, ms)
    if strict:
        return F.when(x.isNotNull() & ~F.coalesce(ok, F.lit(False)), _bad_text(x, dst, "int")).otherwise(out)
    return out


def time_to_string(ms: Any, src: DataType) -> Any:
    """CAST(TIME(p) AS STRING) of `cast_to_time`'s milliseconds as runtime.render prints a
    TIME (Flink's formatTimestampMillis): a negative value gets a day added, the hour shows
    its last two digits ('123' hours print 23), then p fraction digits (at most 3)."""
    F = _f()  # noqa: N806
    t = F.when(ms < 0, F.pmod(ms, F.lit(MS_PER_DAY))).otherwise(ms).cast("long")
    fields = (_div(t, 3_600_000) % 100, _div(t, 60_000) % 60, _div(t, 1000) % 60, t % 1000)
    h, m, s, f = (F.lpad(c.cast("string"), w, "0") for c, w in zip(fields, (2, 2, 2, 3), strict=True))
    text = F.concat(h, F.lit(":"), m, F.lit(":"), s, F.lit("."), f)
    p = src.precision or 0
    return F.substring(text, 1, 8 + (p + 1 if p > 0 else 0))


# ----------------------------------------------------------------------------- patterns
def pattern_reason(pattern: Any) -> str | None:
    """Why a Java date pattern cannot be parsed on Spark (None when it can)."""
    if not isinstance(pattern, str):
        return "a non-literal pattern"
    try:
        p = dp._compile(pattern, True)  # noqa: SLF001 - the local runner's own regex, shared on purpose
    except ValueError as e:
        return f"pattern {pattern!r} ({e})"
    bad = sorted({c for _, c, _ in p.groups} - PARSE_LETTERS)
    if bad:
        return f"pattern {pattern!r} (letters {' '.join(bad)} are not parsed by the Spark runner)"
    return None


def _century_year(v: Any) -> Any:
    """SimpleDateFormat's 2-digit year: within [now - 80 years, now + 20 years)."""
    F = _f()  # noqa: N806
    start = datetime.date.today().year - 80
    y = v + F.lit(start - start % 100)
    return F.when(y < F.lit(start), y + 100).otherwise(y)


def parse_pattern(s: Any, pattern: str, lenient: bool) -> tuple[Any, Any]:
    """(wall-clock epoch ms, valid) columns of text `s` read with a Java pattern, field by
    field as datetime_patterns.parse does (missing fields default to 1970-01-01 00:00:00)."""
    F = _f()  # noqa: N806
    p = dp._compile(pattern, lenient)  # noqa: SLF001 - see pattern_reason
    rx = java_regex(p.regex)
    ok = s.rlike(rx)
    if not p.groups:
        return F.lit(0).cast("long"), ok
    one, zero = F.lit(1).cast("long"), F.lit(0).cast("long")
    year, month, day, hour, minute, second, milli = F.lit(1970).cast("long"), one, one, zero, zero, zero, zero
    pm: Any = F.lit(False)
    twelve = False
    strict_ok: Any = F.lit(True)
    for i, (_, c, k) in enumerate(p.groups, start=1):
        col = F.regexp_extract(s, rx, i)
        if c in ("M", "L") and k >= 3:
            low = F.lower(col)
            idx: Any = F.lit(None).cast("long")
            for n, name in reversed(list(enumerate(dp.MONTHS, start=1))):
                idx = F.when((low == F.lit(name.lower())) | (low == F.lit(name[:3].lower())), F.lit(n)).otherwise(idx)
            month = F.coalesce(idx.cast("long"), one)
            continue
        if c in ("E", "G", "z", "Z", "X", "x"):
            continue
        if c == "a":
            twelve = True
            pm = F.coalesce(F.upper(col) == F.lit("PM"), F.lit(False))
            continue
        v = _int(col)
        if c == "y":
            if k == 2:
                year = F.when(F.length(col) == 2, _century_year(v) if lenient else v + 2000).otherwise(v)
            else:
                year = v
        elif c in ("M", "L"):
            month = v
        elif c == "d":
            day = v
        elif c == "D":
            month, day = one, v
        elif c in ("H", "k"):
            hour = F.when(v == 24, zero).otherwise(v) if c == "k" else v
        elif c in ("h", "K"):
            twelve = True
            hour = F.when(v == 12, zero).otherwise(v) if c == "h" else v
            if not lenient:
                strict_ok = strict_ok & ((v >= 1) & (v <= 12) if c == "h" else (v >= 0) & (v <= 11))
        elif c == "m":
            minute = v
        elif c == "s":
            second = v
        elif c == "S":
            if lenient or k == 3:
                milli = v
            else:  # strict: exactly k digits, scaled to milliseconds
                milli = _div(v, 10 ** (k - 3)) if k > 3 else v * 10 ** (3 - k)
    if twelve:
        hour = hour + F.when(pm, F.lit(12)).otherwise(F.lit(0))
    if not lenient:
        strict_ok = strict_ok & (month >= 1) & (month <= 12) & (day >= 1) & (day <= 31)
        strict_ok = strict_ok & (hour >= 0) & (hour <= 23) & (minute >= 0) & (minute <= 59)
        strict_ok = strict_ok & (second >= 0) & (second <= 59)
        month = F.least(F.greatest(month, one), F.lit(12).cast("long"))
        day = F.least(day, days_in_month(year, month))
        ok = ok & strict_ok
    ok = ok & (year > -5000) & (year < 300000)
    days = days_from_civil(year, month, day)
    ms = days * MS_PER_DAY + hour * 3_600_000 + minute * 60_000 + second * 1000 + milli
    return ms, ok
