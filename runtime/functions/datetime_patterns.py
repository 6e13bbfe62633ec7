"""Java date-time patterns (`SimpleDateFormat` / `DateTimeFormatter` letters) over Arrow.

Flink formats and parses with Java pattern strings ('yyyy-MM-dd HH:mm:ss.SSS', 'EEE dd MMM').
Arrow's strftime/strptime use C patterns and are locale- and platform-dependent, so this
module interprets the Java letters itself, vectorized:

- `format_wall(ms, pattern)`: wall-clock epoch milliseconds (int64 numpy) -> string array,
  built per pattern token from numpy calendar fields and joined with Arrow.
- `parse(strings, pattern, lenient)`: string array -> wall-clock epoch ms (+ validity),
  via one RE2 regex per pattern (`pc.extract_regex`) and numpy calendar arithmetic.
  `lenient=True` is SimpleDateFormat (prefix match, out-of-range fields roll over:
  '32.01.2024' -> 2024-02-01); `lenient=False` is DateTimeFormatter SMART (whole string,
  fields range-checked, day clamped to the month's last day).
- `parse_default_timestamp` / `parse_default_date`: Flink's fixed default formats.

English names (Jan, Fri, AM) as Flink's default locale prints them.
"""

from __future__ import annotations

import datetime as _dt
import re
from functools import lru_cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.frozen import frozen_dataclass, mutable_dataclass

MS_PER_DAY = 86_400_000
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]  # index = dow0 (0 = Sunday)

_NUMERIC = set("yYuMLdDHhKkmsSFwWG")


@frozen_dataclass
class Token:
    letter: str  # '' for literal text
    count: int
    text: str = ""


@lru_cache(maxsize=256)
def tokenize(pattern: str) -> tuple[Token, ...]:
    """Split a Java pattern into letter runs and literal text ('quoted', '' = quote)."""
    out: list[Token] = []
    i, n = 0, len(pattern)
    lit: list[str] = []

    def flush() -> None:
        if lit:
            out.append(Token("", 0, "".join(lit)))
            lit.clear()

    while i < n:
        c = pattern[i]
        if c == "'":
            if i + 1 < n and pattern[i + 1] == "'":
                lit.append("'")
                i += 2
                continue
            end = i + 1
            buf = []
            while end < n:
                if pattern[end] == "'":
                    if end + 1 < n and pattern[end + 1] == "'":
                        buf.append("'")
                        end += 2
                        continue
                    break
                buf.append(pattern[end])
                end += 1
            lit.append("".join(buf))
            i = end + 1
            continue
        if ("a" <= c <= "z") or ("A" <= c <= "Z"):
            j = i
            while j < n and pattern[j] == c:
                j += 1
            flush()
            out.append(Token(c, j - i))
            i = j
            continue
        lit.append(c)
        i += 1
    flush()
    return tuple(out)


# ---------------------------------------------------------------------- calendar math


