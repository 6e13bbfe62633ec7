"""The one parser per value type of a configuration key or a `WITH` option.

Each parser takes the text a user wrote and returns the typed value, or raises
`ValueError` whose message says what is accepted; `ConfigOption` adds the key. The
formatters turn a typed value back into the text the docs and `SET;` show.

Durations follow Flink's `TimeUtils.parseDuration`: a non-negative whole number, optional
blanks, an optional unit label (none = milliseconds): `d`/`day(s)`, `h`/`hour(s)`,
`min`/`m`/`minute(s)`, `s`/`sec(s)`/`second(s)`, `ms`/`milli(s)`/`millisecond(s)`,
`µs`/`micro(s)`/`microsecond(s)`, `ns`/`nano(s)`/`nanosecond(s)`; also ISO-8601 (`PT10S`).
streamsql works in milliseconds, so a duration is returned as int milliseconds
(sub-millisecond values round down). Memory sizes follow Flink's `MemorySize.parse`:
`b`/`bytes`, `k`/`kb`/`kibibytes`, `m`/`mb`/`mebibytes`, `g`/`gb`/`gibibytes`,
`t`/`tb`/`tebibytes` (powers of 1024; none = bytes).
"""

from __future__ import annotations

import re

_DURATION_UNITS: dict[str, tuple[int, int]] = {}  # label -> (numerator, denominator) in ms
for _labels, _num, _den in (
    (("d", "day", "days"), 86_400_000, 1),
    (("h", "hour", "hours"), 3_600_000, 1),
    (("min", "m", "minute", "minutes"), 60_000, 1),
    (("s", "sec", "secs", "second", "seconds"), 1000, 1),
    (("ms", "milli", "millis", "millisecond", "milliseconds"), 1, 1),
    (("µs", "micro", "micros", "microsecond", "microseconds"), 1, 1000),
    (("ns", "nano", "nanos", "nanosecond", "nanoseconds"), 1, 1_000_000),
):
    for _label in _labels:
        _DURATION_UNITS[_label] = (_num, _den)

DURATION_ACCEPTED = "a duration such as '10 s', '500 ms', '1 min', '1 h' or '2 d' (a bare number is milliseconds)"
MEMORY_ACCEPTED = "a memory size such as '64 mb', '1 gb' or '512 kb' (a bare number is bytes)"

_ISO = re.compile(
    r"P(?:(?P<d>\d+)D)?(?:T(?:(?P<h>\d+)H)?(?:(?P<m>\d+)M)?(?:(?P<s>\d+(?:\.\d{1,9})?)S)?)?", re.IGNORECASE
)


def parse_duration_ms(text: str) -> int:
    """Flink duration text -> whole milliseconds (see the module docstring)."""
    t = str(text).strip()
    if not t:
        raise ValueError(f"expected {DURATION_ACCEPTED}, got an empty string")
    iso = _ISO.fullmatch(t)
    if iso is not None and t.upper() not in ("P", "PT"):
        d, h, m = (int(iso.group(g) or 0) for g in "dhm")
        seconds = float(iso.group("s") or 0)
        return ((d * 24 + h) * 60 + m) * 60_000 + int(round(seconds * 1000))
    m_num = re.match(r"\d+", t)
    if m_num is None:
        raise ValueError(f"expected {DURATION_ACCEPTED}")
    unit = t[m_num.end() :].strip().lower()
    if unit not in _DURATION_UNITS and unit != "":
        raise ValueError(
            f"unknown time unit '{unit}': expected {DURATION_ACCEPTED}; units: d, h, min (m), s, ms, µs, ns "
            "(also day(s), hour(s), minute(s), sec(s)/second(s), milli(s)/millisecond(s), micro(s), nano(s))"
        )
    num, den = _DURATION_UNITS.get(unit, (1, 1))
    return int(m_num.group()) * num // den


def format_duration_ms(ms: int) -> str:
    """The shortest exact Flink spelling of a duration: 600000 -> '10 min', 0 -> '0 ms'."""
    for label, size in (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000)):
        if ms and ms % size == 0:
            return f"{ms // size} {label}"
    return f"{ms} ms"


_MEMORY_UNITS: dict[str, int] = {}
for _labels2, _size in (
    (("b", "bytes"), 1),
    (("k", "kb", "kibibytes"), 1 << 10),
    (("m", "mb", "mebibytes"), 1 << 20),
    (("g", "gb", "gibibytes"), 1 << 30),
    (("t", "tb", "tebibytes"), 1 << 40),
):
    for _label in _labels2:
        _MEMORY_UNITS[_label] = _size


def parse_memory_size(text: str) -> int:
    """Flink memory size text ('64 mb', '1gb', '100') -> bytes."""
    t = str(text).strip()
    m_num = re.match(r"\d+", t)
    if m_num is None:
        raise ValueError(f"expected {MEMORY_ACCEPTED}")
    unit = t[m_num.end() :].strip().lower()
    if unit and unit not in _MEMORY_UNITS:
        raise ValueError(f"unknown memory unit '{unit}': expected {MEMORY_ACCEPTED}; units: b, kb, mb, gb, tb")
    return int(m_num.group()) * _MEMORY_UNITS.get(unit, 1)


def format_memory_size(size: int) -> str:
    for label, unit in (("tb", 1 << 40), ("gb", 1 << 30), ("mb", 1 << 20), ("kb", 1 << 10)):
        if size and size % unit == 0:
            return f"{size // unit} {label}"
    return f"{size} bytes"


def parse_bool(text: str) -> bool:
    """'true' / 'false' in any case (Flink accepts nothing else)."""
    t = str(text).strip().lower()
    if t == "true":
        return True
    if t == "false":
        return False
    raise ValueError("expected 'true' or 'false'")


def format_bool(value: bool) -> str:
    return "true" if value else "false"


def parse_int(text: str) -> int:
    t = str(text).strip()
    if not re.fullmatch(r"[+-]?\d+", t):
        raise ValueError("expected an integer")
    return int(t)


def parse_float(text: str) -> float:
    t = str(text).strip()
    try:
        return float(t)
    except ValueError:
        raise ValueError("expected a number such as '2.0'") from None


def parse_string(text: str) -> str:
    return str(text)


def parse_list(text: str) -> tuple[str, ...]:
    """Flink's list syntax: items separated by ';' (also ',' here); blanks trimmed."""
    return tuple(p.strip() for p in re.split(r"[;,]", str(text)) if p.strip())


def format_list(values: tuple[str, ...]) -> str:
    return ";".join(values)


def parse_enum(text: str, values: tuple[str, ...]) -> str:
    """One of `values`, in any case (as Flink's enum options); returns the declared spelling."""
    t = str(text).strip()
    for v in values:
        if v.lower() == t.lower():
            return v
    raise ValueError("expected one of " + ", ".join(f"'{v}'" for v in values))
