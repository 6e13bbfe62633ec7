"""Java parsing rules of the text → Arrow converters."""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa

from runtime.connectors.formats.convert import CSV, ISO, SQL, convert_strings
from runtime.types import BIGINT, BOOLEAN, DATE, DECIMAL, DOUBLE, INT, SMALLINT, TIME, TIMESTAMP, TIMESTAMP_LTZ


def conv(values, dtype, style=CSV):
    arr, bad = convert_strings(pa.array(values, pa.string()), dtype, style)
    return arr.to_pylist(), bad.tolist()


def test_integers_follow_parse_int():
    vals, bad = conv(["1", " +5 ", "", "1.5", None, "2147483648", "-2147483648", "x"], INT())
    assert vals == [1, 5, None, None, None, None, -2147483648, None]
    assert bad == [False, False, True, True, False, True, False, True]


def test_bigint_and_smallint_ranges():
    assert conv(["9223372036854775807", "9223372036854775808"], BIGINT()) == ([2**63 - 1, None], [False, True])
    assert conv(["32767", "32768"], SMALLINT()) == ([32767, None], [False, True])


def test_boolean_is_parse_boolean():
    assert conv(["true", " TRUE ", "", "yes", "1", None], BOOLEAN()) == (
        [True, True, False, False, False, None],
        [False] * 6,
    )


def test_double_syntax():
    vals, bad = conv(["1e3", "NaN", "-Infinity", "1.5f", "", ".5", "nan", "2."], DOUBLE())
    assert vals[0] == 1000.0 and vals[2] == float("-inf") and vals[3] == 1.5 and vals[5] == 0.5 and vals[7] == 2.0
    assert vals[1] != vals[1]  # NaN
    assert bad == [False, False, False, False, True, False, True, False]


def test_decimal_rounds_half_up_and_overflows_to_null():
    vals, bad = conv(["1.2345", "-0.0005", "99.9999", "0", "-2.2345", "1e2", "", "99999999.9999", ".5"], DECIMAL(10, 3))
    assert vals == [
        Decimal("1.235"),
        Decimal("-0.001"),
        Decimal("100.000"),
        Decimal("0.000"),
        Decimal("-2.235"),
        Decimal("100.000"),
        None,
        None,  # 100000000.000 needs 12 digits: NULL, not an error
        Decimal("0.500"),
    ]
    assert bad == [False] * 6 + [True] + [False, False]


def test_decimal_round_up_to_overflow():
    assert conv(["99.995", "-2.25"], DECIMAL(4, 2))[0] == [None, Decimal("-2.25")]
    assert conv(["-2.25"], DECIMAL(4, 1))[0] == [Decimal("-2.3")]


def test_csv_dates_roll_over_and_json_dates_are_strict():
    vals, bad = conv(["2024-02-29", "2024-1-5", "2023-02-30", "x"], DATE(), CSV)
    assert [str(v) if v else None for v in vals] == ["2024-02-29", "2024-01-05", "2023-03-02", None]
    assert bad == [False, False, False, True]
    assert conv(["2024-1-5", "2023-02-30", "2023-02-28"], DATE(), SQL)[1] == [True, True, False]


def test_timestamps():
    vals, bad = conv(
        ["2024-01-01 10:00:01.500", " 1969-12-31 23:59:59.5", "2024-01-01T00:00:00", ""], TIMESTAMP(3), CSV
    )
    assert [str(v) if v else None for v in vals] == [
        "2024-01-01 10:00:01.500000",
        "1969-12-31 23:59:59.500000",
        None,
        None,
    ]
    assert bad == [False, False, True, True]
    # JSON SQL standard: seconds required, no 'T'; ISO: 'T', seconds optional
    assert conv(["2000-02-29 00:00:00", "2024-01-01T00:00"], TIMESTAMP(3), SQL)[1] == [False, True]
    assert conv(["2024-01-01T00:00", "2024-01-01 00:00:00"], TIMESTAMP(3), ISO)[1] == [False, True]
    vals, bad = conv(["2024-01-01 00:00:01.123456Z", "2024-01-01 00:00:01"], TIMESTAMP_LTZ(6), SQL)
    assert bad == [False, True]
    assert vals[0].microsecond == 123456


def test_time_precision_truncates():
    vals, bad = conv(["10:15", "10:15:30.129", "25:00"], TIME(2), CSV)
    assert [str(v) if v else None for v in vals] == ["10:15:00", "10:15:30.120000", None]
    assert bad == [False, False, True]