def days_from_civil(y: np.ndarray, m: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Epoch day of (year, month, day); months and days beyond their range roll over."""
    months = (y.astype(np.int64) - 1970) * 12 + (m.astype(np.int64) - 1)
    first = months.astype("datetime64[M]").astype("datetime64[D]").astype(np.int64)
    return first + d.astype(np.int64) - 1


def civil_from_days(days: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    dt = days.astype("datetime64[D]")
    y = dt.astype("datetime64[Y]").astype(np.int64) + 1970
    m = dt.astype("datetime64[M]").astype(np.int64) % 12 + 1
    d = (dt - dt.astype("datetime64[M]").astype("datetime64[D]")).astype(np.int64) + 1
    return y, m, d


def days_in_month(y: np.ndarray, m: np.ndarray) -> np.ndarray:
    return days_from_civil(y, m + 1, np.ones_like(m)) - days_from_civil(y, m, np.ones_like(m))


@mutable_dataclass
class Fields:
    """Calendar fields of wall-clock epoch milliseconds (all int64 numpy arrays)."""

    year: np.ndarray
    month: np.ndarray
    day: np.ndarray
    hour: np.ndarray
    minute: np.ndarray
    second: np.ndarray
    milli: np.ndarray
    dow0: np.ndarray  # 0 = Sunday
    doy: np.ndarray

    @staticmethod
    def of(ms: np.ndarray) -> Fields:
        ms = ms.astype(np.int64)
        days = np.floor_divide(ms, MS_PER_DAY)
        tod = ms - days * MS_PER_DAY
        y, m, d = civil_from_days(days)
        doy = days - days_from_civil(y, np.ones_like(y), np.ones_like(y)) + 1
        return Fields(y, m, d, tod // 3_600_000, tod // 60_000 % 60, tod // 1000 % 60, tod % 1000, (days + 4) % 7, doy)


# ---------------------------------------------------------------------- formatting


def _num(values: np.ndarray, width: int) -> pa.Array:
    s = pc.cast(pa.array(values), pa.string())
    return pc.utf8_lpad(s, width=width, padding="0") if width > 1 else s


def _names(values: np.ndarray, names: list[str]) -> pa.Array:
    return pa.array(names, pa.string()).take(pa.array(values))


def _us_week(f: Fields) -> np.ndarray:
    """SimpleDateFormat 'w' for the US locale: weeks start on Sunday, week 1 holds Jan 1."""
    doy0 = f.doy - 1
    jan1_dow = (f.dow0 - doy0) % 7
    week = (doy0 + jan1_dow) // 7 + 1
    year_len = days_from_civil(f.year + 1, np.ones_like(f.year), np.ones_like(f.year)) - days_from_civil(
        f.year, np.ones_like(f.year), np.ones_like(f.year)
    )
    return np.where(year_len - doy0 <= 6 - f.dow0, 1, week)


def _format_token(t: Token, f: Fields, n: int, zone: str) -> pa.Array | str:
    c, k = t.letter, t.count
    if c == "":
        return t.text
    if c == "Y":  # week-based year (US weeks): 2024-12-30 is in week 1 of 2025
        week_year = np.where((f.month == 12) & (_us_week(f) == 1), f.year + 1, f.year)
        return _num(week_year % 100, 2) if k == 2 else _num(week_year, k)
    if c == "y":
        return _num(f.year % 100, 2) if k == 2 else _num(f.year, k)
    if c in ("Q", "q"):
        quarter = (f.month - 1) // 3 + 1
        if k >= 4:
            return _names(quarter - 1, ["1st quarter", "2nd quarter", "3rd quarter", "4th quarter"])
        if k == 3:
            return _names(quarter - 1, ["Q1", "Q2", "Q3", "Q4"])
        return _num(quarter, k)
    if c == "u":
        return _num((f.dow0 + 6) % 7 + 1, k)
    if c in ("M", "L"):
        if k >= 4:
            return _names(f.month - 1, MONTHS)
        if k == 3:
            return _names(f.month - 1, [m[:3] for m in MONTHS])
        return _num(f.month, k)
    if c == "d":
        return _num(f.day, k)
    if c == "D":
        return _num(f.doy, k)
    if c == "E":
        return _names(f.dow0, DAYS if k >= 4 else [d[:3] for d in DAYS])
    if c == "a":
        return _names((f.hour >= 12).astype(np.int64), ["AM", "PM"])
    if c == "H":
        return _num(f.hour, k)
    if c == "k":
        return _num(np.where(f.hour == 0, 24, f.hour), k)
    if c == "K":
        return _num(f.hour % 12, k)
    if c == "h":
        h12 = f.hour % 12
        return _num(np.where(h12 == 0, 12, h12), k)
    if c == "m":
        return _num(f.minute, k)
    if c == "s":
        return _num(f.second, k)
    if c == "S":
        return _num(f.milli, k)
    if c == "w":
        return _num(_us_week(f), k)
    if c == "W":
        first_dow = (f.dow0 - (f.day - 1)) % 7
        return _num((f.day - 1 + first_dow) // 7 + 1, k)
    if c == "F":
        return _num((f.day - 1) // 7 + 1, k)
    if c == "G":
        return _names((f.year > 0).astype(np.int64), ["BC", "AD"])
    if c in ("z", "Z", "X", "x", "O", "V"):
        return _zone_text(c, k, zone)
    raise ValueError(f"Illegal pattern character '{c}'")


def _zone_text(c: str, k: int, zone: str) -> str:
    """Zone letters for a fixed zone (the wall clock was computed in `zone`)."""
    if zone.upper() in ("UTC", "Z", "GMT", "ETC/UTC"):
        if c == "X":
            return "Z"
        if c in ("Z", "x"):
            return "+0000"
        return "UTC"
    # a best effort: the zone's current offset
    try:
        import zoneinfo

        off = _dt.datetime.now(zoneinfo.ZoneInfo(zone)).utcoffset() or _dt.timedelta(0)
    except Exception:  # noqa: BLE001 - unknown zone id: print it as is
        return zone
    mins = int(off.total_seconds() // 60)
    sign = "+" if mins >= 0 else "-"
    hh, mm = divmod(abs(mins), 60)
    if c == "z":
        return zone
    if c == "X" and k == 1:
        return f"{sign}{hh:02d}"
    return f"{sign}{hh:02d}{':' if c == 'X' and k >= 3 else ''}{mm:02d}"


def format_wall(ms: np.ndarray, valid: np.ndarray, pattern: str, zone: str = "UTC") -> pa.Array:
    """Format wall-clock epoch milliseconds with a Java pattern (NULL where not `valid`)."""
    n = len(ms)
    f = Fields.of(np.where(valid, ms, 0))
    parts = [_format_token(t, f, n, zone) for t in tokenize(pattern)]
    if not parts:
        out = pa.array([""] * n, pa.string())
    else:
        arrays = [p if isinstance(p, pa.Array) else pa.scalar(p, pa.string()) for p in parts]
        if not any(isinstance(p, pa.Array) for p in arrays):
            arrays[0] = pa.repeat(arrays[0], n)
        out = pc.binary_join_element_wise(*arrays, "")
    if not valid.all():
        out = pc.if_else(pa.array(valid), out, pa.scalar(None, pa.string()))
    return out


# ---------------------------------------------------------------------- parsing


@frozen_dataclass
class _Parser:
    regex: str
    groups: tuple[tuple[str, str, int], ...]  # (group name, letter, count)


def _alt(names: list[str]) -> str:
    return "(?i:" + "|".join(sorted(names, key=len, reverse=True)) + ")"


@lru_cache(maxsize=256)
def _compile(pattern: str, lenient: bool) -> _Parser:
    toks = tokenize(pattern)
    parts: list[str] = []
    groups: list[tuple[str, str, int]] = []
    for i, t in enumerate(toks):
        if t.letter == "":
            parts.append(re.escape(t.text))
            continue
        c, k = t.letter, t.count
        name = f"f{i}"
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        abutting = nxt is not None and nxt.letter in _NUMERIC and not (nxt.letter in "ML" and nxt.count >= 3)
        if c in ("M", "L") and k >= 3:
            body = _alt(MONTHS + [m[:3] for m in MONTHS])
        elif c == "E":
            body = _alt(DAYS + [d[:3] for d in DAYS])
        elif c == "a":
            body = "(?i:AM|PM)"
        elif c == "G":
            body = "(?i:AD|BC)"
        elif c in ("z", "Z", "X", "x"):
            body = r"(?:Z|[+-]\d{2}(?::?\d{2})?|UTC|GMT)"
        elif c in _NUMERIC:
            if lenient:
                body = rf"\d{{{k}}}" if abutting else r"\d+"
            elif c in ("y", "u", "Y"):
                body = r"\d{2}" if k == 2 else (r"\d{1,9}" if k < 4 else rf"\d{{{k},9}}")
            elif c == "S":
                body = rf"\d{{{k}}}"
            else:
                body = r"\d{1,2}" if k == 1 and not abutting else rf"\d{{{max(k, 1)}}}"
        else:
            raise ValueError(f"Illegal pattern character '{c}'")
        parts.append(f"(?P<{name}>{body})")
        groups.append((name, c, k))
    regex = "^" + "".join(parts) + ("" if lenient else "$")
    return _Parser(regex, tuple(groups))


def _century_year(two_digit: np.ndarray) -> np.ndarray:
    """SimpleDateFormat's 2-digit year: within [now - 80 years, now + 20 years)."""
    start = _dt.date.today().year - 80
    base = start - start % 100
    y = base + two_digit
    return np.where(y < start, y + 100, y)


def parse(strings: pa.Array, pattern: str, lenient: bool) -> tuple[np.ndarray, np.ndarray]:
    """Parse with a Java pattern: (wall-clock epoch ms int64, valid mask). Missing fields
    default to 1970-01-01 00:00:00.000."""
    ms, ok, _ = parse_fine(strings, pattern, lenient)
    return ms, ok


def parse_fine(strings: pa.Array, pattern: str, lenient: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`parse`, plus the nanoseconds below the millisecond that a fraction of more than
    three digits (`SSSSSS`) carries."""
    n = len(strings)
    sub_ns = np.zeros(n, np.int64)
    p = _compile(pattern, lenient)
    if not p.groups:
        matched = pc.match_substring_regex(strings, p.regex)
        ok = matched.fill_null(False).to_numpy(zero_copy_only=False)
        return np.zeros(n, np.int64), ok, sub_ns
    st = pc.extract_regex(strings, p.regex)
    ok = st.is_valid().to_numpy(zero_copy_only=False)
    year = np.full(n, 1970, np.int64)
    month = np.ones(n, np.int64)
    day = np.ones(n, np.int64)
    hour = np.zeros(n, np.int64)
    minute = np.zeros(n, np.int64)
    second = np.zeros(n, np.int64)
    milli = np.zeros(n, np.int64)
    pm = np.zeros(n, bool)
    has_ampm = False
    twelve = False
    strict_ok = np.ones(n, bool)
    for name, c, k in p.groups:
        col = pc.struct_field(st, name)
        if c in ("M", "L") and k >= 3:
            lowered = pc.utf8_lower(col)
            idx_full = pc.index_in(lowered, value_set=pa.array([m.lower() for m in MONTHS]))
            idx_short = pc.index_in(lowered, value_set=pa.array([m[:3].lower() for m in MONTHS]))
            idx = pc.coalesce(idx_full, idx_short)
            month = _ints(idx) + 1
            continue
        if c in ("E", "G", "z", "Z", "X", "x"):
            continue
        if c == "a":
            has_ampm = True
            pm = pc.equal(pc.utf8_upper(col), "PM").fill_null(False).to_numpy(zero_copy_only=False)
            continue
        v = _ints(col)
        if c in ("y", "u", "Y"):
            if k == 2:
                lens = _ints(pc.utf8_length(col))
                year = np.where(lens == 2, _century_year(v) if lenient else 2000 + v, v)
            else:
                year = v
        elif c in ("M", "L"):
            month = v
        elif c == "d":
            day = v
        elif c == "D":
            month = np.ones(n, np.int64)
            day = v
        elif c in ("H", "k"):
            hour = np.where(v == 24, 0, v) if c == "k" else v
        elif c in ("h", "K"):
            twelve = True
            hour = np.where(v == 12, 0, v) if c == "h" else v
            if not lenient:
                strict_ok &= (v >= 1) & (v <= 12) if c == "h" else (v >= 0) & (v <= 11)
        elif c == "m":
            minute = v
        elif c == "s":
            second = v
        elif c == "S":
            if lenient:
                milli = v
            else:
                lens = _ints(pc.utf8_length(col))
                extra = np.clip(lens - 3, 0, 6)
                milli = np.where(
                    lens >= 3, v // np.power(10, np.maximum(lens - 3, 0)), v * np.power(10, np.maximum(3 - lens, 0))
                )
                sub_ns = np.where(lens > 3, (v % np.power(10, extra)) * np.power(10, 6 - extra), 0)
    if has_ampm or twelve:
        hour = hour + np.where(pm, 12, 0)
    if not lenient:
        strict_ok &= (month >= 1) & (month <= 12) & (day >= 1) & (day <= 31)
        strict_ok &= (hour >= 0) & (hour <= 23) & (minute >= 0) & (minute <= 59) & (second >= 0) & (second <= 59)
        safe_m = np.clip(month, 1, 12)
        day = np.minimum(day, days_in_month(year, safe_m))
        ok &= strict_ok
        month = safe_m
    ok &= (year > -5000) & (year < 300000)
    year = np.where(ok, year, 1970)
    days = days_from_civil(year, month, day)
    ms = days * MS_PER_DAY + hour * 3_600_000 + minute * 60_000 + second * 1000 + milli
    return np.where(ok, ms, 0), ok, np.where(ok, sub_ns, 0)


def parse_offsets(strings: pa.Array, pattern: str, lenient: bool) -> np.ndarray | None:
    """The zone offset (ms east of UTC) each row's text states through the pattern's zone
    letter (z, Z, X, x: 'Z', 'UTC', 'GMT', '+08', '+0800', '+08:00'), 0 where the row does not
    parse; None when the pattern has no zone letter. A lenient SimpleDateFormat (UNIX_TIMESTAMP)
    reads the wall-clock time in that offset instead of the session zone."""
    p = _compile(pattern, lenient)
    zone_groups = [name for name, c, _ in p.groups if c in ("z", "Z", "X", "x")]
    if not zone_groups:
        return None
    col = pc.struct_field(pc.extract_regex(strings, p.regex), zone_groups[-1])
    parts = pc.extract_regex(col, r"^(?P<sign>[+-])(?P<hh>\d{2}):?(?P<mm>\d{2})?$")
    hh = _ints(pc.struct_field(parts, "hh"))
    mm = _ints(pc.struct_field(parts, "mm"))
    minus = pc.equal(pc.struct_field(parts, "sign"), "-").fill_null(False).to_numpy(zero_copy_only=False)
    offset = (hh * 60 + mm) * 60_000
    return np.where(minus, -offset, offset)


def _ints(col: pa.Array) -> np.ndarray:
    """Digits (or indices) as int64, NULL/overflow as 0 (the row is invalid anyway)."""
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        col = pc.utf8_slice_codeunits(col, start=0, stop=12)  # keep int64 parsing safe
        col = pc.cast(pc.if_else(pc.equal(col, ""), pa.scalar(None, col.type), col), pa.int64())
    return col.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)


_DEFAULT_TS = r"^(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})(?: (?P<H>\d{1,2}):(?P<M>\d{1,2}):(?P<S>\d{1,2})(?:\.(?P<f>\d{0,9}))?)?$"
_DEFAULT_DATE = r"^\s*(?P<y>\d{1,4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})(?:[ ].*)?$"


def parse_default_timestamp(strings: pa.Array, smart: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Flink's default 'yyyy-[M]M-[d]d[ [H]H:[m]m:[s]s[.fraction]]' (no ISO 'T'):
    wall-clock epoch ms (fraction truncated to ms) and validity. `smart`: a day past the
    month's end (up to 31) is the month's last day, as java.time's SMART resolver makes it
    (TO_TIMESTAMP('2024-02-30 00:00:00') is 2024-02-29)."""
    return _parse_fixed(strings, _DEFAULT_TS, smart)


def parse_default_date(strings: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """TO_DATE's default: 'yyyy-MM-dd' optionally followed by a time part: epoch days."""
    ms, ok = _parse_fixed(strings, _DEFAULT_DATE)
    return np.floor_divide(ms, MS_PER_DAY), ok


def _parse_fixed(strings: pa.Array, regex: str, smart: bool = False) -> tuple[np.ndarray, np.ndarray]:
    n = len(strings)
    st = pc.extract_regex(strings, regex)
    ok = st.is_valid().to_numpy(zero_copy_only=False)
    names = [st.type.field(i).name for i in range(st.type.num_fields)]

    def field(name: str, default: int) -> np.ndarray:
        if name not in names:
            return np.full(n, default, np.int64)
        col = pc.struct_field(st, name)
        v = _ints(col)
        empty = pc.equal(col, "").fill_null(True).to_numpy(zero_copy_only=False)
        return np.where(empty, default, v)

    y, m, d = field("y", 1970), field("m", 1), field("d", 1)
    hh, mi, ss = field("H", 0), field("M", 0), field("S", 0)
    ms = np.zeros(n, np.int64)
    if "f" in names:
        frac = pc.utf8_rpad(
            pc.utf8_slice_codeunits(pc.struct_field(st, "f").fill_null(""), start=0, stop=3), width=3, padding="0"
        )
        ms = _ints(frac)
    ok &= (m >= 1) & (m <= 12) & (d >= 1) & (hh <= 23) & (mi <= 59) & (ss <= 59)
    month_len = days_in_month(np.where(ok, y, 1970), np.clip(m, 1, 12))
    if smart:
        ok &= d <= 31
        d = np.minimum(d, month_len)
    else:
        ok &= d <= month_len
    y = np.where(ok, y, 1970)
    m = np.where(ok, m, 1)
    d = np.where(ok, d, 1)
    out = days_from_civil(y, m, d) * MS_PER_DAY + hh * 3_600_000 + mi * 60_000 + ss * 1000 + ms
    return np.where(ok, out, 0), ok
