"""CAST / TRY_CAST audited pair by pair against Flink 2.3, as two data tables.

`ALLOWED` is which primitive type pairs Flink's SQL validation accepts (checked over all
18 x 18 pairs, plus the constructed types); `VALUES` is what an accepted pair produces for
chosen inputs, or that it fails the job. Where each expectation comes from:
  IT      Flink's CastFunctionITCase (apache/flink, flink-table-planner tests)
  RULE    Flink's cast rule or parser source (…/functions/casting/*CastRule.java,
          BinaryStringDataUtil, BinaryStringData.trim, DateTimeUtils)
  CORPUS  the Flink-produced conformance corpus (tests/conformance)
docs/functions.md ("CAST and TRY_CAST") describes the same rules for users.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal as D  # noqa: N817 - short for the table rows
from typing import Any

import pytest

from runtime.errors import EvaluationError
from runtime.functions._testing import call, refs, run
from runtime.functions.cast import cast_refusal, cast_supported
from runtime.types import (
    ARRAY,
    BIGINT,
    BOOLEAN,
    BYTES,
    CHAR,
    DATE,
    DECIMAL,
    DOUBLE,
    FLOAT,
    INT,
    INTERVAL_DAY_TIME,
    INTERVAL_YEAR_MONTH,
    MAP,
    ROW,
    SMALLINT,
    STRING,
    TIME,
    TIMESTAMP,
    TIMESTAMP_LTZ,
    TINYINT,
    VARCHAR,
    DataType,
)


def BINARY(n: int) -> DataType:  # noqa: N802 - Flink's spelling
    return DataType("BINARY", True, precision=n)


def VARBINARY(n: int) -> DataType:  # noqa: N802
    return DataType("VARBINARY", True, precision=n)


def MULTISET(element: DataType) -> DataType:  # noqa: N802
    return DataType("MULTISET", True, children=(element,))


# ---------------------------------------------------------------------- which pairs
PRIMITIVES: dict[str, DataType] = {
    "BOOLEAN": BOOLEAN(),
    "TINYINT": TINYINT(),
    "SMALLINT": SMALLINT(),
    "INT": INT(),
    "BIGINT": BIGINT(),
    "DECIMAL": DECIMAL(10, 2),
    "FLOAT": FLOAT(),
    "DOUBLE": DOUBLE(),
    "CHAR": CHAR(3),
    "VARCHAR": STRING(),
    "BINARY": BINARY(2),
    "VARBINARY": BYTES(),
    "DATE": DATE(),
    "TIME": TIME(0),
    "TIMESTAMP": TIMESTAMP(3),
    "TIMESTAMP_LTZ": TIMESTAMP_LTZ(3),
    "INTERVAL_YEAR_MONTH": INTERVAL_YEAR_MONTH(),
    "INTERVAL_DAY_TIME": INTERVAL_DAY_TIME(),
}
_NUMERIC = {"TINYINT", "SMALLINT", "INT", "BIGINT", "DECIMAL", "FLOAT", "DOUBLE"}
_TEXT = {"CHAR", "VARCHAR"}
# target -> the sources Flink 2.3 accepts (IT's fromCase/failValidation lists, RULE for the
# pairs it does not list: no runtime rule exists for string -> INTERVAL, interval <-> number)
ALLOWED: dict[str, set[str]] = {
    "BOOLEAN": {"BOOLEAN"} | _NUMERIC | _TEXT,
    **{n: {"BOOLEAN"} | _NUMERIC | _TEXT for n in _NUMERIC},
    "CHAR": set(PRIMITIVES),
    "VARCHAR": set(PRIMITIVES),
    "BINARY": _TEXT | {"BINARY", "VARBINARY"},
    "VARBINARY": _TEXT | {"BINARY", "VARBINARY"},
    "DATE": _TEXT | {"DATE", "TIMESTAMP", "TIMESTAMP_LTZ"},
    "TIME": _TEXT | {"TIME", "TIMESTAMP", "TIMESTAMP_LTZ"},
    "TIMESTAMP": _TEXT | {"DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ"},
    "TIMESTAMP_LTZ": _TEXT | {"DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ"},
    "INTERVAL_YEAR_MONTH": {"INTERVAL_YEAR_MONTH"},
    "INTERVAL_DAY_TIME": {"INTERVAL_DAY_TIME"},
}


def test_primitive_pairs_match_flink() -> None:
    """All 324 ordered pairs of primitive types: accepted exactly where Flink accepts."""
    wrong = [
        (s, d)
        for d, dst in PRIMITIVES.items()
        for s, src in PRIMITIVES.items()
        if cast_supported(src, dst) != (s in ALLOWED[d])
    ]
    assert wrong == []
    assert len(PRIMITIVES) ** 2 == 324


@pytest.mark.parametrize(
    ("src", "dst", "message"),
    [
        (TIMESTAMP(3), BIGINT(), "UNIX_TIMESTAMP(CAST(timestamp_col AS STRING))"),  # RULE TimestampToNumeric
        (TIMESTAMP_LTZ(3), INT(), "The cast from TIMESTAMP_LTZ type to NUMERIC type is not allowed"),
        (BIGINT(), TIMESTAMP(3), "TO_TIMESTAMP(FROM_UNIXTIME(numeric_col))"),  # RULE NumericToTimestamp
        (INT(), TIMESTAMP_LTZ(3), "TO_TIMESTAMP_LTZ(numeric_col, precision)"),
        (DATE(), TIME(0), "Cast function cannot convert value of type DATE to type TIME"),
        (BOOLEAN(), DATE(), "Cast function cannot convert value of type BOOLEAN to type DATE"),
        (BYTES(), INT(), "Cast function cannot convert value of type VARBINARY(2147483647) to type INTEGER"),
    ],
)
def test_refusals_carry_flinks_message(src: DataType, dst: DataType, message: str) -> None:
    refusal = cast_refusal(src, dst)
    assert refusal is not None and message in refusal


@pytest.mark.parametrize(
    ("src", "dst", "ok"),
    [
        (ARRAY(INT()), ARRAY(STRING()), True),  # IT constructedTypes
        (ARRAY(STRING()), ARRAY(INT()), True),
        (ARRAY(INT()), ARRAY(DATE()), False),  # the element pair is refused
        (ARRAY(INT()), STRING(), True),  # IT toStringCasts: "[NULL, 456]"
        (MAP(INT(), INT()), MAP(STRING(), STRING()), True),
        (MAP(STRING(), INT()), STRING(), True),
        (ROW([("a", INT()), ("b", TIME(0))]), ROW([("x", BIGINT()), ("y", STRING())]), True),
        (ROW([("a", INT())]), ROW([("x", INT()), ("y", INT())]), False),  # arity differs
        (ROW([("a", INT())]), STRING(), True),
        (MULTISET(INT()), MULTISET(BIGINT()), True),
        (ARRAY(INT()), MAP(INT(), INT()), False),
        (STRING(), ARRAY(STRING()), False),
        (ARRAY(INT()), INT(), False),
    ],
)
def test_constructed_pairs(src: DataType, dst: DataType, ok: bool) -> None:
    assert cast_supported(src, dst) is ok


# ---------------------------------------------------------------------- what they give
FAIL = "<fails the job>"
SH = "Asia/Shanghai"  # IT runs in this session zone
UTC = dt.UTC

# (function, source type, input, target type, expected rendering | None | FAIL[, zone])
VALUES: list[tuple[Any, ...]] = [
    # string -> integers: Flink trims spaces only, accepts a dropped fraction (RULE toLong)
    ("cast", STRING(), "  12 ", INT(), "12"),  # CORPUS conversion_col_04 (' 7 ')
    ("cast", STRING(), "\t12", INT(), FAIL),  # RULE BinaryStringData.trim: 0x20 only
    ("cast", STRING(), "1.234", TINYINT(), "1"),  # IT
    ("cast", STRING(), ".5", INT(), "0"),  # RULE: no integer digits is 0
    ("cast", STRING(), "5.", INT(), "5"),
    ("cast", STRING(), "1.2x", INT(), FAIL),
    ("cast", STRING(), "", INT(), FAIL),
    ("cast", STRING(), "+", INT(), FAIL),
    ("cast", STRING(), "1e3", INT(), FAIL),
    ("cast", STRING(), "-130", TINYINT(), FAIL),  # IT: out of range fails, it does not wrap
    ("cast", STRING(), "-32769", SMALLINT(), FAIL),  # IT
    ("cast", STRING(), "-3276913443134", INT(), FAIL),  # IT
    ("cast", STRING(), "-3276913443134", BIGINT(), "-3276913443134"),  # IT
    ("cast", STRING(), "-9223372036854775808", BIGINT(), "-9223372036854775808"),
    ("cast", STRING(), "9223372036854775808", BIGINT(), FAIL),
    ("try_cast", STRING(), "9999999999", INT(), None),  # CORPUS conversion_lit_x01
    ("try_cast", STRING(), "Apache", INT(), None),
    # string -> floating point: Java's parseDouble (trims <= U+0020, d/f suffix, NaN, Infinity)
    ("cast", STRING(), "1.234", DOUBLE(), "1.234"),  # IT
    ("cast", STRING(), "\t1.5\n", DOUBLE(), "1.5"),
    ("cast", STRING(), "1.5d", DOUBLE(), "1.5"),
    ("cast", STRING(), "-Infinity", DOUBLE(), "-Infinity"),  # CORPUS
    ("cast", STRING(), "NaN", FLOAT(), "NaN"),  # CORPUS
    ("cast", STRING(), "inf", DOUBLE(), FAIL),  # Java spells it Infinity
    ("cast", STRING(), "1e400", DOUBLE(), "Infinity"),
    ("cast", STRING(), "Apache", FLOAT(), FAIL),  # IT
    ("cast", STRING(), "-3276913443134", FLOAT(), "-3.2769135E12"),  # IT (same float)
    # string -> DECIMAL: HALF_UP; a value that does not fit fails (RULE toDecimal, IT)
    ("cast", STRING(), "1.2", DECIMAL(5, 3), "1.200"),  # IT
    ("cast", STRING(), "1.235", DECIMAL(3, 2), "1.24"),  # CORPUS conversion_lit_x01
    ("cast", STRING(), "-1.235", DECIMAL(3, 2), "-1.24"),  # CORPUS
    ("cast", STRING(), "1e-5", DECIMAL(10, 8), "0.00001000"),  # CORPUS
    ("cast", STRING(), "\t1.5e1 ", DECIMAL(5, 2), "15.00"),  # RULE: trims space, tab, newline
    ("cast", STRING(), "12345.6789", DECIMAL(8, 4), FAIL),  # IT decimalCasts
    ("try_cast", STRING(), "12345.6789", DECIMAL(8, 4), None),
    ("cast", STRING(), "foo", DECIMAL(5, 3), FAIL),  # IT
    # string -> BOOLEAN: t/true/y/yes/1 and f/false/n/no/0, any case, no trimming
    ("cast", CHAR(4), "true", BOOLEAN(), "TRUE"),  # IT
    ("cast", VARCHAR(5), "FalsE", BOOLEAN(), "FALSE"),  # IT
    ("cast", STRING(), "Y", BOOLEAN(), "TRUE"),  # RULE TRUE_STRINGS
    ("cast", STRING(), "0", BOOLEAN(), "FALSE"),
    ("cast", STRING(), "", BOOLEAN(), FAIL),  # IT
    ("cast", STRING(), " true ", BOOLEAN(), FAIL),  # CORPUS conversion_lit_03_err03_cast
    ("try_cast", STRING(), "Apache Flink", BOOLEAN(), None),
    # string -> DATE / TIME / TIMESTAMP
    ("cast", STRING(), "123", DATE(), "0123-01-01"),  # IT
    ("cast", STRING(), "2021-09-27 12:34:56.123456789", DATE(), "2021-09-27"),  # IT
    ("cast", STRING(), "2021/09/27", DATE(), FAIL),  # IT
    ("cast", STRING(), "2024-02-30", DATE(), FAIL),  # CORPUS conversion_lit_02_err02_cast
    ("try_cast", STRING(), "2024-02-30", DATE(), None),  # CORPUS
    ("cast", STRING(), "12:34:56.123456789", TIME(0), "12:34:56"),  # IT
    ("cast", STRING(), "12:34", TIME(0), "12:34:00"),  # CORPUS
    ("cast", STRING(), "2021-09-27", TIME(0), FAIL),  # IT
    ("cast", STRING(), "25:00:00", TIME(0), "25:00:00"),  # RULE DateTimeUtils.parseTime: no range check
    ("cast", STRING(), "123", TIME(0), "23:00:00"),  # IT (123 hours; the hour prints its last two digits)
    ("cast", STRING(), "123:45", TIME(0), "23:45:00"),  # IT
    ("cast", STRING(), "2021-09-27 12:34:56", TIME(0), FAIL),  # IT
    ("cast", STRING(), "2021-09-27", TIMESTAMP(9), "2021-09-27 00:00:00.000000000"),  # IT
    ("cast", STRING(), "2021-09-27 12:34:56.123456789", TIMESTAMP(9), "2021-09-27 12:34:56.123456789"),  # IT
    ("cast", STRING(), "2024-01-01T10:00:00", TIMESTAMP(3), FAIL),  # RULE DEFAULT_TIMESTAMP_FORMATTER: ' ' only
    ("cast", STRING(), "2024-01-01 10:00", TIMESTAMP(3), FAIL),  # RULE: both colons
    ("cast", STRING(), "2024-02-30", TIMESTAMP(3), "2024-02-29 00:00:00.000"),  # RULE: SMART resolver
    ("cast", STRING(), "2024-01-01 10:00:00.9999", TIMESTAMP(3), "2024-01-01 10:00:00.999"),  # truncates
    ("cast", STRING(), "123", TIMESTAMP(9), FAIL),  # IT
    ("cast", STRING(), "2021/09/27", TIMESTAMP(9), FAIL),  # IT
    ("try_cast", STRING(), "not a date", TIMESTAMP(3), None),  # CORPUS conversion_col_02_err02_cast
    ("cast", STRING(), "2021-09-27 12:34:56.123", TIMESTAMP_LTZ(3), "2021-09-27 12:34:56.123", SH),  # IT
    ("cast", STRING(), "Apache", TIMESTAMP_LTZ(3), FAIL, SH),  # IT
    # string -> bytes: UTF-8, BINARY(n) zero-padded, both cut to n bytes
    ("cast", STRING(), "a", BINARY(2), "x'6100'"),  # IT
    ("cast", STRING(), "foobar", BINARY(2), "x'666f'"),  # IT
    ("cast", STRING(), "666F", BINARY(2), "x'3636'"),  # IT
    ("cast", CHAR(4), "foo ", VARBINARY(4), "x'666f6f20'"),  # IT (CHAR(4) 'foo' is padded)
    ("cast", STRING(), "AAbbCcDdEe", VARBINARY(4), "x'41416262'"),  # IT
    ("cast", STRING(), "abc", BYTES(), "x'616263'"),  # CORPUS
    # bytes -> bytes / string
    ("cast", BINARY(1), b"o", BINARY(2), "x'6f00'"),  # IT
    ("cast", BYTES(), bytes([0, 1, 2, 3, 4]), BINARY(2), "x'0001'"),  # IT
    ("cast", BYTES(), bytes([0, 1, 2, 3, 4]), VARBINARY(4), "x'00010203'"),  # IT
    ("cast", BYTES(), bytes([0, 1, 2, 3, 4]), STRING(), "\x00\x01\x02\x03\x04"),  # IT
    ("cast", BYTES(), b"\xff\xfe\x00", STRING(), "\ufffd\ufffd\x00"),  # CORPUS conversion_col_01
    ("try_cast", BYTES(), b"\xff\xfe\x00", STRING(), "\ufffd\ufffd\x00"),  # the CAST does not fail
    # numeric narrowing: integers wrap, floating point truncates and saturates into int
    ("cast", SMALLINT(), 12345, TINYINT(), "57"),  # IT
    ("cast", INT(), 1234567, TINYINT(), "-121"),  # IT
    ("cast", BIGINT(), 12345678901, SMALLINT(), "7221"),  # IT
    ("cast", BIGINT(), 12345678901, INT(), "-539222987"),  # IT
    ("cast", INT(), 300, TINYINT(), "44"),  # CORPUS
    ("try_cast", INT(), 300, TINYINT(), "44"),  # wrapping is no failure
    ("cast", DECIMAL(10, 3), D("9123.870"), TINYINT(), "-93"),  # IT
    ("cast", DECIMAL(10, 3), D("91235.870"), SMALLINT(), "25699"),  # IT
    ("cast", DECIMAL(20, 3), D("3276913443134.870"), INT(), "-146603714"),  # IT
    ("cast", DECIMAL(20, 3), D("3276913443134.870"), BIGINT(), "3276913443134"),  # IT
    ("cast", DECIMAL(5, 2), D("-1.99"), INT(), "-1"),
    ("cast", FLOAT(), 123456.78, SMALLINT(), "-7616"),  # IT: via int, then wrap
    ("cast", DOUBLE(), 123456.789, SMALLINT(), "-7616"),  # IT
    ("cast", FLOAT(), 9234567891.12, INT(), "2147483647"),  # IT: saturates
    ("cast", DOUBLE(), 9234567891.12345, BIGINT(), "9234567891"),  # IT
    ("cast", DOUBLE(), float("nan"), INT(), "0"),  # RULE: Java (int) NaN
    ("cast", DOUBLE(), float("inf"), BIGINT(), "9223372036854775807"),
    ("cast", DOUBLE(), -1.7976931348623157e308, FLOAT(), "-Infinity"),  # IT numericBounds
    ("cast", DECIMAL(30, 20), D("123456789.12345678912345678900"), DOUBLE(), "1.2345678912345679E8"),  # IT
    ("cast", FLOAT(), 0.1, DOUBLE(), "0.10000000149011612"),  # CORPUS
    ("cast", INT(), 1234567, DOUBLE(), "1234567.0"),  # IT
    ("cast", BIGINT(), 12345678901, FLOAT(), "1.2345679E10"),  # IT (float)12345678901L
    ("cast", DECIMAL(20, 3), D("3276913443134.870"), FLOAT(), "3.2769135E12"),  # IT
    ("cast", BOOLEAN(), True, FLOAT(), "1.0"),  # IT
    ("cast", FLOAT(), -123.456, BOOLEAN(), "TRUE"),  # IT: SQL accepts FLOAT -> BOOLEAN
    # to DECIMAL: HALF_UP, a value that does not fit is NULL (IT decimalCasts, numericBounds)
    ("cast", DOUBLE(), 3.123456, DECIMAL(8, 4), "3.1235"),  # IT
    ("cast", DECIMAL(10, 8), D("12.34561234"), DECIMAL(8, 4), "12.3456"),  # IT
    ("cast", INT(), 12345, DECIMAL(8, 4), None),  # IT
    ("cast", FLOAT(), 12345.678912, DECIMAL(8, 4), None),  # IT
    ("cast", DOUBLE(), 1.7976931348623157e308, DECIMAL(38, 32), None),  # IT
    ("cast", FLOAT(), 3.4028234663852886e38, DECIMAL(38, 32), None),  # IT
    ("cast", DOUBLE(), float("nan"), DECIMAL(5, 2), None),
    ("cast", FLOAT(), -12.345, DECIMAL(5, 3), "-12.345"),  # IT
    ("cast", FLOAT(), 0.1, DECIMAL(10, 9), "0.100000001"),  # RULE: BigDecimal.valueOf((double) f)
    ("cast", DOUBLE(), -2.5, DECIMAL(2, 0), "-3"),
    ("cast", DECIMAL(5, 2), D("-1.95"), DECIMAL(5, 1), "-2.0"),
    ("cast", DECIMAL(5, 2), D("999.99"), DECIMAL(4, 1), None),
    ("cast", BOOLEAN(), True, DECIMAL(5, 3), "1.000"),  # IT
    # BOOLEAN <-> numbers
    ("cast", BOOLEAN(), False, TINYINT(), "0"),  # IT
    ("cast", BOOLEAN(), True, DOUBLE(), "1.0"),  # IT
    ("cast", TINYINT(), -5, BOOLEAN(), "TRUE"),  # IT
    ("cast", BIGINT(), 0, BOOLEAN(), "FALSE"),  # IT
    ("cast", DOUBLE(), 0.5, BOOLEAN(), "TRUE"),  # IT: SQL accepts DOUBLE -> BOOLEAN
    ("cast", DECIMAL(4, 3), D("0.000"), BOOLEAN(), "FALSE"),
    # anything -> STRING / CHAR(n) / VARCHAR(n)
    ("cast", BOOLEAN(), True, STRING(), "TRUE"),  # IT
    ("cast", DECIMAL(4, 3), D("9.870"), STRING(), "9.870"),  # IT
    ("cast", FLOAT(), 123.456, STRING(), "123.456"),  # IT
    ("cast", DOUBLE(), -123.456789, STRING(), "-123.456789"),  # IT
    ("cast", DOUBLE(), 1e7, STRING(), "1.0E7"),  # CORPUS
    ("cast", DOUBLE(), -0.0, STRING(), "-0.0"),  # CORPUS
    ("cast", DATE(), dt.date(2021, 9, 24), STRING(), "2021-09-24"),  # IT
    ("cast", DATE(), dt.date(2021, 9, 24), CHAR(3), "202"),  # IT
    ("cast", TIME(0), dt.time(12, 34, 56), STRING(), "12:34:56"),  # IT
    ("cast", TIMESTAMP(6), dt.datetime(2021, 9, 24, 12, 34, 56, 123456), STRING(), "2021-09-24 12:34:56.123456"),
    ("cast", TIMESTAMP(4), dt.datetime(2021, 9, 24, 12, 34, 56, 123400), STRING(), "2021-09-24 12:34:56.1234"),
    ("cast", TIMESTAMP(3), dt.datetime(2021, 9, 24, 12, 34, 56, 100000), STRING(), "2021-09-24 12:34:56.100"),
    (
        "cast",
        TIMESTAMP_LTZ(3),
        dt.datetime(2021, 9, 24, 14, 14, 56, 100000, UTC),
        STRING(),
        "2021-09-24 22:14:56.100",
        SH,
    ),
    ("cast", INTERVAL_YEAR_MONTH(), 84, STRING(), "+7-00"),  # IT
    ("cast", INTERVAL_YEAR_MONTH(), 12334, STRING(), "+1027-10"),  # IT
    ("cast", INTERVAL_YEAR_MONTH(), -123, STRING(), "-10-03"),  # IT (as a MAP value)
    ("cast", INTERVAL_DAY_TIME(), dt.timedelta(milliseconds=10), STRING(), "+0 00:00:00.010"),  # IT
    ("cast", INTERVAL_DAY_TIME(), dt.timedelta(milliseconds=123456789), STRING(), "+1 10:17:36.789"),  # IT
    ("cast", ARRAY(INT()), [None, 456], STRING(), "[NULL, 456]"),  # IT
    ("cast", ROW([("f0", INT()), ("f1", STRING())]), {"f0": None, "f1": "abc"}, STRING(), "(NULL, abc)"),  # IT
    ("cast", MAP(STRING(), INT()), [("a", 1), ("b", None)], STRING(), "{a=1, b=NULL}"),
    ("cast", ARRAY(BYTES()), [b"ab"], STRING(), "[ab]"),  # RULE: elements cast with BinaryToString
    ("cast", CHAR(3), "foo", CHAR(5), "foo  "),  # IT
    ("cast", CHAR(5), "foo  ", STRING(), "foo  "),  # IT
    ("cast", STRING(), "abcdef", VARCHAR(3), "abc"),  # IT
    ("cast", INT(), 12345, CHAR(2), "12"),
    ("cast", BOOLEAN(), True, CHAR(3), "TRU"),
    ("cast", STRING(), "\U0001f600abc", VARCHAR(2), "\U0001f600a"),  # code points, not bytes
    # datetime <-> datetime
    ("cast", DATE(), dt.date(2021, 9, 24), TIMESTAMP(3), "2021-09-24 00:00:00.000"),  # IT
    ("cast", TIME(0), dt.time(12, 34, 56), TIMESTAMP(3), "1970-01-01 12:34:56.000"),  # IT
    ("cast", TIME(0), dt.time(12, 34, 56), TIMESTAMP_LTZ(3), "1970-01-01 12:34:56.000", SH),  # IT
    ("cast", DATE(), dt.date(2021, 9, 24), TIMESTAMP_LTZ(3), "2021-09-24 00:00:00.000", SH),  # IT
    ("cast", TIMESTAMP(6), dt.datetime(2021, 9, 24, 12, 34, 56, 123456), TIMESTAMP(4), "2021-09-24 12:34:56.1234"),
    # a lower precision cuts the value itself (RULE DateTimeUtils.truncate), not only its text
    ("cast", TIMESTAMP(3), dt.datetime(2021, 9, 24, 12, 34, 56, 789000), TIMESTAMP(0), "2021-09-24 12:34:56"),
    ("cast", TIMESTAMP(3), dt.datetime(1969, 12, 31, 23, 59, 59, 500000), TIMESTAMP(0), "1970-01-01 00:00:00"),
    ("cast", STRING(), "1969-12-31 23:59:59.5", TIMESTAMP(0), "1969-12-31 23:59:59"),  # parsing floors
    ("cast", TIMESTAMP(3), dt.datetime(2021, 9, 24, 12, 34, 56, 789000), TIME(0), "12:34:56"),
    # nanosecond precision reaches 1677..2262 only here: a clear error, not Arrow's
    ("cast", TIMESTAMP(3), dt.datetime(9999, 12, 31, 23, 59, 59), TIMESTAMP(9), FAIL),
    ("cast", TIMESTAMP(6), dt.datetime(2021, 9, 24, 12, 34, 56, 123456), DATE(), "2021-09-24"),  # IT
    ("cast", TIMESTAMP(6), dt.datetime(2021, 9, 24, 12, 34, 56, 123456), TIME(0), "12:34:56"),  # IT
    ("cast", TIMESTAMP(3), dt.datetime(1969, 12, 31, 23, 59, 59, 999000), DATE(), "1970-01-01"),  # CORPUS quirk
    ("cast", TIMESTAMP_LTZ(3), dt.datetime(2021, 9, 24, 23, 14, 56, 0, UTC), DATE(), "2021-09-25", SH),  # IT
    ("cast", TIMESTAMP_LTZ(3), dt.datetime(2021, 9, 24, 23, 14, 56, 0, UTC), TIME(0), "07:14:56", SH),  # IT
    (
        "cast",
        TIMESTAMP_LTZ(3),
        dt.datetime(2021, 9, 24, 14, 14, 56, 0, UTC),
        TIMESTAMP(3),
        "2021-09-24 22:14:56.000",
        SH,
    ),
    (
        "cast",
        TIMESTAMP(6),
        dt.datetime(2021, 9, 24, 12, 34, 56, 123456),
        TIMESTAMP_LTZ(4),
        "2021-09-24 12:34:56.1234",
        SH,
    ),
    # constructed -> constructed, part by part
    ("cast", ARRAY(STRING()), ["1", "2", "3"], ARRAY(INT()), "[1, 2, 3]"),  # IT
    ("cast", ARRAY(INT()), [1, None, 2], ARRAY(BIGINT()), "[1, NULL, 2]"),  # IT
    (
        "cast",
        ARRAY(TIMESTAMP(4)),
        [dt.datetime(2021, 9, 24, 12, 34, 56, 123400), None],
        ARRAY(STRING()),
        "[2021-09-24 12:34:56.1234, NULL]",
    ),  # IT
    ("cast", MAP(INT(), INT()), [(1, 2)], MAP(STRING(), STRING()), "{1=2}"),  # IT
    (
        "cast",
        ROW([("x", INT()), ("y", STRING())]),
        {"x": 10, "y": "12"},
        ROW([("a", BIGINT()), ("b", INT())]),
        "(10, 12)",
    ),
    ("cast", ROW([("x", INT()), ("y", STRING())]), {"x": 10, "y": "zz"}, ROW([("a", BIGINT()), ("b", INT())]), FAIL),
    ("try_cast", ROW([("x", INT()), ("y", STRING())]), {"x": 1, "y": "zz"}, ROW([("a", BIGINT()), ("b", INT())]), None),
    ("try_cast", ARRAY(STRING()), ["1", "x"], ARRAY(INT()), None),  # NULL as a whole (FLINK-31300)
    ("cast", INTERVAL_YEAR_MONTH(), 14, INTERVAL_YEAR_MONTH(), "+1-02"),
]


def _ids(case: tuple[Any, ...]) -> str:
    fn, src, value, dst = case[:4]
    return f"{fn}({src}:{value!r}->{dst})"


@pytest.mark.parametrize("case", VALUES, ids=[_ids(c) for c in VALUES])
def test_cast_values(case: tuple[Any, ...]) -> None:
    fn, src, value, dst, expected = case[:5]
    zone = case[5] if len(case) > 5 else "UTC"
    cols = [([value], src)]
    (ref,) = refs(cols)
    expr = call(fn, ref, type=dst)
    if expected == FAIL:
        with pytest.raises(EvaluationError):
            run(expr, cols, time_zone=zone)
    else:
        assert run(expr, cols, time_zone=zone) == [expected]


@pytest.mark.parametrize(
    ("value", "dst", "message"),
    [
        ("abc", INT(), "java.lang.NumberFormatException: For input string: 'abc'"),  # CORPUS
        (" true ", BOOLEAN(), "Cannot parse ' true ' as BOOLEAN."),  # CORPUS
        ("2024-02-30", DATE(), "java.time.DateTimeException: For input string: '2024-02-30'."),  # CORPUS
        ("not a date", TIMESTAMP(3), "Text 'not a date' could not be parsed"),  # CORPUS
    ],
)
def test_failures_read_as_flinks(value: str, dst: DataType, message: str) -> None:
    """A failing CAST names the value with the text of the exception Flink's parser throws."""
    cols = [([value], STRING())]
    (ref,) = refs(cols)
    with pytest.raises(EvaluationError) as info:
        run(call("cast", ref, type=dst), cols)
    assert message in str(info.value)


def test_lower_precision_cuts_the_value() -> None:
    """Compared after the CAST, a TIMESTAMP(0) / TIME(0) has no fraction left; a rowtime
    attribute keeps its milliseconds (TimestampToTimestampCastRule's time-attribute rule)."""
    ts = dt.datetime(2021, 9, 24, 12, 34, 56, 789000)
    cols = [([ts], TIMESTAMP(3)), (["12:34:56.789"], STRING())]
    t, s = refs(cols)
    as_ms = call("cast", call("cast", t, type=TIMESTAMP(0)), type=TIMESTAMP(3))
    assert run(as_ms, cols) == ["2021-09-24 12:34:56.000"]
    time_ms = call("cast", call("cast", call("cast", s, type=TIME(0)), type=TIMESTAMP(3)), type=STRING())
    assert run(time_ms, cols) == ["1970-01-01 12:34:56.000"]
    rowtime = [([ts], TIMESTAMP(3).as_time_attr("ROWTIME"))]
    (r,) = refs(rowtime)
    kept = call("cast", call("cast", r, type=TIMESTAMP(0)), type=TIMESTAMP(3))
    assert run(kept, rowtime) == ["2021-09-24 12:34:56.789"]


def test_every_accepted_primitive_pair_has_a_value_case() -> None:
    """The value table covers each accepted pair of type classes at least once, so no pair
    is accepted at planning time and then fails as unsupported at run time."""
    kinds = {
        "TINYINT": "int",
        "SMALLINT": "int",
        "INT": "int",
        "BIGINT": "int",
        "CHAR": "text",
        "VARCHAR": "text",
        "BINARY": "bytes",
        "VARBINARY": "bytes",
    }
    seen = {(kinds.get(c[1].name, c[1].name), kinds.get(c[3].name, c[3].name)) for c in VALUES}
    accepted = {
        (kinds.get(s, s), kinds.get(d, d))
        for d, sources in ALLOWED.items()
        for s in sources
        if s != d and (kinds.get(s, s), kinds.get(d, d)) != ("int", "int") and kinds.get(s, s) != kinds.get(d, d)
    }
    assert accepted - seen == set()
